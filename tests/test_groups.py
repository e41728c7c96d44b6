import itertools

import numpy as np
import pytest

from lib import groups


@pytest.mark.parametrize("name,order", [("Z60", 60), ("S4", 24), ("S5", 120), ("A5", 60), ("S3", 6), ("A4", 12)])
def test_orders(name, order):
    g = groups.by_name(name)
    assert g.order == order == groups.expected_order(name)


@pytest.mark.parametrize("name", ["Z60", "S4", "S5", "A5"])
def test_group_axioms(name):
    g = groups.by_name(name)
    t, e, inv = g.table, g.identity, g.inverses
    m = g.order
    # closure and Latin square (each row/column a permutation of the elements)
    assert t.min() >= 0 and t.max() < m
    assert all(len(set(row)) == m for row in t) and all(len(set(col)) == m for col in t.T)
    # identity and inverses
    assert np.array_equal(t[e], np.arange(m)) and np.array_equal(t[:, e], np.arange(m))
    assert np.all(t[np.arange(m), inv] == e) and np.all(t[inv, np.arange(m)] == e)
    # associativity, exhaustively
    assert np.array_equal(t[t[:, :, None], np.arange(m)[None, None, :]], t[np.arange(m)[:, None, None], t[None, :, :]])


def test_composition_convention_apply_right_first():
    g = groups.S(3)
    perms = list(g.elements)
    for i, a in enumerate(perms):
        for j, b in enumerate(perms):
            ab = perms[g.table[i, j]]
            assert all(ab[x] == a[b[x]] for x in range(3))      # (a∘b)(x) = a(b(x))


def test_commutativity():
    assert groups.Z(60).is_abelian()
    assert not groups.S(4).is_abelian() and not groups.A(5).is_abelian()


def test_a5_is_the_even_permutations_of_s5():
    a5 = groups.A(5)
    def parity(p):
        return sum(p[i] > p[j] for i in range(5) for j in range(i + 1, 5)) % 2
    evens = [p for p in itertools.permutations(range(5)) if parity(p) == 0]
    assert sorted(a5.elements) == sorted(evens) and len(evens) == 60


def _normal_closure(g, gens):
    """Smallest normal subgroup containing gens."""
    t, inv = g.table, g.inverses
    sub = {g.identity}
    frontier = set(gens)
    while frontier:
        sub |= frontier
        new = set()
        for x in sub:
            for y in sub:
                new.add(int(t[x, y]))
            for c in range(g.order):
                new.add(int(t[t[c, x], inv[c]]))
        frontier = new - sub
    return sub


def test_a5_is_simple():
    # every non-identity element's normal closure is the whole group => no proper nontrivial normal subgroup
    a5 = groups.A(5)
    for x in range(a5.order):
        if x != a5.identity:
            assert len(_normal_closure(a5, [x])) == 60


def test_s4_has_proper_normal_subgroups():   # the same check finds V4 and A4 in S4: it can fail
    s4 = groups.S(4)
    sizes = {len(_normal_closure(s4, [x])) for x in range(s4.order) if x != s4.identity}
    assert sizes == {4, 12, 24}


@pytest.mark.parametrize("bad", ["X5", "S", "s4", "Z0", "S9", ""])
def test_unknown_group_names(bad):
    with pytest.raises(ValueError, match="n|group"):
        groups.by_name(bad)
