"""The C03-budget entry's readings (paper/PREREGISTRATION.md): the budget law on reserved seeds.

Per run (`run_reading`), on top of `read.contract_readings` (tau at n_train after T_train loops,
which judges *learned*, and after 4·T_train loops, the primary "uncapped" tau):
- validity: the readout reads position 1 right after loop 1 on >= 0.9 of the inputs solved at the
  last loop read; an invalid run is read by neither speed estimator and leaves the fit;
- speeds: v(tau) = 1 / slope of tau(n_train, i) against i (primary), v(frontier) (reported), and the
  same tau read through the linear block probe (the alternative decoder, reported);
- at n = 16 (`extrapolation.beyond_training`): late-position (i > n_train) and whole-word accuracy
  after T_train loops, after T* = ceil(16 / v(tau)), after 2·loops_at(16) (the rescue's budget), and
  the best loop of the scan to 4·loops_at(16) (an upper bound, printed only);
- calibration (`s02_tau_calibration.read.free_reading`, 02's reader): tau(last) against n = 2..8 with 4x the
  loops and its scaling class, damage cones at the contract and v_cone / v(tau).
`budget_confirm_results` aggregates them into the readings the entry's six rules consume.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ... import reading_cache, store
from ...instruments import block_probe, head
from ...instruments.extrapolation import beyond_training
from ...plots import save
from ...rules import print_confirmatory, record_confirmatory, verdict
from ..s02_tau_calibration import read as calibration       # the entry re-reads 02's claims with 02's reader
from . import figures, plan
from .claims import CONFIRMATORY
from .read import contract_readings, seed_interval

UNCAPPED = 4                  # tau read with 4·T_train loops
N_LONG = 16                   # rescue and halting length (2·n_train)
RESCUE_FACTOR = 2             # the rescue reads 2·loops_at(16) loops
SCAN_FACTOR = 4               # the best-loop scan (an upper bound) runs to 4·loops_at(16)
BAND = (0.94, 1.02)           # the paper's b = 0.98 ± 0.04
MAX_WIDTH = 0.16              # a wider seed interval could meet the band by its width alone
PARTLY = 0.10                 # partly: the point within 0.98 ± 0.10
CALIBRATION_NS = tuple(range(2, 9))
PATCH_INPUTS, PATCH_ALPHA, PATCH_THRESHOLD = 32, 1.0, 0.5     # 02's damage-cone settings, unchanged


READER_VERSION = 1            # bump when what `run_reading` computes changes: kept readings are then re-read


def run_reading(run, eval_count: int = 512, learned_acc: float = 0.9, probe: bool = True) -> dict:
    """Everything the entry reads from one run, as plain numbers; the costly parts only for valid
    learned runs."""
    x = contract_readings([run], eval_count, learned_acc, uncapped_factor=UNCAPPED)[0]
    c, t = x["config"], x["tau_uncapped"]
    out = {"T_train": c.T_train, "n_train": c.n_train, "seed": c.seed, "demand": c.demand, "learned": x["learned"],
           "position1_first_loop": float(t.position1_first_loop) if t.n_solved else None,
           "valid": bool(t.n_solved > 0 and t.position1_first_loop >= head.DECODER_VALID),
           "v_tau": float(t.v_tau.v), "v_frontier": float(t.v_frontier)}
    if not (out["learned"] and out["valid"]):
        return out
    far = beyond_training(run.model, c, N_LONG, out["v_tau"], SCAN_FACTOR, eval_count)
    T_rescue = RESCUE_FACTOR * c.loops_at(N_LONG)
    # an infinite speed (a flat tau) halts after one loop (ceil(16 / inf), kept at 1): rule 4's mean is over
    # every valid learned run, so such a run is read there rather than left out
    T_star = far["T_star"] or (head.halting_loops(N_LONG, out["v_tau"]) if out["v_tau"] > 0 else None)
    out["rescue"] = {"T_train": c.T_train, "T_star": T_star, "T_rescue": T_rescue,
                     "late_at_T_train": far["at_T_train"][1], "whole_at_T_train": far["at_T_train"][0],
                     "late_at_T_star": float(far["late"][T_star - 1]) if T_star else None,
                     "whole_at_T_star": float(far["acc"].at(T_star)) if T_star else None,
                     "late_at_rescue": float(far["late"][T_rescue - 1]), "whole_at_rescue": float(far["acc"].at(T_rescue)),
                     "best_late": list(far["best_late"]), "best_whole": list(far["best_whole"])}
    free = calibration.free_reading(run, CALIBRATION_NS, eval_count, PATCH_INPUTS, PATCH_ALPHA, PATCH_THRESHOLD, learned_acc)
    fit = free["against_n_uncapped"].fit
    out["free_class"] = fit.cls if fit else None
    out["v_cone"] = float(free["cones"].v_cone)
    if probe:
        T = UNCAPPED * c.T_train
        p = block_probe.read_run(run, block_probe.fit_for_run(run, T), c.n_train, T, eval_count, purpose="in_distribution")
        out["probe_valid"] = bool(p.validity >= head.DECODER_VALID)
        out["v_probe"] = float(head.speed_from_tau(p.tau_curve).v) if p.n_solved else float("nan")
    return out


def study_readings(runs, recompute: bool = False) -> list[dict]:
    """`run_reading` of each run, kept beside the run (`reading_cache`: read again only when the run's
    weights or READER_VERSION change; `recompute` checks the kept reading against a fresh one)."""
    return [reading_cache.reading(r, "c03-budget", READER_VERSION, lambda r=r: run_reading(r), recompute) for r in runs]


def _band_reading(point: float | None, interval) -> float | None:
    """1: the seed interval meets the band; 0.5: it does not, the point lies within 0.98 ± 0.10; 0 otherwise."""
    if point is None:
        return None
    if interval is not None and interval[0] <= BAND[1] and interval[1] >= BAND[0]:
        return 1.0
    return 0.5 if abs(point - 0.98) <= PARTLY else 0.0


def _exponent(runs: list[dict], key: str) -> dict:
    d = np.array([x["demand"] for x in runs])
    v = np.array([x[key] for x in runs])
    ok = np.isfinite(v) & (v > 0)
    if ok.sum() < 2 or len(np.unique(d[ok])) < 2:
        return {"exponent": None, "interval": None, "width": None, "meets_band": None}
    fit = head.budget_exponent(d[ok], v[ok])
    ci = seed_interval(d[ok], v[ok])
    return {"exponent": round(fit.exponent, 3), "interval": None if ci is None else [round(ci[0], 3), round(ci[1], 3)],
            "width": None if ci is None else float(ci[1] - ci[0]),       # judged unrounded (the power gate)
            "meets_band": _band_reading(fit.exponent, ci)}


def _valid_counts(readings: list[dict]) -> dict[str, int]:
    """Learned runs with a valid readout, per demand (rounded to 4 places, as the entry prints them)."""
    by_demand = {}
    for x in readings:
        by_demand.setdefault(round(x["demand"], 4), []).append(x)
    return {str(d): sum(x["learned"] and x["valid"] for x in xs) for d, xs in sorted(by_demand.items())}


def fitted_runs(readings: list[dict]) -> list[dict]:
    """The runs the exponent is fitted on: learned, readout valid, at a demand with >= 2 such runs (a seed
    interval needs two seeds a demand)."""
    counts = _valid_counts(readings)
    return [x for x in readings if x["learned"] and x["valid"] and counts[str(round(x["demand"], 4))] >= 2]


def _range_meets(speeds: list[float]) -> bool:
    """Rule 2's seed condition for *reproduced*: the seeds' range meets 1 ± 0.10."""
    return bool(speeds) and min(speeds) <= 1.1 and max(speeds) >= 0.9


def _unit_reading(speeds: list[float]) -> str:
    """Rule 2's verdict, by the entry's own test, on one estimator's speeds at T = n (the entry flags a
    verdict that flips between the estimators)."""
    mean = float(np.mean(speeds)) if speeds else None
    readings = {"speed_at_T_eq_n": mean, "demand1_valid": len(speeds), "demand1_range_meets": _range_meets(speeds)}
    return verdict(CONFIRMATORY["speed_at_T_eq_n_uncapped"], mean, results=readings)


def budget_confirm_results(readings: list[dict]) -> dict:
    """The readings the C03-budget rules consume (`claims.CONFIRMATORY`, this section's), with the reported extras."""
    good = [x for x in readings if x["learned"] and x["valid"]]
    valid_counts = _valid_counts(readings)
    kept = fitted_runs(readings)
    tau, front = _exponent(kept, "v_tau"), _exponent(kept, "v_frontier")
    unit = [x["v_tau"] for x in good if x["T_train"] == x["n_train"]]
    unit_frontier = [x["v_frontier"] for x in good if x["T_train"] == x["n_train"]]
    mean = lambda xs: float(np.mean(xs)) if xs else None           # noqa: E731  (judged unrounded: no band edge moves)
    rescued = [x["rescue"] for x in good]
    halting = [r["late_at_T_star"] for r in rescued if r["late_at_T_star"] is not None]
    ratios = [x["v_cone"] / x["v_tau"] for x in good if np.isfinite(x["v_cone"]) and np.isfinite(x["v_tau"]) and x["v_tau"] > 0]
    cone_demands = {round(x["demand"], 4) for x in good if np.isfinite(x["v_cone"])}
    probe_kept = [x for x in kept if x.get("probe_valid")]
    return {
        "runs": len(readings), "learned": sum(x["learned"] for x in readings), "valid_learned": len(good),
        "valid_learned_by_demand": valid_counts,
        "excluded_invalid": [f"T={x['T_train']} seed {x['seed']}" for x in readings if x["learned"] and not x["valid"]],
        "demands_valid": sum(v >= 2 for v in valid_counts.values()),
        "exponent": tau["exponent"], "exponent_interval": tau["interval"], "interval_width": tau["width"],
        "exponent_meets_band": tau["meets_band"],
        "exponent_frontier": front["exponent"], "exponent_frontier_interval": front["interval"],
        "exponent_frontier_meets_band": front["meets_band"],
        "exponent_probe": _exponent(probe_kept, "v_probe")["exponent"] if len(probe_kept) >= 2 else None,
        "estimator_flips": tau["meets_band"] != front["meets_band"],
        "speed_at_T_eq_n": mean(unit), "demand1_valid": len(unit),
        "demand1_range": [round(min(unit), 3), round(max(unit), 3)] if unit else None,
        "demand1_range_meets": _range_meets(unit),
        "speed_at_T_eq_n_frontier": mean(unit_frontier),
        "speed_at_T_eq_n_flips": _unit_reading(unit) != _unit_reading(unit_frontier),
        "rescue_gain": mean([r["late_at_rescue"] - r["late_at_T_train"] for r in rescued]),
        "halting_late_acc": mean(halting), "halting_runs_without_T_star": len(rescued) - len(halting),
        "halting_whole_acc": mean([r["whole_at_T_star"] for r in rescued if r["whole_at_T_star"] is not None]),
        "best_loop_late_upper_bound": mean([r["best_late"][0] for r in rescued]),
        "free_linear_fraction": mean([x["free_class"] == "linear" for x in good]),
        "free_classes": {f"T={x['T_train']} seed {x['seed']}": x["free_class"] for x in good},
        "cone_ratio_median": float(np.median(ratios)) if ratios else None,
        "demands_with_cones": len(cone_demands),
    }


ENTRY = "C03-budget"


def _two(x) -> str:
    return "–" if x is None else f"{x:.2f}"


def _shown(v):
    """A reading as printed: floats to 3 decimals (the recorded values keep every digit)."""
    if isinstance(v, float):
        return round(v, 3)
    if isinstance(v, list):
        return [_shown(x) for x in v]
    return v


def show(profile: str = "quick") -> dict | None:
    """Notebook 03's confirmatory section: once every run is stored, read each (kept beside the run),
    record the readings for the ledger, print them with the verdicts and draw each run's speed against
    its demand by both estimators; until then say how many runs are in and record nothing. The runs are
    the entry's, whatever the profile."""
    study = plan.study()
    waiting = tuple(c for c in study if not store.is_done(c))
    total = len(study)
    print(f"{ENTRY}: {total - len(waiting)} of {total} runs stored"
          + ("" if not waiting else "; the reading waits for the rest (no verdict recorded)"))
    if waiting:
        return None
    readings = study_readings([store.load_run(c) for c in study])
    for x in readings:
        r = x.get("rescue")
        print(f"T={x['T_train']:2d} seed {x['seed']}: learned {x['learned']}, valid {x['valid']} (position 1 at "
              f"loop 1: {x['position1_first_loop']:.2f}), v(tau) {x['v_tau']:.3f}, v(frontier) {x['v_frontier']:.3f}"
              + ("" if r is None else f", v(probe) {x['v_probe']:.3f}, class {x['free_class']}, v(cone) {x['v_cone']:.3f}; "
                 f"n=16 late T_train {r['late_at_T_train']:.2f}, T*={r['T_star']} {_two(r['late_at_T_star'])}, "
                 f"{r['T_rescue']} loops {r['late_at_rescue']:.2f}"))
    out = budget_confirm_results(readings)
    record_confirmatory(ENTRY, out)
    print({k: _shown(v) for k, v in out.items() if k != "free_classes"})
    print_confirmatory(CONFIRMATORY)
    fig, ax = plt.subplots(figsize=(5.5, 4.5))
    figures.confirm_speeds(readings, fitted_runs(readings), out, ax=ax)
    save(fig, "03_budget_law_confirm_speeds", profile)
    plt.show()
    return out
