"""Does a trained loop settle past its budget, and what does it compute there?

One reading per run, used by the recipe search (searches/settle_search.py) and the budget-law and
tail notebooks. On the contract (n_train, T_train) of a run:
- in-distribution whole-word accuracy after T, 2T and 4T loops (holding the answer past the budget);
- the head: tau(n_train, i), v-hat from tau and from the frontier;
- convergence of the loop map over `conv_factor` x T loops by each criterion of
  `fixedpoint.CRITERIA` (the raw relative step is the one Proposition 1 needs), with tau* per criterion;
- Proposition 1 checked past tau* on the inputs whose raw state settles (`tail.proposition1`: skip-k
  preservation, Jacobian and feature change);
- beyond the training length (n = factor x n_train for each factor): whole-word accuracy at the halting
  rule's T* = ceil(n / v-hat), at the contract's loops for that length, and at the best loop, and the
  late positions' (i > n_train) accuracy at T* and at the best loop.
"""
from __future__ import annotations

import math

from ..probes import probe_seed, probe_set
from . import head, tail
from .extrapolation import beyond_training
from .fixedpoint import convergence_all, states


def _f(x) -> float | None:
    x = float(x)
    return None if not math.isfinite(x) else float(f"{x:.4g}")


def settle_summary(model, cfg, count: int = 512, long_factor: int = 4, conv_factor: int = 8,
                   ood_factors=(1.5, 2.0), conv_inputs: int = 128, prop1_inputs: int = 32) -> dict:
    task, n, T = cfg.task_obj(), cfg.n_train, cfg.T_train
    acc = head.accuracy_by_loops(model, task, n, long_factor * T, count, seed=probe_seed("in_distribution", cfg.seed))
    t = head.tau(model, task, n, T, count, seed=probe_seed("in_distribution", cfg.seed))
    tokens, _ = probe_set(task, "tail", cfg.seed, n, conv_inputs)
    T_conv = conv_factor * T
    conv = convergence_all(states(model, tokens, T_conv))
    p1 = tail.proposition1(model, tokens[:prop1_inputs], T_conv)
    out = {"in_acc": {f"{k}T": _f(acc.at(k * T)) for k in (1, 2, long_factor)},
           "v_tau": _f(t.v_tau.v), "v_frontier": _f(t.v_frontier), "solved": _f(t.solved_fraction),
           "tau": [round(float(x), 2) for x in t.tau_curve],
           "convergence": {c: {"reached": _f(v.reached_fraction), "tau_star": _f(v.tau_star),
                               "last_step": _f(v.step[-1])} for c, v in conv.items()},
           "conv_loops": T_conv,
           "prop1": {"tau_star": p1.tau_star, "skip": _f(p1.skip_preservation), "jacobian_change": _f(p1.jacobian_change),
                     "norm_growth": _f(p1.norm_growth), "holds": bool(p1.holds)},
           "ood": {}}
    for factor in ood_factors:
        n_ood = int(round(factor * n))
        b = beyond_training(model, cfg, n_ood, t.v_tau.v, long_factor, count)
        out["ood"][str(n_ood)] = {
            "T_contract": b["T_contract"], "at_contract": _f(b["at_contract"][0]), "T_star": b["T_star"],
            "at_T_star": _f(b["at_T_star"][0]) if b["T_star"] else None, "best": _f(b["best_whole"][0]),
            "best_loop": b["best_whole"][1], "late_at_T_star": _f(b["at_T_star"][1]) if b["T_star"] else None,
            "late_best": _f(b["best_late"][0])}
    return out
