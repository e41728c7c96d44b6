"""Per-position sequence tasks, their seeded generators and the length curriculum.

Every task maps an input word x_1..x_n to per-position targets y_1..y_n where y_i depends only
on x_1..x_i (so a causal model can compute it). The model sees `[BOS, x_1, ..., x_n]`: without a
start token, NoPE + causal attention cannot tell position 1 of `1 1` from position 2 (both see the
same multiset), which caps prefix parity at 75 % sequence accuracy (shared/notes/cpu-measurements.md).
The BOS position has no target (label IGNORE).

Tasks
- "parity":      y_i = x_1 xor ... xor x_i                       (pilot; constant-depth shortcut exists)
- "increment":   LSB-first binary x + 1: y_i = x_i xor c_i, c_1 = 1, c_{i+1} = x_i and c_i.
                 Output has n bits; the carry out of the last bit is dropped (per-position task).
- "Z60", "S4", "S5", "A5", ... (any name `groups.by_name` knows):
                 prefix products y_i = x_1 ∘ ... ∘ x_i in the convention of `groups.py`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from . import groups

IGNORE = -100          # cross-entropy ignore index for positions without a target
TASK_NAMES = ("parity", "increment")   # plus any group name, e.g. "S4"


@dataclass(frozen=True)
class Task:
    name: str
    n_symbols: int     # input alphabet size (BOS is the extra id n_symbols)
    n_classes: int     # output classes

    @property
    def bos(self) -> int:
        return self.n_symbols

    @property
    def vocab_size(self) -> int:
        return self.n_symbols + 1

    def targets(self, x: torch.Tensor) -> torch.Tensor:
        """x: (B, n) int64 symbols -> (B, n) int64 per-position targets."""
        if self.name == "parity":
            return torch.cumsum(x, dim=1) % 2
        if self.name == "increment":
            out = torch.empty_like(x)
            carry = torch.ones_like(x[:, 0])
            for i in range(x.shape[1]):
                out[:, i] = x[:, i] ^ carry
                carry = x[:, i] & carry
            return out
        table = torch.as_tensor(groups.by_name(self.name).table)
        out = torch.empty_like(x)
        acc = x[:, 0]
        out[:, 0] = acc
        for i in range(1, x.shape[1]):
            acc = table[acc, x[:, i]]
            out[:, i] = acc
        return out

    def sample(self, batch: int, n: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """A batch of uniform random words of length n.

        Returns (tokens, labels), both (batch, n + 1): tokens = [BOS, x], labels = [IGNORE, y].
        """
        x = torch.randint(0, self.n_symbols, (batch, n), generator=generator)
        return with_bos(self, x), with_ignore(self.targets(x))


def with_bos(task: Task, x: torch.Tensor) -> torch.Tensor:
    return torch.cat([torch.full_like(x[:, :1], task.bos), x], dim=1)


def with_ignore(y: torch.Tensor) -> torch.Tensor:
    return torch.cat([torch.full_like(y[:, :1], IGNORE), y], dim=1)


def make_task(name: str) -> Task:
    if name in ("parity", "increment"):
        return Task(name, 2, 2)
    try:
        g = groups.by_name(name)
    except ValueError:
        raise ValueError(f"task: unknown task {name!r}; allowed: 'parity', 'increment', or a group "
                         "name Z<n> / S<n> / A<n> such as 'Z60', 'S4', 'S5', 'A5'") from None
    return Task(name, g.order, g.order)


def test_set(task: Task, n: int, count: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A fixed evaluation set: `count` words of length n drawn from their own seeded stream."""
    g = torch.Generator().manual_seed(1_000_003 * seed + n)
    return task.sample(count, n, g)


class LengthCurriculum:
    """Length curriculum with promotion on accuracy.

    Training starts on words of length `start` (length 2 = the operator itself, the Cayley table,
    for group tasks: the "operator-first" start that makes group products trainable on a CPU) and
    adds `step` to the length whenever the accuracy at the last position, averaged over the last
    `window` training batches, reaches `promote_acc` (`first_acc` for the first stage). It never
    exceeds `final`. State is a plain dict so checkpoints can store it.
    """

    def __init__(self, final: int, start: int = 2, step: int = 1, promote_acc: float = 0.95,
                 first_acc: float = 0.98, window: int = 20):
        self.final, self.step, self.window = final, step, window
        self.promote_acc, self.first_acc = promote_acc, first_acc
        self.length = min(start, final)
        self.history: list[float] = []
        self.promotions: list[int] = []   # training step at which each promotion happened

    @property
    def done(self) -> bool:
        return self.length >= self.final

    def update(self, step: int, last_position_acc: float) -> bool:
        """Record one batch's last-position accuracy; return True if the length was promoted."""
        self.history = (self.history + [float(last_position_acc)])[-self.window:]
        threshold = self.first_acc if not self.promotions else self.promote_acc
        if (not self.done and len(self.history) == self.window
                and float(np.mean(self.history)) >= threshold):
            self.length = min(self.final, self.length + self.step)
            self.history = []
            self.promotions.append(step)
            return True
        return False

    def windowed_acc(self) -> float:
        return float(np.mean(self.history)) if self.history else 0.0

    def state_dict(self) -> dict:
        return {"length": self.length, "history": list(self.history), "promotions": list(self.promotions)}

    def load_state_dict(self, state: dict) -> None:
        self.length = int(state["length"])
        self.history = [float(a) for a in state["history"]]
        self.promotions = [int(s) for s in state["promotions"]]


LENGTH_DISTRIBUTIONS = ("max", "uniform")


def draw_length(distribution: str, max_len: int, generator: torch.Generator, min_len: int = 1) -> int:
    """Length of the next training batch (one length per batch, so batches stay rectangular).

    "max": always the curriculum's current length (causal attention trains every shorter prefix
    at once, since each position carries its own target); "uniform": uniform in [min_len, max_len].
    """
    if distribution == "max":
        return max_len
    if distribution == "uniform":
        lo = min(min_len, max_len)
        return int(torch.randint(lo, max_len + 1, (1,), generator=generator))
    raise ValueError(f"length distribution: unknown {distribution!r}; allowed: {LENGTH_DISTRIBUTIONS}")
