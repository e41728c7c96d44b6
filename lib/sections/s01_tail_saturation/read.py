"""Tail saturation over a population of trained models (Paper A §4): past the fixed point a trained
loop converges to, does any tail metric track out-of-distribution accuracy, and does Proposition 1
hold?

The population is one task family (S4 prefix products): models of the settled-loops recipe (seeds x
contracts), with the fixed-T recipe's models as a contrast (their loops were never asked to hold an
answer past the budget and reach no fixed point).

- `population_row`: one model's in-distribution solved fraction (at T_train), its OOD accuracy (the
  best whole-word accuracy at ood_factor x n_train over a scan of long_factor x the loops the run
  gets there, `extrapolation.scan_loops`, so a model is not penalised for needing more loops on a
  longer input), its convergence over conv_factor x T_train loops by every criterion of
  `fixedpoint.CRITERIA`, whether it reaches a fixed point (raw criterion on >= REACHED of its inputs),
  and the tail metrics twice: at the budget T_train (what a tail reading of an
  unsettled loop sees) and past the raw fixed point tau* (`tail.metrics_after_fixed_point`: the tail
  Proposition 1 speaks of; nan without a fixed point);
- `correlations`: Spearman's rho of each tail metric with OOD accuracy, with bootstrap intervals,
  over the models that solve their training distribution and reach a fixed point;
- `proposition1_checks`: Prop. 1 on every model, over conv_factor x T_train loops;
- `saturation_results`: the ledger's numbers. The fixed-point verdict uses the raw relative step
  (Proposition 1 is about a fixed point of G itself); the other criteria are shown beside it.
"""
from __future__ import annotations

import numpy as np
import torch

from ... import reading_cache, stats
from ...config import run_id
from ...instruments import head, tail
from ...instruments.extrapolation import scan_loops
from ...instruments.fixedpoint import convergence, convergence_all, states
from ...instruments.head import LEARNED      # in-distribution solved fraction for a model to count as fitting its data
from ...probes import probe_seed, probe_set
from ...rules import premise_met

METRICS = ("skip1", "jac_align", "cosine", "cka", "aa")
REACHED = 0.5          # share of inputs whose loop settles by the raw criterion (`fixedpoint.convergence`)
LONG_WINDOW = 128      # loops every model gets in the one-window reading (R37-long-window), whatever its T_train
                       # for a model to count as reaching a fixed point: the recipe search's threshold


def population_row(run, recipe: str, ood_factor: int, long_factor: int, conv_factor: int, eval_count: int,
                   probes: int, conv_inputs: int = 128, budget_decimals: int | None = tail.DECIMALS) -> dict:
    c = run.config
    task = c.task_obj()
    tokens, labels = probe_set(task, "tail", c.seed, c.n_train, eval_count)
    n_ood = ood_factor * c.n_train
    ood = head.accuracy_by_loops(run.model, task, n_ood, scan_loops(c, n_ood, long_factor), count=eval_count,
                                 seed=probe_seed("contest_target", 0))
    # after the OOD scan, not beside it (peak memory): the loop run once, every reading below shares it
    hs = states(run.model, tokens, conv_factor * c.T_train)
    with torch.no_grad():
        solved = (run.model.decode(hs[c.T_train - 1]).argmax(-1)[:, 1:] == labels[:, 1:]).all(1)
    conv = convergence_all(hs[:, :conv_inputs])
    long = hs[:LONG_WINDOW, :conv_inputs] if hs.shape[0] >= LONG_WINDOW else states(run.model, tokens[:conv_inputs], LONG_WINDOW)
    reached_long = convergence(long, "raw").reached_fraction >= REACHED
    at_budget = tail.metrics_row(run.model, tokens, c.T_train, solved, probes, long_factor * c.T_train, states=hs,
                                 decimals=budget_decimals)
    after = tail.metrics_after_fixed_point(run.model, tokens, c.T_train, solved, probes, conv_factor, states=hs)
    return dict(run=run_id(c), model=f"{recipe} {c.contract} seed {c.seed}", recipe=recipe, demand=c.demand, seed=c.seed,
                T_train=c.T_train,
                in_acc=float(solved.float().mean()), ood_acc=float(ood.seq_acc.max()),
                converged={k: v.reached_fraction for k, v in conv.items()}, tau_star=after["tau_star"],
                fixed_fraction=after["fixed_fraction"],
                reached=after["tau_star"] is not None and conv["raw"].reached_fraction >= REACHED,
                reached_long_window=bool(reached_long),
                budget={m: at_budget[m] for m in METRICS}, **{m: after[m] for m in METRICS})


# A model's row is kept beside its run (`reading_cache`: read again only when the weights, this version or
# the arguments change): the rows are most of 01's time, and a stored run's never change.
ROW_VERSION = 1


def kept_population_row(run, recipe: str, ood_factor: int, long_factor: int, conv_factor: int, eval_count: int,
                        probes: int, conv_inputs: int = 128) -> dict:
    """`population_row`, kept beside the stored run."""
    args = dict(recipe=recipe, ood_factor=ood_factor, long_factor=long_factor, conv_factor=conv_factor,
                eval_count=eval_count, probes=probes, conv_inputs=conv_inputs)
    return reading_cache.reading(run, "tail-population-row", ROW_VERSION, lambda: population_row(run, **args),
                                 params=args)


def correlations(rows: list[dict], recipe: str = "settled", metrics_at: str = "fixed point") -> tuple[list[dict], dict]:
    """(the rows of `recipe` that solve their training distribution and have the metrics, metric ->
    Spearman estimate of metric against OOD accuracy over them). metrics_at: "fixed point" (read past
    tau*; models without a fixed point have none) or "budget" (read at T_train)."""
    value = (lambda r, m: r[m]) if metrics_at == "fixed point" else (lambda r, m: r["budget"][m])  # noqa: E731
    fitted = [r for r in rows if r["recipe"] == recipe and r["in_acc"] >= LEARNED
              and (r["reached"] or metrics_at == "budget") and all(np.isfinite(value(r, m)) for m in METRICS)]
    ood = [r["ood_acc"] for r in fitted]
    if len(fitted) < 3:                  # a rank correlation over fewer than 3 models is undefined
        return fitted, {m: stats.Estimate(float("nan"), float("nan"), float("nan"), len(fitted)) for m in METRICS}
    return fitted, {m: stats.spearman([value(r, m) for r in fitted], ood) for m in METRICS}


def proposition1_checks(runs, conv_factor: int, count: int = 64) -> list[tuple]:
    """(config, Prop1Check) for every run whose loop is one fixed map G, over conv_factor x T_train loops."""
    out = []
    for run in runs:
        c = run.config
        if c.streaming:           # the streaming schedule reveals tokens late: its loop is not one map
            continue
        tokens, _ = probe_set(c.task_obj(), "prop1", 0, c.n_train, count)
        out.append((c, tail.proposition1(run.model, tokens, conv_factor * c.T_train, tol=1e-3)))
    return out


def rows_table(rows: list[dict]) -> str:
    """One line per model: solved fraction, OOD accuracy, converged share by criterion, tau*, and the
    tail metrics past tau* (or '-' without a fixed point) and at the budget."""
    crit = list(rows[0]["converged"]) if rows else []
    head_ = (f"{'model':42s} {'in':>4s} {'OOD':>5s} " + " ".join(f"{k[:4]:>4s}" for k in crit) + f" {'tau*':>4s}  "
             + " ".join(f"{m:>7s}" for m in METRICS) + "   | at T_train: " + " ".join(f"{m:>7s}" for m in METRICS))
    lines = [head_]
    f = lambda x: "      -" if not np.isfinite(x) else f"{x:7.3f}"          # noqa: E731
    for r in rows:
        lines.append(f"{r['model']:42s} {r['in_acc']:4.2f} {r['ood_acc']:5.3f} "
                     + " ".join(f"{r['converged'][k]:4.2f}" for k in crit)
                     + f" {'-' if r['tau_star'] is None else r['tau_star']:>4}  " + " ".join(f(r[m]) for m in METRICS)
                     + "   |             " + " ".join(f(r["budget"][m]) for m in METRICS))
    return "\n".join(lines)


def proposition1_table(checks: list[tuple]) -> str:
    lines = []
    for c, check in checks:
        name = f"{c.contract} seed {c.seed} ({'fixed T' if c.schedule == 'fixed' else c.schedule})"
        if check.tau_star is None:
            lines.append(f"{name}: no fixed point within {check.T} loops: last relative step {check.last_step:.3g}, "
                         f"state norm grew {check.norm_growth:.3g}x -> premise of Prop. 1 absent")
        else:
            lines.append(f"{name}: fixed point from loop {check.tau_star} of {check.T}; skip preservation "
                         f"{check.skip_preservation:.2f}, Jacobian change {check.jacobian_change:.4f}, feature change "
                         f"{check.feature_change:.4f} -> {'holds' if check.holds else 'does not hold'}")
    return "\n".join(lines)


def significant(corr: dict) -> int:
    """How many metrics' 95 % intervals for rho exclude 0."""
    return int(sum(1 for e in corr.values() if np.isfinite(e.value) and (e.low > 0 or e.high < 0)))


def saturation_results(rows: list[dict], fitted: list[dict], corr: dict, checks: list[tuple],
                       recipe: str = "settled", at_budget: tuple[list[dict], dict] | None = None, k: int = 1) -> dict:
    """The ledger's numbers, on the population of `recipe`; the contrast's fixed points beside them.

    The tail claims are about the operating point: read at T_train, on the learned models whose fixed
    point comes by then (Proposition 1's premise, tau* <= T_train - k); the readings past tau* check
    Proposition 1 (they saturate there by construction). `at_budget`: `correlations(rows,
    metrics_at="budget")`."""
    population = [r for r in rows if r["recipe"] == recipe]
    learned = [r for r in population if r["in_acc"] >= LEARNED]
    reached = [r for r in population if r["reached"]]
    past = [r for r in learned if r["reached"]]
    # Prop. 1 is judged on the models that reach a fixed point (its premise), on their settled inputs
    reached_ids = {r["run"] for r in reached}
    p1_reached = [p for c, p in checks if run_id(c) in reached_ids and p.tau_star is not None]
    ood = [r["ood_acc"] for r in learned]
    others = [r for r in rows if r["recipe"] != recipe]
    return {
        "population": len(population), "learned": len(learned),
        "fixed_points_reached": f"{len(reached)}/{len(population)}",
        "fixed_point_fraction": round(len(reached) / len(population), 3) if population else None,
        "fixed_point_fraction_long_window": (round(float(np.mean([r["reached_long_window"] for r in population])), 3)
                                             if population else None),
        "converged_by_criterion": {k: round(float(np.mean([r["converged"][k] for r in population])), 3)
                                   for k in (population[0]["converged"] if population else ())},
        "contrast_fixed_points_reached": f"{sum(r['reached'] for r in others)}/{len(others)}",
        "skip1_min": round(min(r["skip1"] for r in past), 3) if past else None,
        "jac_align_min": round(min(r["jac_align"] for r in past), 3) if past else None,
        "correlated_models": len(fitted),
        "tail_max_abs_rho_significant": significant(corr) if len(fitted) >= 3 else None,
        "tail_rho": {m: (round(e.value, 2) if np.isfinite(e.value) else None) for m, e in corr.items()},
        "tail_rho_interval": {m: ([round(e.low, 2), round(e.high, 2)] if np.isfinite(e.value) else None)
                              for m, e in corr.items()},
        "ood_acc_range": [round(float(min(ood)), 3), round(float(max(ood)), 3)] if ood else None,
        "prop1_holds": f"{sum(p.holds for p in p1_reached)}/{len(p1_reached)}",
        # Prop. 1 is a theorem about loops that reach a fixed point: judged on those that do
        "prop1_fraction": round(sum(p.holds for p in p1_reached) / len(p1_reached), 3) if p1_reached else None,
        **_at_operating_point(learned, at_budget, k),
    }


def _at_operating_point(learned: list[dict], at_budget, k: int) -> dict:
    """The tail metrics at T_train (the operating point), with Proposition 1's premise per model."""
    premise = [r for r in learned if premise_met(r["tau_star"], r["T_train"], k)]
    out = {"premise_k": k, "premise_met": f"{len(premise)}/{len(learned)}",
           "tau_star_over_T_train": sorted(round(r["tau_star"] / r["T_train"], 2) for r in learned
                                           if r["tau_star"] is not None),
           "skip1_min_at_T_train": round(min(r["budget"]["skip1"] for r in learned), 3) if learned else None,
           "skip1_range_at_T_train": ([round(min(r["budget"]["skip1"] for r in learned), 2),
                                       round(max(r["budget"]["skip1"] for r in learned), 2)] if learned else None),
           "jac_align_min_at_T_train": round(min(r["budget"]["jac_align"] for r in learned), 3) if learned else None,
           "skip1_min_premise": round(min(r["budget"]["skip1"] for r in premise), 3) if premise else None,
           "jac_align_min_premise": round(min(r["budget"]["jac_align"] for r in premise), 3) if premise else None}
    if at_budget is not None:
        fitted, corr = at_budget
        out.update({"at_T_train_correlated_models": len(fitted),
                    "at_T_train_significant": significant(corr) if len(fitted) >= 3 else None,
                    "at_T_train_rho": {m: (round(e.value, 2) if np.isfinite(e.value) else None) for m, e in corr.items()},
                    "at_T_train_rho_interval": {m: ([round(e.low, 2), round(e.high, 2)] if np.isfinite(e.value)
                                                    else None) for m, e in corr.items()}})
    return out
