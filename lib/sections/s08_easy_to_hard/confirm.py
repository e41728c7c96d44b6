"""The C43-easy-to-hard entry's readings (paper/PREREGISTRATION.md): 4x length extrapolation of prefix
sums on reserved seeds, at P43-pilots' picked learning rate and budget.

Per seed: whole-word accuracy at n = 32, 64 (= 4 n_train, the claim's) and 128 after exactly
`loops_at(n)` loops on the `extrapolation` set, 512 words (`extrapolation.at_the_schedules_loops`), with
the best loop of a scan to 2 loops_at(n) beside it as an upper bound; in-distribution accuracy from the
run's final evaluation. The entry's value: the minimum over the seeds at n = 64.
"""
from __future__ import annotations

import numpy as np

from ... import reading_cache, store
from ...instruments.extrapolation import at_the_schedules_loops
from ...rules import print_confirmatory, record_confirmatory
from . import plan
from .claims import CONFIRMATORY

ENTRY = "C43-easy-to-hard"
CLAIM_N, TEST_NS = 64, (32, 64, 128)
SCAN_FACTOR, EVAL_COUNT = 2, 512
READING_VERSION = 1


def seed_row(run) -> dict:
    """One seed's readings (kept beside the run)."""
    reading = reading_cache.reading(
        run, "e2h-at-schedule", READING_VERSION,
        lambda: {str(n): r for n, r in at_the_schedules_loops(run, TEST_NS, SCAN_FACTOR, EVAL_COUNT).items()},
        params={"test_ns": list(TEST_NS), "scan_factor": SCAN_FACTOR, "eval_count": EVAL_COUNT})
    return {"seed": run.config.seed, "in_acc": float(run.metrics["final_eval"]["seq_acc"]),
            "by_n": {int(n): r for n, r in reading.items()}}


def diverged_row(cfg) -> dict:
    """A seed whose run diverged: it has not learned and has no reading, so it counts as a seed that did not
    learn, with accuracy 0 at every length (PREREGISTRATION, third transcription notes)."""
    return {"seed": cfg.seed, "in_acc": 0.0, "diverged": True,
            "by_n": {n: {"acc": 0.0, "best": 0.0} for n in TEST_NS}}


def e2h_confirm_results(rows: list[dict]) -> dict:
    at = [r["by_n"][CLAIM_N]["acc"] for r in rows]
    return {"e2h_4x_min_at_loops": float(min(at)),          # judged unrounded
            "e2h_4x_median_at_loops": round(float(np.median(at)), 3),
            "e2h_4x_by_seed": {str(r["seed"]): round(r["by_n"][CLAIM_N]["acc"], 3) for r in rows},
            "e2h_4x_best_loop_upper_bound": {str(r["seed"]): round(r["by_n"][CLAIM_N]["best"], 3) for r in rows},
            "in_distribution_by_seed": {str(r["seed"]): round(r["in_acc"], 3) for r in rows},
            "diverged_seeds": [r["seed"] for r in rows if r.get("diverged")],
            "at_loops_by_length": {str(n): [round(r["by_n"][n]["acc"], 3) for r in rows] for n in TEST_NS}}


def show(profile: str = "quick") -> dict | None:
    """Notebook 08's confirmatory section: once every run is stored (or diverged), read them, record the readings and
    print them with the verdict; until then say what is missing and record nothing."""
    study = plan.study()
    if not study:
        print(f"{ENTRY}: waiting for P43-pilots' prefix-sums pick (plan.E2H_CONFIRM_PICK is not recorded yet)")
        return None
    waiting = [c for c in study if not store.is_done(c) and not store.is_diverged(c)]
    print(store.study_progress(ENTRY, study, waiting))
    if waiting:
        return None
    out = e2h_confirm_results([diverged_row(c) if store.is_diverged(c) else seed_row(store.load_run(c)) for c in study])
    record_confirmatory(ENTRY, out)
    print(out)
    print_confirmatory(CONFIRMATORY)
    return out
