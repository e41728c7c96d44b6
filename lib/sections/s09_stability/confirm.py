"""The C43-recall and C43-sudoku entries' readings (paper/PREREGISTRATION.md): Paper B's claims on
reserved seeds.

C43-recall, per run: 09's `read.kept_summary` (reach by our relative step and by Paper B's cosine, the
spectral radius rho, input dependence; the loop run 4·T_train loops on 128 inputs) and whole-word
accuracy at n = 32 (the comparison length L, fixed in the entry) and 64 after exactly `loops_at(n)` loops
(`extrapolation.at_the_schedules_loops`, the best of a 1.5x scan beside it as an upper bound).
C43-sudoku, per run: 09's `read.sudoku_readings` (board and blank-cell accuracy after every loop up to
2·T_train on 256 unseen boards at 34, 28 and 24 givens), read at exactly T_train loops.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ... import reading_cache, store
from ...instruments.extrapolation import at_the_schedules_loops
from ...plots import save
from ...rules import fmt, print_confirmatory, record_confirmatory, verdict
from . import figures, plan
from .claims import CONFIRMATORY
from .read import EXTRAPOLATION_FACTOR, SCORES, configuration_label, kept_summary, stable_fixed_points, sudoku_readings

RECALL_ENTRY, SUDOKU_ENTRY = "C43-recall", "C43-sudoku"
L, TEST_NS = 32, (32, 64)
LONG_FACTOR, EVAL_COUNT = 4, 512
MARGIN = 0.05              # B1: the best configuration's lead over every one lacking recall or outer norm
SUDOKU_GIVENS, SUDOKU_SCAN = (34, 28, 24), 2
READING_VERSION = 1


def recall_row(run, knobs) -> dict:
    """One run of the recall grid (both readings kept beside the run)."""
    s = kept_summary(run, TEST_NS, LONG_FACTOR, EVAL_COUNT)
    at = reading_cache.reading(
        run, "recall-at-schedule", READING_VERSION,
        lambda: {str(n): r for n, r in at_the_schedules_loops(run, TEST_NS, EXTRAPOLATION_FACTOR, EVAL_COUNT).items()},
        params={"test_ns": list(TEST_NS), "scan_factor": EXTRAPOLATION_FACTOR, "eval_count": EVAL_COUNT})
    return {"knobs": knobs, "seed": run.config.seed, "stable": stable_fixed_points(s),
            "stable_cosine": stable_fixed_points(s, "reach_cosine"), "reached": s["reach"].reached_fraction,
            "distinct": s["dep"].distinct_fixed_points / s["dep"].n_inputs,
            "acc": {int(n): r["acc"] for n, r in at.items()}, "best": {int(n): r["best"] for n, r in at.items()}}


def diverged_recall_row(cfg, knobs) -> dict:
    """A run that diverged has not learned and has no reading (PREREGISTRATION, third transcription notes):
    read as a run that did not learn, with accuracy 0, no fixed point reached and no input dependence
    reading (B2's mean is over the runs that have one; its precondition then fails on reach)."""
    return {"knobs": knobs, "seed": cfg.seed, "stable": False, "stable_cosine": False, "reached": 0.0,
            "distinct": None, "acc": {n: 0.0 for n in TEST_NS}, "best": {n: 0.0 for n in TEST_NS}, "diverged": True}


def _b1(rows: list[dict], means: dict, stable_key: str) -> float | None:
    """Rule B1 as a score: 1 reproduced, 0.5 partly, 0 not reproduced, None not measured. Configurations
    tied at the top are all "best": with one that has recall and outer norm the lead is 0 (partly at most)."""
    top = max(means.values())
    if top < SCORES:
        return None
    tied = [k for k, m in means.items() if m == top and k.recall != "none" and k.outer_norm]
    if not tied:
        return 0.0
    lacking = [m for k, m in means.items() if k.recall == "none" or not k.outer_norm]
    # every best configuration's seeds must be stable: which of two tied ones is "best" is not the code's to pick
    every_seed_stable = all(r[stable_key] for r in rows if r["knobs"] in tied)
    return 1.0 if every_seed_stable and top - max(lacking) >= MARGIN else 0.5


def recall_confirm_results(rows: list[dict]) -> dict:
    keys = list(dict.fromkeys(r["knobs"] for r in rows))
    mean = lambda k, f: float(np.mean([f(r) for r in rows if r["knobs"] == k]))      # noqa: E731
    at = {n: {k: mean(k, lambda r: r["acc"][n]) for k in keys} for n in TEST_NS}
    find = lambda recall, outer: next(k for k in keys if (k.recall, k.outer_norm) == (recall, outer))  # noqa: E731
    internal, external, none_outer = find("internal", True), find("external", True), find("none", True)
    label = configuration_label
    return {
        "compared_at_n": L,
        "mean_at_loops": {label(k): {str(n): round(at[n][k], 3) for n in TEST_NS} for k in keys},
        "mean_best_of_scan_upper_bound": {label(k): {str(n): round(mean(k, lambda r: r["best"][n]), 3) for n in TEST_NS}
                                          for k in keys},
        "best_configuration": label(max(at[L], key=at[L].get)),
        "recall_outer_score": _b1(rows, at[L], "stable"), "recall_outer_score_cosine": _b1(rows, at[L], "stable_cosine"),
        "stable_share": {label(k): round(mean(k, lambda r: float(r["stable"])), 3) for k in keys},
        "no_recall_distinct_fraction": _distinct(rows, none_outer),                                # judged unrounded
        "no_recall_reached_min": float(min(r["reached"] for r in rows if r["knobs"] == none_outer)),  # a precondition
        "no_recall_no_outer_distinct_fraction": _round(_distinct(rows, find("none", False))),
        "internal_minus_external": at[L][internal] - at[L][external],            # judged unrounded
        "both_recalls_score": bool(min(at[L][internal], at[L][external]) >= SCORES),
        "internal_minus_external_at_64": round(at[64][internal] - at[64][external], 3),
        "recall_seeds_at_L": {label(k): [round(r["acc"][L], 3) for r in rows if r["knobs"] == k] for k in (internal, external)},
        "diverged": [f"{label(r['knobs'])} seed {r['seed']}" for r in rows if r.get("diverged")],
        # a diverged run reads 0: on a comparator's side (B1: lacking recall or outer norm; B4: external) it helps
        "diverged_comparators": [f"{label(r['knobs'])} seed {r['seed']}" for r in rows if r.get("diverged")
                                 and (r["knobs"].recall in ("none", "external") or not r["knobs"].outer_norm)],
    }


def _distinct(rows: list[dict], knobs) -> float | None:
    """Distinct final states per input, mean over the configuration's runs that have the reading."""
    have = [r["distinct"] for r in rows if r["knobs"] == knobs and r["distinct"] is not None]
    return float(np.mean(have)) if have else None


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def diverged_sudoku_reading(recall: str, cfg, givens=SUDOKU_GIVENS) -> dict:
    """A sudoku run that diverged, read as one that solves nothing: (recall, seed, givens) -> board and blank-cell
    accuracy 0 after every loop (PREREGISTRATION, third transcription notes)."""
    zeros = np.zeros(SUDOKU_SCAN * cfg.T_train)
    return {(recall, cfg.seed, g): dict(cell=zeros, board=zeros, T=cfg.T_train, best_board_loop=1, diverged=True)
            for g in givens}


def sudoku_confirm_results(boards: dict, extras: dict | None = None) -> dict:
    """boards: (recall, seed, givens) -> whole-board accuracy after T_train loops; extras (printed only):
    the same key -> {"cell": blank-cell accuracy after T_train loops, "best_board": the best loop's}."""
    seeds = {rc: sorted({s for r, s, _ in boards if r == rc}) for rc in ("internal", "external")}
    harder = [g for g in SUDOKU_GIVENS if g != SUDOKU_GIVENS[0]]
    per_seed = {rc: [float(np.mean([boards[(rc, s, g)] for g in harder])) for s in ss] for rc, ss in seeds.items()}
    value = float(np.mean(per_seed["internal"]) - np.mean(per_seed["external"]))
    by = lambda what: {f"{rc}, {g} givens": round(float(np.mean([e[what] for (r, _, gg), e in extras.items()  # noqa: E731
                                                                 if r == rc and gg == g])), 3)
                       for rc in seeds for g in SUDOKU_GIVENS}
    separated = min(per_seed["internal"]) > max(per_seed["external"])
    return {"sudoku_internal_minus_external": value, "sudoku_separated": bool(separated),
            "sudoku_cell_at_T_train": by("cell") if extras else None,
            "sudoku_best_board_upper_bound": by("best_board") if extras else None,
            # the rule as a score: 1 reproduced (>= 0.1 and complete separation); else the difference, below 0.1
            "sudoku_score": 1.0 if value >= 0.1 and separated else min(value, 0.099),          # judged unrounded
            "sudoku_solves_training_boards": bool(max(v for (_, _, g), v in boards.items() if g == SUDOKU_GIVENS[0]) > 0),
            "sudoku_harder_by_seed": {rc: [round(v, 3) for v in vs] for rc, vs in per_seed.items()},
            "sudoku_board_at_T_train": {f"{rc}, {g} givens": round(float(np.mean([v for (r, _, gg), v in boards.items()
                                                                                   if r == rc and gg == g])), 3)
                                        for rc in seeds for g in SUDOKU_GIVENS}}


def _waiting(entry: str, study, pick_name: str) -> bool:
    if not study:
        print(f"{entry}: waiting for P43-pilots' pick ({pick_name} is not recorded yet; no runs listed)")
        return True
    waiting = [c for c in study if not store.is_done(c) and not store.is_diverged(c)]
    print(store.study_progress(entry, study, waiting))
    return bool(waiting)


def show(profile: str = "quick") -> dict:
    """Notebook 09's confirmatory section: each study read once all its runs are stored (readings
    recorded for the ledger, verdicts printed, C43-sudoku's runs drawn per loop); until then what is
    missing, and nothing recorded."""
    out = {}
    if not _waiting(RECALL_ENTRY, plan.recall_study(), "s08 plan.E2H_CONFIRM_PICK"):
        rows = [diverged_recall_row(c, k) if store.is_diverged(c) else recall_row(store.load_run(c), k)
                for k, cfgs in plan.recall_study_runs().items() for c in cfgs]
        out[RECALL_ENTRY] = recall_confirm_results(rows)
        record_confirmatory(RECALL_ENTRY, out[RECALL_ENTRY])
        print(out[RECALL_ENTRY])
        if out[RECALL_ENTRY]["diverged_comparators"]:
            print("note: diverged runs read 0 on a comparator's side of B1 or B4, which helps those claims: "
                  + ", ".join(out[RECALL_ENTRY]["diverged_comparators"]))
        b1c = out[RECALL_ENTRY]["recall_outer_score_cosine"]
        print(f"B1c (reached by Paper B's cosine diagnostic), B1's rule: {fmt(b1c)} -> "
              f"{verdict(CONFIRMATORY['best_is_recall_outer'], b1c, True, out[RECALL_ENTRY])}")
    if not _waiting(SUDOKU_ENTRY, plan.sudoku_study(), "plan.SUDOKU_CONFIRM_PICKS"):
        runs = {rc: [store.load_run(c) for c in cfgs if store.is_done(c)] for rc, cfgs in plan.sudoku_study_runs().items()}
        readings = sudoku_readings(runs, SUDOKU_GIVENS, SUDOKU_SCAN)
        for rc, cfgs in plan.sudoku_study_runs().items():
            for c in filter(store.is_diverged, cfgs):
                readings.update(diverged_sudoku_reading(rc, c))
        out[SUDOKU_ENTRY] = {**sudoku_confirm_results({k: float(r["board"][r["T"] - 1]) for k, r in readings.items()},
                                                      {k: {"cell": float(r["cell"][r["T"] - 1]),
                                                           "best_board": float(r["board"].max())}
                                                       for k, r in readings.items()}),
                             "diverged": sorted({f"{rc} seed {seed}" for (rc, seed, _), r in readings.items()
                                                 if r.get("diverged")})}
        record_confirmatory(SUDOKU_ENTRY, out[SUDOKU_ENTRY])
        print(out[SUDOKU_ENTRY])
        if any(d.startswith("external") for d in out[SUDOKU_ENTRY]["diverged"]):
            print("note: a diverged external run reads 0, the comparator's side, which helps the claim")
        fig = figures.sudoku_loops(readings)
        fig.suptitle(f"{SUDOKU_ENTRY}: each recall at P43's pick, seeds {', '.join(map(str, plan.SUDOKU_STUDY_SEEDS))}; "
                     "read at T_train (dotted), the best loop an upper bound", fontsize=9)
        save(fig, "09_fixed_point_stability_confirm_sudoku", profile)
        plt.show()
    print_confirmatory(CONFIRMATORY)
    return out
