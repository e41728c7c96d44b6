"""Portability (Paper A §7): reading a run's speed under its contract, and when a warm-started run
counts as having carried its algorithm into a new contract.

A contract (n, T) prices speed at its demand n / T. A run warm-started from contract A into B
*transferred* when it learned B (solved fraction >= learned_acc in distribution) and its v-hat was
re-priced: log-closer to B's demand than to A's. Learning B without re-pricing (e.g. a speed that
stays at A's price) is not counted; neither is a re-priced speed on a contract not learned.
"""
from __future__ import annotations

import math

from . import head


def contract_reading(run, count: int = 512) -> dict:
    """Solved fraction and v-hat (from tau and from the frontier) at the run's own contract."""
    c = run.config
    r = head.tau(run.model, c.task_obj(), c.n_train, c.T_train, count=count, seed=1000 + c.seed)
    ok = r.n_solved >= head.MIN_SOLVED
    return dict(acc=r.solved_fraction, v=r.v_tau.v if ok else float("nan"),
                v_frontier=r.v_frontier if ok else float("nan"), demand=c.demand)


def transferred(after: dict, previous_demand: float, learned_acc: float) -> bool:
    """The stated criterion: learned the new contract, and v-hat log-closer to its demand than to the
    previous contract's demand."""
    v = after["v"]
    if not after["acc"] >= learned_acc or not (math.isfinite(v) and v > 0):
        return False
    return abs(math.log(v / after["demand"])) < abs(math.log(v / previous_demand))
