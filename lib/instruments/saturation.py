"""Tail saturation over a population of trained models (Paper A §4): does any tail metric track
out-of-distribution accuracy, and does Proposition 1 hold where a loop reaches a fixed point?

- `population_row`: one model's in-distribution solved fraction, its OOD accuracy (the best
  whole-word accuracy at ood_factor x n_train over test-time loops up to max(long_factor T_train,
  n_ood + 2), so a model is not penalised for needing more loops on a longer input), and the tail
  metrics (`tail.metrics_row`) at T_train on its solved inputs;
- `correlations`: Spearman's rho of each tail metric with OOD accuracy over the models that solve
  their training distribution (the question is which of the models that fit the data generalize);
- `proposition1_checks`: Prop. 1 on every model whose loop is one fixed map G (not streaming);
- `saturation_results`: the ledger's numbers.
"""
from __future__ import annotations

import numpy as np
import torch

from .. import stats
from ..probes import probe_seed, probe_set
from . import head, tail

METRICS = ("skip1", "jac_align", "cosine", "cka", "aa")


def population_row(run, ood_factor: int, long_factor: int, eval_count: int, probes: int) -> dict:
    c = run.config
    task = c.task_obj()
    tokens, labels = probe_set(task, "tail", c.seed, c.n_train, eval_count)
    with torch.no_grad():
        solved = (run.model(tokens, c.T_train, streaming=c.streaming).argmax(-1)[:, 1:] == labels[:, 1:]).all(1)
    n_ood = ood_factor * c.n_train
    T_max = max(long_factor * c.T_train, n_ood + 2)
    ood = head.accuracy_by_loops(run.model, task, n_ood, T_max, count=eval_count,
                                 seed=probe_seed("contest_target", 0), streaming=c.streaming)
    return dict(model=f"{c.task} n={c.n_train} T={c.T_train} {c.schedule}", in_acc=float(solved.float().mean()),
                ood_acc=float(ood.seq_acc.max()),
                **tail.metrics_row(run.model, tokens, c.T_train, solved, probes, long_factor * c.T_train, c.streaming))


def correlations(rows: list[dict], min_in_acc: float = 0.9) -> tuple[list[dict], dict]:
    """(the rows that solve their training distribution, metric -> Spearman estimate over them)."""
    fitted = [r for r in rows if r["in_acc"] >= min_in_acc]
    ood = [r["ood_acc"] for r in fitted]
    return fitted, {m: stats.spearman([r[m] for r in fitted], ood) for m in METRICS}


def proposition1_checks(runs, long_factor: int, count: int = 64) -> list[tuple]:
    """(config, Prop1Check) for every run whose loop is one fixed map (the streaming schedule reveals
    tokens late, so its loop is not)."""
    out = []
    for run in runs:
        c = run.config
        if c.streaming:
            continue
        tokens, _ = probe_set(c.task_obj(), "prop1", 0, c.n_train, count)
        out.append((c, tail.proposition1(run.model, tokens, long_factor * c.T_train, tol=1e-3)))
    return out


def saturation_results(rows: list[dict], fitted: list[dict], corr: dict, checks: list[tuple]) -> dict:
    prop1 = [p for _, p in checks]
    reached = sum(p.tau_star is not None for p in prop1)
    ood = np.array([r["ood_acc"] for r in fitted])
    return {
        "fixed_points_reached": f"{reached}/{len(prop1)}",
        "fixed_point_fraction": round(reached / len(prop1), 3) if prop1 else None,
        "skip1_min": round(min(r["skip1"] for r in fitted), 3) if fitted else None,
        "jac_align_min": round(min(r["jac_align"] for r in fitted), 3) if fitted else None,
        "tail_max_abs_rho_significant": int(sum(1 for e in corr.values()
                                                if np.isfinite(e.value) and (e.low > 0 or e.high < 0))),
        "tail_rho": {m: (round(e.value, 2) if np.isfinite(e.value) else None) for m, e in corr.items()},
        "ood_acc_range": [round(float(ood.min()), 3), round(float(ood.max()), 3)],
        "prop1_holds": f"{sum(p.holds for p in prop1)}/{len(prop1)}",
        # Prop. 1 is a theorem about loops that reach a fixed point: judged on those that do
        "prop1_fraction": round(sum(p.holds for p in prop1) / reached, 3) if reached else None,
    }
