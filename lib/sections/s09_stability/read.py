"""09's readers: Paper B's grid read along its three axes (`instruments.fixedpoint`), one run at a time
(`summary`, kept beside the run), a run's fixed points called stable when all three axes agree
(`stable_fixed_points`), configurations compared where one of them scores beyond the training length
(`comparison_length`), the sudoku contest read board by board per loop (`sudoku_readings`), and the
ledger's numbers (`stability_results`).
"""
from __future__ import annotations

import numpy as np

from ... import reading_cache
from ...instruments.extrapolation import best_loop, scan_loops
from ...instruments.fixedpoint import (Convergence, InputDependence, best_accuracy_by_length, convergence, gradient_norms,
                                       input_dependence, jacobian_spectral_radius, states)
from ...instruments.head import board_accuracy_by_loops
from ...probes import probe_seed, probe_set
from ...tasks import sudoku_set
from .plan import Knobs


EXTRAPOLATION_FACTOR = 1.5      # loops scanned at test length n: 1.5 x the loops the run gets there (loops_at)


def summary(run, test_ns, long_factor: int = 4, eval_count: int = 512) -> dict:
    """All three axes for one trained run, read on its `tail` probe set (length n_train), with the
    loops run long (long_factor * T_train): reachability (by our relative step, `reach`, and by Paper B's
    own diagnostic, consecutive cosine > 0.99, `reach_cosine`) and input-dependence over 128 inputs, the
    median Jacobian spectral radius over 8, gradient norms through T, 2T and 4T loops over 64 (and
    their growth 4T/T: stable backpropagation keeps it near 1), and extrapolation (best whole-word
    accuracy over up to EXTRAPOLATION_FACTOR * loops_at(n) loops at each test n, as notebook 08)."""
    c = run.config
    task = c.task_obj()
    tokens, labels = probe_set(task, "tail", c.seed, c.n_train, eval_count)
    T_long = long_factor * c.T_train
    hs = states(run.model, tokens[:128], T_long)
    grads = gradient_norms(run.model, tokens[:64], labels[:64], (c.T_train, 2 * c.T_train, 4 * c.T_train))
    return dict(
        seed=c.seed, n_train=c.n_train, T_train=c.T_train, in_acc=run.metrics["final_eval"]["seq_acc"], reach=convergence(hs, "raw"),
        reach_cosine=convergence(hs, "cosine"),
        dep=input_dependence(run.model, tokens[:128], T_long, vocab=task.n_symbols, final=hs[-1]),
        rho=float(np.median(jacobian_spectral_radius(run.model, tokens[:8], T_long, iters=40))),
        grads=grads, grad_growth=list(grads.values())[-1] / max(list(grads.values())[0], 1e-12),
        extrap=best_accuracy_by_length(run, test_ns, EXTRAPOLATION_FACTOR, eval_count))


DEFAULT_KNOBS = tuple(Knobs("none", False))      # no recall, no outer norm, the other knobs at their defaults


def _knobs(key) -> tuple:
    """(recall, outer_norm, norm, recall_op, norm_kind), the defaults filling a shorter key."""
    return tuple(key) + DEFAULT_KNOBS[len(key):]


def configuration_label(key, base=DEFAULT_KNOBS) -> str:
    """A configuration's knobs (plan.Knobs, or a (recall, outer_norm, norm) prefix) -> its name in
    tables and results, e.g. "internal recall, outer norm", naming the recall op, norm placement and norm
    kind only where they differ from `base` (the plan's base run; default pre-norm, additive recall,
    LayerNorm). The claims ledger reads the results under these names."""
    recall, outer, norm, op, kind = _knobs(key)
    _, _, base_norm, base_op, base_kind = _knobs(base)
    name = "no recall" if recall == "none" else (f"{recall} recall" + (f" ({op})" if op != base_op else ""))
    return (name + (", outer norm" if outer else ", no outer norm") + (f", {norm}-norm" if norm != base_norm else "")
            + ({"layer": ", LayerNorm", "rms": ", RMSNorm"}[kind] if kind != base_kind else ""))


# A run's summary is kept beside it (`reading_cache`: read again only when its weights, this version or
# the arguments change): the grid's readings are most of 09's time, and a stored run's never change.
SUMMARY_VERSION = 1


def _summary_as_json(s: dict) -> dict:
    conv = lambda c: {**c.__dict__, "step": c.step.tolist()}                          # noqa: E731
    return {**s, "reach": conv(s["reach"]), "reach_cosine": conv(s["reach_cosine"]), "dep": s["dep"].__dict__,
            "grads": {str(T): g for T, g in s["grads"].items()}, "extrap": {str(n): a for n, a in s["extrap"].items()}}


def _summary_from_json(j: dict) -> dict:
    conv = lambda c: Convergence(**{**c, "step": np.asarray(c["step"], dtype=np.float32)})   # noqa: E731
    return {**j, "reach": conv(j["reach"]), "reach_cosine": conv(j["reach_cosine"]), "dep": InputDependence(**j["dep"]),
            "grads": {int(T): j["grads"][T] for T in sorted(j["grads"], key=int)},
            "extrap": {int(n): j["extrap"][n] for n in sorted(j["extrap"], key=int)}}


def kept_summary(run, test_ns, long_factor: int = 4, eval_count: int = 512) -> dict:
    """`summary`, kept beside the stored run."""
    params = dict(test_ns=list(test_ns), long_factor=long_factor, eval_count=eval_count)
    kept = reading_cache.reading(run, "stability-summary", SUMMARY_VERSION,
                                 lambda: _summary_as_json(summary(run, test_ns, long_factor, eval_count)), params=params)
    return _summary_from_json(kept)


def stability_rows(runs: dict, test_ns, long_factor: int, eval_count: int) -> dict:
    """(configuration key, seed) -> summary of that run, with its key: Paper B's grid, one row per run."""
    return {(key, run.config.seed): dict(key=key, **kept_summary(run, test_ns, long_factor, eval_count))
            for key, rs in runs.items() for run in rs}


# Stable fixed points, all three of Paper B's axes at once: reached by most inputs (REACHED_FRACTION
# settle for good within the long run), locally attracting (spectral radius < 1), and input-dependent
# (inputs one token apart end more than NEARBY_DISTANCE apart, relative to their norm).
REACHED_FRACTION = 0.9
NEARBY_DISTANCE = 1e-3


def stable_fixed_points(row: dict, reach: str = "reach") -> bool:
    """Whether one run's summary shows reachable, geometrically stable, input-dependent fixed points;
    reach: the convergence reading that counts as reached ("reach": our relative step; "reach_cosine":
    Paper B's consecutive-cosine diagnostic)."""
    return bool(row[reach].reached_fraction >= REACHED_FRACTION and row["rho"] < 1
                and row["dep"].nearby_distance > NEARBY_DISTANCE)


def mean_over_seeds(rows: dict, key, f) -> float:
    """Mean of f(row) over the seeds of configuration `key`."""
    return float(np.mean([f(r) for (k, _), r in rows.items() if k == key]))


# Where configurations are compared. The paper ranks them at 4x the training length; when every
# configuration is at 0 there, a tie carries no ranking. So: the longest test length beyond training
# where some configuration SCORES (mean whole-word accuracy >= SCORES); with none, the ranking is
# unmeasured. Fixed before reading the numbers it decides; 09's claims read this SCORES.
SCORES = 0.05


def comparison_length(extrapolation: dict, n_train: int, floor: float = SCORES) -> int | None:
    """extrapolation: n -> {configuration: accuracy}. The longest n > n_train where some
    configuration reaches `floor`; None where there is none."""
    informative = [n for n, acc in extrapolation.items() if n > n_train and max(acc.values()) >= floor]
    return max(informative) if informative else None


def sudoku_readings(sudoku_runs: dict, givens, loops_factor: float = 2) -> dict:
    """(recall, seed, givens) -> dict(cell, board, T, best_board_loop): blank-cell and whole-board
    accuracy after every loop up to loops_factor x the training loops, on unseen puzzles with that
    many givens (the first the training difficulty, then harder ones). The boards are the run's
    `tail` probe seed's (one fixed set per seed, apart from the training pool)."""
    out = {}
    for recall, rs in sudoku_runs.items():
        for run in rs:
            c = run.config
            for g in givens:
                def read(g=g, c=c, run=run):
                    tokens, labels = sudoku_set(g, c.eval_count, seed=probe_seed("tail", c.seed))
                    cell, board = board_accuracy_by_loops(run.model, tokens, labels, scan_loops(c, c.n_train, loops_factor))
                    return dict(cell=cell.tolist(), board=board.tolist())
                kept = reading_cache.reading(run, "sudoku-boards", SUMMARY_VERSION, read,
                                             params=dict(givens=g, loops_factor=loops_factor))
                cell, board = (np.asarray(kept[k], dtype=np.float64) for k in ("cell", "board"))
                out[(recall, c.seed, g)] = dict(cell=cell, board=board, T=c.T_train,
                                                best_board_loop=best_loop(board)[1])
    return out


def sudoku_best(sudoku_rows: dict, recall: str, givens: int, what: str = "board") -> float:
    """Best-loop accuracy (`what`: "board" or "cell"), mean over the seeds of one recall at one difficulty."""
    return float(np.mean([r[what].max() for (rc, _, g), r in sudoku_rows.items() if rc == recall and g == givens]))


def stability_results(rows: dict, sudoku_rows: dict, test_ns, sudoku_givens, base=DEFAULT_KNOBS) -> dict:
    """The ledger's numbers for Paper B. Per configuration: extrapolation at every test length, the
    fraction of seeds with stable fixed points (reached counted by each criterion in turn), and the
    fraction of inputs that settle by each criterion (our relative step, Paper B's consecutive cosine).
    At the comparison length (`comparison_length`): is the best configuration one with recall and outer
    norm and stable fixed points (claim 2; once with each criterion), and internal minus external recall,
    both with outer norm and `base`'s norm, norm kind and recall op (claim 3); both None where no length
    is informative. Claim 1: distinct final states per input without recall (outer
    norm on). Sudoku: best-loop board and blank-cell accuracy, and internal minus external whole-board
    accuracy over the harder difficulties."""
    keys = list(dict.fromkeys(k for k, _ in rows))
    _, _, norm, op, kind = _knobs(base)
    def find(recall: str, recall_op: str):
        want = (recall, True, norm, recall_op, kind)
        key = next((k for k in keys if _knobs(k) == want), None)
        if key is None:
            raise ValueError(f"rows: the grid has no configuration {want} (recall, outer norm, norm, recall op, "
                             "norm kind) for claims 1 and 3")
        return key
    internal, external = find("internal", op), find("external", op if op != "concat" else "add")
    no_recall = find("none", "add")
    n_train = next(iter(rows.values()))["n_train"]
    ext_at = {n: {k: mean_over_seeds(rows, k, lambda r: r["extrap"][n]) for k in keys} for n in test_ns}
    compare_at = comparison_length(ext_at, n_train)
    ext = ext_at[compare_at] if compare_at else ext_at[test_ns[-1]]
    stable = {k: mean_over_seeds(rows, k, lambda r: float(stable_fixed_points(r))) for k in keys}
    stable_cos = {k: mean_over_seeds(rows, k, lambda r: float(stable_fixed_points(r, "reach_cosine"))) for k in keys}
    reached = lambda k, what: round(mean_over_seeds(rows, k, lambda r: r[what].reached_fraction), 3)
    best = max(ext, key=ext.get)
    recall_outer = _knobs(best)[0] != "none" and _knobs(best)[1]
    best_is_recall_outer = lambda stable_by: bool(recall_outer and stable_by[best] == 1.0)   # claim 2, one criterion
    distinct = lambda r: r["dep"].distinct_fixed_points / r["dep"].n_inputs
    label = lambda k: configuration_label(k, base)
    recalls = list(dict.fromkeys(rc for rc, _, _ in sudoku_rows))
    board = lambda what: {f"{rc}, {g} givens": round(sudoku_best(sudoku_rows, rc, g, what), 3)
                          for rc in recalls for g in sudoku_givens}
    return {
        "configurations": {label(k): {"extrapolation": {str(n): round(ext_at[n][k], 3) for n in test_ns},
                                      "stable_fixed_points": round(stable[k], 3),
                                      "stable_fixed_points_cosine": round(stable_cos[k], 3),
                                      "reached_step": reached(k, "reach"), "reached_cosine": reached(k, "reach_cosine")}
                           for k in keys},
        "best_is_recall_outer": best_is_recall_outer(stable) if compare_at else None,
        "best_is_recall_outer_cosine": best_is_recall_outer(stable_cos) if compare_at else None,
        "best_configuration": label(best) if compare_at else None,
        "no_recall_distinct_fraction": round(mean_over_seeds(rows, no_recall, distinct), 3),
        "internal_minus_external": round(ext[internal] - ext[external], 3) if compare_at else None,
        "claim3_pair": [label(internal), label(external)],        # the two configurations claim 3 compares
        "compared_at_n": compare_at,
        "longest": test_ns[-1],
        "sudoku_board": board("board"),
        "sudoku_blank_cells": board("cell"),
        "sudoku_internal_minus_external": round(float(np.mean([sudoku_best(sudoku_rows, "internal", g)
                                                               - sudoku_best(sudoku_rows, "external", g)
                                                               for g in sudoku_givens[1:]])), 3),
    }
