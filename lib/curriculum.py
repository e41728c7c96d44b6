"""The length curriculum training follows: which word length the next batch has.

Group products trained at their full length from the start, or under a plain length curriculum, stall at
chance on a CPU budget (S4, n = 8: 2,500 steps of a plain 2 -> 8 curriculum learned nothing); the operator-first
curriculum begins at length 2 (the Cayley table) and promotes on accuracy.
"""
from __future__ import annotations

import numpy as np
import torch


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
