"""Seed contests (Paper A §8): per-seed head and tail metrics in distribution, the OOD target, and
how well each metric predicts the target across the seeds of one contest.

- head metrics, measured at (n_train, T_train): v-hat from tau and from the frontier; frontier completion
  F(T_train) / n_train; the slope of tau against position; the R^2 of the linear fit of tau at the last
  position against n (n_train/2 .. n_train); the price gap |log(v-hat / demand)|.
- the primary head metric, PRIMARY, named before any group-word-problem contest ran: the one the
  ledger's head row reads; the others are secondary, reported with the count chance alone would give.
- tail metrics past the loop's fixed point tau* (`tail.metrics_after_fixed_point`: conv_factor x
  T_train loops, on the inputs that settle by the raw criterion; nan for a seed without a fixed point):
  skip-one preservation (over the solved inputs), Jacobian alignment from tau* on, cross-step cosine and
  CKA at the last loop, asymptotic alignment; with the share of inputs read (`fixed_fraction`).
- target: whole-word accuracy at n_ood with the loops the run gets there (`cfg.loops_at`, the one rule).
- a metric is evaluated by Spearman's rho with the target and by its AUROC for "target >= threshold",
  over the seeds where the metric is finite (a seed whose head is unmeasurable, e.g. with too few
  solved inputs, drops out of that metric only).
"""
from __future__ import annotations


import numpy as np
import torch

from ... import reading_cache, stats
from ...stats import smallest_p      # the contests' power condition
from ...instruments import head, tail
from ...probes import probe_seed, probe_set

HEAD_METRICS = ("v_tau", "v_frontier", "completion", "tau_slope", "linear_r2", "price_gap")
TAIL_METRICS = ("skip1", "jac_align", "cosine", "cka", "aa")
# The primary head metric: v-hat from tau at n_train, the paper's head reading (the speed its halting rule
# uses), read over every position of the training length. The other candidate, the linear fit's R^2 of tau
# against n, is read at n_train/2..n_train only (five lengths in the quick profile), so a seed's fit
# quality rests on few points. When it was chosen and what was known then: paper/DECISIONS.md.
PRIMARY = "v_tau"


def seed_metrics(run, n_ood: int, T_ood: int, eval_count: int = 512, probes: int = 4, conv_factor: int = 8,
                 tail_count: int | None = None) -> dict:
    """One row of a contest table: in/OOD accuracy and every head metric (over `eval_count` inputs), and
    the tail metrics past the fixed point (run conv_factor x T_train loops) over `tail_count` inputs of
    the tail probe set (None: `eval_count`), on which the in-distribution accuracy is read too."""
    c = run.config
    task = c.task_obj()
    nan = float("nan")
    r = head.tau(run.model, task, c.n_train, c.T_train, count=eval_count, seed=probe_seed("in_distribution", c.seed))
    ok = r.n_solved >= head.MIN_SOLVED
    fit = head.tau_against_n(run.model, c, range(max(2, c.n_train // 2), c.n_train + 1), count=256,
                             min_solved=0).fit if ok else None
    tokens, labels = probe_set(task, "tail", c.seed, c.n_train, tail_count or eval_count)
    with torch.no_grad():
        solved = (run.model(tokens, c.T_train).argmax(-1)[:, 1:] == labels[:, 1:]).all(1)
    ood = head.accuracy_by_loops(run.model, task, n_ood, T_ood, count=eval_count,
                                 seed=probe_seed("contest_target", 0)).seq_acc[-1]
    return dict(
        seed=c.seed, task=c.task, in_acc=float(solved.float().mean()), ood_acc=float(ood),
        v_tau=r.v_tau.v if ok else nan, v_frontier=r.v_frontier if ok else nan,
        completion=float(r.frontier[-1] / c.n_train) if ok else nan, tau_slope=r.v_tau.slope if ok else nan,
        linear_r2=fit.r2["linear"] if fit is not None and fit.cls != "flat" else nan,
        price_gap=abs(np.log(r.v_tau.v / c.demand)) if ok and r.v_tau.v > 0 else nan,
        **tail.metrics_after_fixed_point(run.model, tokens, c.T_train, solved, probes, conv_factor))


# A seed's row is kept beside its run (`reading_cache`: read again only when the weights, this version or
# the arguments change): the rows are most of 07's time, and a stored run's never change.
SEED_METRICS_VERSION = 1


def kept_seed_metrics(run, n_ood: int, T_ood: int, eval_count: int = 512, probes: int = 4, conv_factor: int = 8,
                      tail_count: int | None = None) -> dict:
    """`seed_metrics`, kept beside the stored run."""
    args = dict(n_ood=n_ood, T_ood=T_ood, eval_count=eval_count, probes=probes, conv_factor=conv_factor,
                tail_count=tail_count)
    return reading_cache.reading(run, "contest-seed-metrics", SEED_METRICS_VERSION, lambda: seed_metrics(run, **args),
                                 params=args)


def evaluate_metric(values, targets, threshold: float) -> dict:
    """Spearman's rho of a metric with the target and its AUROC for target >= threshold, both with
    bootstrap intervals, over the finite values. None where undefined: rho with fewer than 3 values or
    a constant metric or target; AUROC when every kept seed is on one side of the threshold."""
    x, y = np.asarray(values, float), np.asarray(targets, float)
    if x.shape != y.shape:
        raise ValueError(f"values, targets: need equal lengths, got {x.shape} and {y.shape}")
    keep = np.isfinite(x)
    out = {"n": int(keep.sum()), "rho": None, "auroc": None}
    if keep.sum() >= 3 and np.ptp(x[keep]) > 0 and np.ptp(y[keep]) > 0:
        out["rho"] = stats.spearman(x[keep], y[keep])
    pos = y[keep] >= threshold
    if keep.sum() >= 3 and pos.any() and (~pos).any():
        out["auroc"] = stats.auroc(x[keep], pos)
    return out


def significant(e: dict) -> bool:
    """A metric predicts when its AUROC interval excludes 0.5, on either side (a reversed predictor
    still predicts; no orientation is chosen from the data)."""
    return e["auroc"] is not None and (e["auroc"].low > 0.5 or e["auroc"].high < 0.5)


def discrimination(e: dict) -> float:
    """max(AUROC, 1 - AUROC): how well the metric separates, whichever way round; nan if undefined."""
    return float("nan") if e["auroc"] is None else max(e["auroc"].value, 1 - e["auroc"].value)


def describe_split(name: str, ood, threshold: float) -> str:
    """One contest's split, in words: how many seeds generalize (OOD accuracy >= threshold), the OOD
    range, and the smallest p-value any metric can reach with that split (`smallest_p`)."""
    k = sum(o >= threshold for o in ood)
    return (f"{name}: {k}/{len(ood)} seeds generalize (OOD acc >= {threshold}); OOD accuracy range "
            f"{min(ood):.3f}..{max(ood):.3f}; the smallest p-value any metric can reach with this split: "
            f"{smallest_p(len(ood), k):.3g}")


def summarize(table: dict, threshold: float) -> dict:
    """contest -> metric -> evaluate_metric over that contest's seeds (every head and tail metric)."""
    return {name: {m: evaluate_metric([r[m] for r in rows], [r["ood_acc"] for r in rows], threshold)
                   for m in HEAD_METRICS + TAIL_METRICS} for name, rows in table.items()}


def metric_verdict(e: dict, kind: str) -> str:
    """Does one metric predict in one contest, against what the paper expects of its kind (head:
    predicts, tail: no signal)? 'untested' when the contest has no AUROC (seeds on one side)."""
    if e["auroc"] is None:
        return "untested"
    ours, paper = ("predicts" if significant(e) else "no signal"), ("predicts" if kind == "head" else "no signal")
    return f"{ours} ({'as the paper' if ours == paper else 'paper: ' + paper})"


def significant_hits(summary: dict, metrics) -> tuple[list[str], int]:
    """The AUROCs among `metrics` whose interval excludes 0.5 ('contest/metric value'), and how many
    were defined: with 95 % intervals about 1 in 20 defined ones excludes 0.5 by chance alone."""
    hits = [f"{name}/{m} {e['auroc'].value:.2f}" for name, ms in summary.items() for m, e in ms.items()
            if m in metrics and significant(e)]
    defined = sum(e["auroc"] is not None for ms in summary.values() for m, e in ms.items() if m in metrics)
    return hits, defined


def _interval(x) -> list | None:
    return None if x is None else [round(x.value, 3), round(x.low, 3), round(x.high, 3)]


def contest_results(table: dict, summary: dict, costs: dict | None = None, threshold: float | None = None) -> dict:
    """The ledger's numbers over the contests: in how many contests the primary head metric predicts
    (its AUROC interval excludes 0.5) in one direction, the direction most contests take (a metric that
    predicts forward in one contest and in reverse in another is no stable predictor), with its AUROC
    per contest (None where untested); secondary: the best head metric's discrimination per contest
    (its minimum over contests, only when every contest was tested), how many contests have some
    significant head metric, the significant head AUROCs among those defined; the count of significant
    tail AUROCs and its excess over what chance alone gives (`stats.chance_bound` of the defined ones;
    None when none was defined: nothing was tested), with the defined tail AUROCs per contest; and
    `costs` (contest -> `store.training_cost` of its runs) as given; with `threshold`, each contest's
    split [generalizing seeds, seeds] and its smallest attainable p (`smallest_p`: the power condition)."""
    primary = {name: ms[PRIMARY] for name, ms in summary.items()}
    higher = sum(e["auroc"] is not None and e["auroc"].low > 0.5 for e in primary.values())   # higher generalizes
    lower = sum(e["auroc"] is not None and e["auroc"].high < 0.5 for e in primary.values())
    head_best = [np.nanmax([discrimination(ms[m]) for m in HEAD_METRICS])
                 if any(ms[m]["auroc"] is not None for m in HEAD_METRICS) else float("nan") for ms in summary.values()]
    tested = int(np.isfinite(head_best).sum())      # contests with both generalizing and failing seeds
    tail_hits, tail_defined = significant_hits(summary, TAIL_METRICS)
    head_hits, head_defined = significant_hits(summary, HEAD_METRICS)
    return {
        "contests": len(summary),
        "tasks": {name: rows[0].get("task") for name, rows in table.items()},
        "contests_tested": tested,
        "primary": PRIMARY,
        "primary_significant_contests": max(higher, lower),
        "primary_significant_by_direction": {"higher generalizes": higher, "lower generalizes": lower},
        "primary_auroc": {name: _interval(e["auroc"]) for name, e in primary.items()},
        "head_significant_count": len(head_hits), "head_defined": head_defined,
        "tail_defined": tail_defined,
        "head_best_auroc_min": round(float(np.nanmin(head_best)), 3) if tested == len(summary) else None,
        "head_significant_contests": sum(any(significant(ms[m]) for m in HEAD_METRICS) for ms in summary.values()),
        "tail_significant_count": len(tail_hits) if tail_defined else None,
        "tail_chance_bound": stats.chance_bound(tail_defined),
        "tail_excess_over_chance": len(tail_hits) - stats.chance_bound(tail_defined) if tail_defined else None,
        "tail_defined_by_contest": {name: sum(ms[m]["auroc"] is not None for m in TAIL_METRICS)
                                    for name, ms in summary.items()},
        "cost": None if costs is None else {name: {k: round(v, 1) if isinstance(v, float) else v for k, v in c.items()}
                                            for name, c in costs.items()},
        "ood_spread": {name: [round(min(r["ood_acc"] for r in rows), 3), round(max(r["ood_acc"] for r in rows), 3)]
                       for name, rows in table.items()},
        "table": {name: {m: {"rho": _interval(e["rho"]), "auroc": _interval(e["auroc"])} for m, e in ms.items()}
                  for name, ms in summary.items()},
        **({} if threshold is None else {
            "split": {name: [sum(r["ood_acc"] >= threshold for r in rows), len(rows)] for name, rows in table.items()},
            "smallest_p": {name: round(smallest_p(len(rows), sum(r["ood_acc"] >= threshold for r in rows)), 4)
                           for name, rows in table.items()}}),
    }
