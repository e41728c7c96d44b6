"""Reading a deadlock off a finished run (the operator wall, Paper A §6.3).

Joint learning of a large operator and its iteration can stall: the model learns to copy g_1
(position 1) and nothing else, the loss sits near the cost of guessing every later product
uniformly, and the curriculum never moves. We call a run DEADLOCKED when all three hold, measured
rather than assumed from a step count:
  1. plateau: over the last `window` training steps the logged loss improved by < 2 % and the
     curriculum was not promoted (`train.plateaued`; a run stopped by `plateau_stop` has this);
  2. loss near the operator's entropy: final logged loss >= `entropy_frac` x the loss of a model
     that knows position 1 and guesses uniformly after, ((n-1)/n) ln|G| at the trained length n;
  3. accuracy stuck: accuracy at positions >= 2 (at the trained length, after T_train loops)
     below `stuck_acc`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..train import plateaued


@dataclass
class DeadlockReading:
    deadlocked: bool
    plateau: bool
    loss: float                # last logged training loss
    entropy_level: float       # ((n-1)/n) ln|G| at the length the curriculum stood at
    later_position_acc: float  # mean accuracy at positions >= 2 (in-distribution test set)
    reached_length: int
    steps: int


def operator_entropy_level(n_classes: int, length: int) -> float:
    """Mean per-position loss of a model that gets position 1 right and guesses uniformly after."""
    return (length - 1) / length * math.log(n_classes)


def deadlock(metrics: dict, n_classes: int, position_acc, window: int = 2000, entropy_frac: float = 0.8,
             stuck_acc: float = 0.2) -> DeadlockReading:
    """`metrics`: a stored run's metrics (its training log, promotions, reached length, steps);
    `position_acc`: per-position accuracy of the finished model at its training length."""
    log = metrics["log"]            # one entry per 50 steps; a shorter run has none and cannot plateau
    plateau = metrics.get("plateau_at") is not None or plateaued(log, window, metrics.get("promotions", []))
    length = int(metrics["reached_length"])
    level = operator_entropy_level(n_classes, max(length, 2))
    loss = float(log[-1]["loss"]) if log else float("nan")
    later = float(np.mean(np.asarray(position_acc, float)[1:]))
    dead = plateau and bool(loss >= entropy_frac * level) and later < stuck_acc
    return DeadlockReading(bool(dead), bool(plateau), loss, level, later, length, int(metrics["steps"]))
