"""Finite groups as Cayley tables over integer elements.

Convention, stated once for the whole project: elements of S(n) are permutations of
{0, ..., n-1} stored as tuples p with p[x] the image of x, and composition is

    (a ∘ b)(x) = a(b(x))          i.e. apply b first, then a.

`table[a, b]` is the index of a ∘ b.  Group prefix products in `tasks.py` use the same table:
p_i = g_1 ∘ g_2 ∘ ... ∘ g_i = table[p_{i-1}, g_i].
"""
from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True, eq=False)
class Group:
    name: str
    table: np.ndarray                 # (order, order) int64, table[a, b] = a ∘ b
    elements: tuple = field(repr=False)  # what each integer stands for (int or permutation tuple)

    @property
    def order(self) -> int:
        return self.table.shape[0]

    @property
    def identity(self) -> int:
        for e in range(self.order):
            if np.array_equal(self.table[e], np.arange(self.order)):
                return e
        raise ValueError(f"{self.name} has no identity")

    @property
    def inverses(self) -> np.ndarray:
        e = self.identity
        inv = np.argmax(self.table == e, axis=1)
        return inv

    def compose(self, a: int, b: int) -> int:
        return int(self.table[a, b])

    def is_abelian(self) -> bool:
        return bool(np.array_equal(self.table, self.table.T))


def Z(n: int) -> Group:
    """Cyclic group of order n: integers mod n under addition."""
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"Z(n): n must be an integer >= 1, got {n!r}")
    a = np.arange(n)
    return Group(f"Z{n}", (a[:, None] + a[None, :]) % n, tuple(range(n)))


def _permutation_group(name: str, perms: list[tuple[int, ...]]) -> Group:
    index = {p: i for i, p in enumerate(perms)}
    m = len(perms)
    table = np.empty((m, m), dtype=np.int64)
    for i, a in enumerate(perms):
        for j, b in enumerate(perms):
            table[i, j] = index[tuple(a[b[x]] for x in range(len(a)))]   # (a∘b)(x) = a(b(x))
    return Group(name, table, tuple(perms))


def _is_even(p: tuple[int, ...]) -> bool:
    inversions = sum(1 for i in range(len(p)) for j in range(i + 1, len(p)) if p[i] > p[j])
    return inversions % 2 == 0


def S(n: int) -> Group:
    """Symmetric group on n points; elements in lexicographic order (index 0 = identity)."""
    if not isinstance(n, int) or not 1 <= n <= 6:
        raise ValueError(f"S(n): n must be an integer in 1..6 (order n! table), got {n!r}")
    return _permutation_group(f"S{n}", list(itertools.permutations(range(n))))


def A(n: int) -> Group:
    """Alternating group: the even permutations of S(n), in the same order."""
    if not isinstance(n, int) or not 1 <= n <= 6:
        raise ValueError(f"A(n): n must be an integer in 1..6, got {n!r}")
    return _permutation_group(f"A{n}", [p for p in itertools.permutations(range(n)) if _is_even(p)])


@functools.lru_cache(maxsize=None)
def by_name(name: str) -> Group:
    """'Z60', 'S4', 'S5', 'A5', ... -> Group."""
    makers = {"Z": Z, "S": S, "A": A}
    if len(name) >= 2 and name[0] in makers and name[1:].isdigit():
        return makers[name[0]](int(name[1:]))
    raise ValueError(f"group: unknown group {name!r}; allowed: Z<n>, S<n>, A<n> (e.g. Z60, S4, S5, A5)")


def expected_order(name: str) -> int:
    """Order from the group's definition, for checks: |Z_n| = n, |S_n| = n!, |A_n| = n!/2."""
    k = int(name[1:])
    return {"Z": k, "S": math.factorial(k), "A": max(1, math.factorial(k) // 2)}[name[0]]
