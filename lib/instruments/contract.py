"""A run read at its own contract: what it learned (accuracy per loop at its training length and loops,
on its in-distribution probe set) and how far that carries in length at its own price (the loops it
gets at each length, `RunConfig.loops_at`; no search over loops). Sections 04 and 05 read their runs so.
"""
from __future__ import annotations

from ..probes import probe_seed
from . import extrapolation, head


def at_contract(run, count: int = 512) -> head.LoopAccuracy:
    """Accuracy after each of the run's T_train loops at its training length, on its in-distribution
    probe set: what the run learned."""
    c = run.config
    return head.accuracy_by_loops(run.model, c.task_obj(), c.n_train, c.T_train, count=count,
                                  seed=probe_seed("in_distribution", c.seed), streaming=c.streaming)


def final_accuracy_by_length(run, ns, count: int = 512) -> dict[int, float]:
    """Whole-word accuracy at each length n after exactly the loops the run gets there
    (`cfg.loops_at(n)`), on the extrapolation probe set of that length: how far the learned
    algorithm carries at its own price (no search over loops)."""
    return {n: float(a.seq_acc[-1]) for n, a in extrapolation.accuracy_by_length(run, ns, 1.0, count).items()}
