"""The C41-contests entry's readings for §4 (paper/PREREGISTRATION.md): the tail population on reserved
seeds, i.e. every learned run of the seed contests (planned in `s07_seed_contests.plan`).

Per run, 01's own `read.population_row` (256 inputs of the tail set; the tail metrics at T_train and
past tau*, fixed points within 8·T_train loops and within one 128-loop window, the best whole-word
accuracy at n = 16 over a scan to 4·loops_at(16): an upper bound, printed only), and beside it
(`_fixed_length_reading`) whole-word accuracy at n = 16 after exactly loops_at(16) loops (512 words,
the target the correlations read), the readout's v_tau (printed beside rule N) and Proposition 1's
check over 8·T_train loops on 64 inputs.
"""
from __future__ import annotations

import dataclasses

import numpy as np
from scipy.stats import rankdata

from ... import reading_cache, store
from ...instruments import head, tail
from ...probes import probe_seed, probe_set
from ...rules import ALPHA, correlation_powered, premise_met, print_confirmatory, record_confirmatory
from ...stats import holm, spearman, spearman_permutation_p
from ..s07_seed_contests import plan as contests_plan     # the study's runs are the contests'
from .claims import CONFIRMATORY
from .read import METRICS, REACHED, population_row

ENTRY = "C41-contests"
READINGS = "C41-contests-population"     # this section's readings of the entry, apart from 07's
LEARNED = 0.9
MIN_MODELS = 10            # a uniform minimum or a correlation over fewer models is not read
N_OOD, EVAL_COUNT, TAIL_COUNT, PROBES, CONV_FACTOR, LONG_FACTOR = 16, 512, 256, 4, 8, 4
EXTRA_VERSION = 1          # bump when `_fixed_length_reading` changes
ROW_VERSION = 1            # bump when `population_row` changes what it computes


def _fixed_length_reading(run) -> dict:
    c = run.config
    task = c.task_obj()
    ood = head.accuracy_by_loops(run.model, task, N_OOD, c.loops_at(N_OOD), count=EVAL_COUNT,
                                 seed=probe_seed("contest_target", 0))
    r = head.tau(run.model, task, c.n_train, c.T_train, count=EVAL_COUNT, seed=probe_seed("in_distribution", c.seed))
    tokens, _ = probe_set(task, "prop1", 0, c.n_train, 64)
    p1 = tail.proposition1(run.model, tokens, CONV_FACTOR * c.T_train, tol=1e-3)
    # v_tau as 07 reads its primary metric: only with >= 16 solved inputs and a readout valid at loop 1
    valid = r.n_solved >= head.MIN_SOLVED and head.decoder_valid(float(r.position1_first_loop))
    return {"ood_at_loops": float(ood.seq_acc[-1]), "v_tau": r.v_tau.v if valid else float("nan"),
            "prop1": dataclasses.asdict(p1)}


def population_confirm_row(run) -> dict:
    """One model of the tail population (both readings kept beside the run)."""
    c = run.config
    # 01's own row, with the tail metrics at T_train at full precision: rules S and J judge band edges
    args = dict(recipe="settled", ood_factor=N_OOD // c.n_train, long_factor=LONG_FACTOR, conv_factor=CONV_FACTOR,
                eval_count=TAIL_COUNT, probes=PROBES, budget_decimals=None)
    row = dict(reading_cache.reading(run, "c41-population-row", ROW_VERSION, lambda: population_row(run, **args),
                                     params=args))
    extra = reading_cache.reading(run, "population-fixed-length", EXTRA_VERSION, lambda: _fixed_length_reading(run),
                                  params={"n_ood": N_OOD, "eval_count": EVAL_COUNT, "conv_factor": CONV_FACTOR})
    row.update(learned=bool(run.metrics["final_eval"]["seq_acc"] >= LEARNED), **extra)
    return row


def population_confirm_results(rows: list[dict]) -> dict:
    """The readings the entry's rules (F), (S), (J), (N) and (P) consume."""
    learned = [r for r in rows if r["learned"]]
    premise = [r for r in learned if premise_met(r["tau_star"], r["T_train"], 1)]
    # F's criterion as the entry states it (raw, >= half of 128 inputs within 8 T_train loops); 01's
    # `reached` also asks for a tau* over its 256 inputs, printed beside
    reached = [r for r in learned if r["converged"]["raw"] >= REACHED]
    target = [r["ood_at_loops"] for r in premise]
    # N ranks the metrics at the instrument's resolution (digits below it are the CPU's, `tail.DECIMALS`)
    values = {m: [tail.at_resolution(r["budget"][m]) for r in premise] for m in METRICS}
    varies = {m: (1.0 if len(v) >= 3 and np.all(np.isfinite(v)) and np.ptp(v) > 0 else None) for m, v in values.items()}
    powered = (len(premise) >= MIN_MODELS and correlation_powered(varies, len(premise))
               and bool(target) and np.ptp(target) > 0)
    p = {m: spearman_permutation_p(v, target) for m, v in values.items()} if powered else {}
    rho = {m: round(spearman(v, target).value, 3) for m, v in values.items()} if powered else {}
    v_tau = rankdata([r["v_tau"] for r in premise])     # ranks: an infinite speed is the fastest, as in 07
    held = [r["prop1"]["holds"] for r in reached if r["prop1"]["tau_star"] is not None]
    # S and J: the minimum over the premise models whose metric is defined; how many were not, beside
    skip1 = [r["budget"]["skip1"] for r in premise if np.isfinite(r["budget"]["skip1"])]
    jac = [r["budget"]["jac_align"] for r in premise if np.isfinite(r["budget"]["jac_align"])]
    return {
        "models": len(rows), "learned_models": len(learned), "premise_models": len(premise),
        "diverged_seeds": [r["seed"] for r in rows if r.get("diverged")],
        "fixed_point_share": len(reached) / len(learned) if learned else None,
        "fixed_point_share_with_tau_star": (sum(r["reached"] for r in learned) / len(learned)) if learned else None,
        "fixed_point_share_long_window": (round(float(np.mean([r["reached_long_window"] for r in learned])), 3)
                                          if learned else None),
        "skip1_min_at_T_train": min(skip1) if skip1 else None, "jac_align_min_at_T_train": min(jac) if jac else None,
        "premise_models_undefined_skip1_jac": [len(premise) - len(skip1), len(premise) - len(jac)],
        "correlation_powered": bool(powered),
        "tail_significant_holm": int(sum(holm(list(p.values()), ALPHA))) if powered else None,
        "tail_rho": rho, "tail_p": {m: round(x, 4) for m, x in p.items()},
        "v_tau_rho": (round(spearman(v_tau, target).value, 3)
                      if powered and not any(np.isnan(r["v_tau"]) for r in premise) and np.ptp(v_tau) > 0 else None),
        "ood_best_of_scan_upper_bound": [round(r["ood_acc"], 3) for r in premise],
        "ood_at_loops": [round(x, 3) for x in target],
        "prop1_share": float(np.mean(held)) if held else None, "prop1_models": len(held),
        # reached in the population reading but no fixed point among Proposition 1's 64 inputs: not checked
        "prop1_unchecked": len(reached) - len(held),
    }


def show(profile: str = "quick") -> dict | None:
    """Notebook 01's confirmatory section: once every contest run is stored, read the tail population,
    record the readings for the ledger and print them with the verdicts; until then say what is missing
    and record nothing. The runs are the entry's, whatever the profile."""
    if contests_plan.CONFIRM_TARGETS is None:
        print(f"{ENTRY} (tail population): waiting for P41-pilot's picks (no contest runs listed yet)")
        return None
    study = contests_plan.study()
    waiting = tuple(c for c in study if not store.is_done(c) and not store.is_diverged(c))
    print(store.study_progress(f"{ENTRY} (tail population)", study, waiting))
    if waiting:
        return None
    # a diverged run has not learned and has no reading (PREREGISTRATION, third transcription notes)
    out = population_confirm_results([{"seed": c.seed, "learned": False, "diverged": True} if store.is_diverged(c)
                                      else population_confirm_row(store.load_run(c)) for c in study])
    record_confirmatory(READINGS, out)
    print(out)
    print_confirmatory(CONFIRMATORY)
    return out
