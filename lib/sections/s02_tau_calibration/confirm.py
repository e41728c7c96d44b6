"""The C43-controls and C43-controls-streaming entries' readings (paper/PREREGISTRATION.md): tau's two
calibration controls on reserved seeds. C43-controls reads the streaming control on C05-wall's streaming
runs and trains the shortcut control anew; C43-controls-streaming reads the streaming control on runs of
02's own streaming recipe (C05-wall's, trained joint, did not learn).

Per run, 02's `read.control_reading` (tau at the run's contract over 512 in-distribution words, the
streaming runs read with their schedule): a run is *read* when it learned (solved fraction >= 0.9), has
>= 16 solved inputs and its readout reads position 1 right after loop 1 on >= 0.9 of them; its value is
the slope of tau against position. The entry's value per control is the mean slope over the read runs.
"""
from __future__ import annotations

import numpy as np

from ... import reading_cache, store
from ...instruments import head
from ...rules import print_confirmatory, record_confirmatory
from . import plan
from .claims import CONFIRMATORY
from .read import control_reading

ENTRY = "C43-controls"
STREAMING_ENTRY = "C43-controls-streaming"
LEARNED = 0.9
EVAL_COUNT = 512
MIN_READ = 2               # runs read for a control's value (of 3)
READING_VERSION = 1


def control_row(run) -> dict:
    """One control run: solved fraction, solved inputs, the readout's validity and the slope of tau
    (kept beside the run)."""
    def compute():
        t = control_reading(run, EVAL_COUNT)
        return {"solved_fraction": t.solved_fraction, "n_solved": t.n_solved,
                "position1_first_loop": float(t.position1_first_loop) if t.n_solved else None,
                "slope": float(t.v_tau.slope) if t.n_solved >= head.MIN_SOLVED else None}
    r = reading_cache.reading(run, "control-slope", READING_VERSION, compute, params={"eval_count": EVAL_COUNT})
    read = (r["solved_fraction"] >= LEARNED and r["n_solved"] >= head.MIN_SOLVED
            and head.decoder_valid(r["position1_first_loop"]))
    return {**r, "seed": run.config.seed, "read": bool(read)}


def controls_confirm_results(rows: dict) -> dict:
    """rows: kind ("streaming", "shortcut") -> its runs' `control_row`s. The mean slope over the read runs
    of each control, with the count read and every run's slope."""
    out = {}
    for kind, rs in rows.items():
        read = [r["slope"] for r in rs if r["read"]]
        out[f"{kind}_runs_read"] = len(read)
        out[f"{kind}_slope"] = float(np.mean(read)) if len(read) >= MIN_READ else None    # judged unrounded
        out[f"{kind}_slopes_by_seed"] = {str(r["seed"]): None if r["slope"] is None else round(r["slope"], 3) for r in rs}
    return out


def _show_entry(entry: str, runs: dict, whose: str = "") -> dict | None:
    """One entry: once every run of it is stored, read them, record the readings and print them; until
    then say how many are in and record nothing. runs: kind -> its configs."""
    study = [c for cfgs in runs.values() for c in cfgs]
    waiting = [c for c in study if not store.is_done(c)]
    print(f"{entry}: {len(study) - len(waiting)} of {len(study)} runs stored{whose}"
          + ("" if not waiting else "; the reading waits for the rest (no verdict recorded)"))
    if waiting:
        return None
    out = controls_confirm_results({kind: [control_row(store.load_run(c)) for c in cfgs] for kind, cfgs in runs.items()})
    record_confirmatory(entry, out)
    print(out)
    return out


def show(profile: str = "quick") -> dict:
    """Notebook 02's confirmatory section: each entry's readings (None until all its runs are stored),
    then the verdicts the ledger gives (the streaming row: C43-controls-streaming's, C43-controls' beside)."""
    out = {ENTRY: _show_entry(ENTRY, plan.study_controls(), " (the streaming ones are C05-wall's)"),
           STREAMING_ENTRY: _show_entry(STREAMING_ENTRY, {"streaming": plan.streaming_study()})}
    print_confirmatory(CONFIRMATORY)
    return out
