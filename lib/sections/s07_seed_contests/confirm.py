"""The C41-contests entry's readings for §8 (paper/PREREGISTRATION.md): seed contests on reserved seeds.

Per seed (`contest_row`): 07's own `read.seed_metrics` at the contest's picked length L (whole-word
accuracy after `loops_at(L)` loops, the head metrics at n_train, the tail metrics past tau*), and beside
it the readout's validity (position 1 right after loop 1 on >= 0.9 of the solved inputs) and the tail
metrics at T_train, the operating point (`tail.metrics_row`, 256 inputs of the tail set).

Per contest (`contest_tests`): the exact permutation test of the primary metric's AUROC for
"generalizes" (target >= 0.5) and Spearman's rho of it with the target by permutation (co-primary); the
contest *predicts* when both p < 0.05 with the same sign. Powered: >= 4 seeds on each side among the
seeds with a primary metric. The tail: the exact AUROC test of every tail metric at T_train (and past
tau*, reported), Holm over all of them across the powered contests.
"""
from __future__ import annotations

import numpy as np
import torch
from scipy.stats import rankdata

from ... import reading_cache, store
from ...instruments import head, tail
from ...probes import probe_seed, probe_set
from ...rules import ALPHA, print_confirmatory, record_confirmatory
from ...stats import auroc, auroc_exact_p, holm, spearman, spearman_permutation_p
from . import plan
from .claims import CONFIRMATORY
from .read import PRIMARY, TAIL_METRICS, kept_seed_metrics

ENTRY = "C41-contests"
THRESHOLD = 0.5            # generalizes: whole-word accuracy at L >= this
LEARNED = 0.9
MIN_SIDE = 4               # the power condition: seeds on each side of the threshold
EVAL_COUNT, TAIL_COUNT, PROBES, CONV_FACTOR = 512, 256, 4, 8
ROW_VERSION = 1            # bump when what `_validity_and_operating_point` computes changes


def _validity_and_operating_point(run) -> dict:
    c = run.config
    task = c.task_obj()
    r = head.tau(run.model, task, c.n_train, c.T_train, count=EVAL_COUNT, seed=probe_seed("in_distribution", c.seed))
    tokens, labels = probe_set(task, "tail", c.seed, c.n_train, TAIL_COUNT)
    with torch.no_grad():
        solved = (run.model(tokens, c.T_train).argmax(-1)[:, 1:] == labels[:, 1:]).all(1)
    return {"n_solved": r.n_solved, "position1_first_loop": float(r.position1_first_loop) if r.n_solved else None,
            "tail_at_T_train": tail.metrics_row(run.model, tokens, c.T_train, solved, PROBES)}


def contest_row(run, n_ood: int) -> dict:
    """One seed of a contest read at its length n_ood (both readings kept beside the run)."""
    c = run.config
    row = dict(kept_seed_metrics(run, n_ood, c.loops_at(n_ood), EVAL_COUNT, PROBES, CONV_FACTOR, TAIL_COUNT))
    extra = reading_cache.reading(run, "contest-operating-point", ROW_VERSION, lambda: _validity_and_operating_point(run),
                                  params={"eval_count": EVAL_COUNT, "tail_count": TAIL_COUNT, "probes": PROBES})
    valid = extra["n_solved"] >= head.MIN_SOLVED and head.decoder_valid(extra["position1_first_loop"])
    row.update(learned=bool(run.metrics["final_eval"]["seq_acc"] >= LEARNED), decoder_valid=bool(valid),
               position1_first_loop=extra["position1_first_loop"], n_solved=extra["n_solved"],
               # an infinite v_tau (a flat tau, or one that falls with position) is the fastest reading, not a
               # missing one: the entry drops a seed's primary metric only for validity or too few solved inputs
               primary=row[PRIMARY] if valid and not np.isnan(row[PRIMARY]) else float("nan"),
               at_T_train=extra["tail_at_T_train"])
    return row


def _why_no_primary(row: dict) -> str:
    if row["n_solved"] < head.MIN_SOLVED:
        return f"{row['n_solved']} solved inputs, < {head.MIN_SOLVED}"
    if not row["decoder_valid"]:
        return f"readout invalid: position 1 at loop 1 on {row['position1_first_loop']:.2f} of solved inputs"
    return f"{PRIMARY} undefined"


def _exact(values, targets) -> dict:
    """The exact AUROC test of one metric over the seeds where it is finite; None where it cannot run."""
    x, y = np.asarray(values, float), np.asarray(targets, float)
    keep = np.isfinite(x)
    pos = y[keep] >= THRESHOLD
    if keep.sum() < 3 or pos.all() or (~pos).all():
        return {"n": int(keep.sum()), "auroc": None, "p": None}
    return {"n": int(keep.sum()), "auroc": round(auroc(x[keep], pos).value, 4), "p": auroc_exact_p(x[keep], pos)}


def contest_tests(rows: list[dict]) -> dict:
    """One contest: the split, the power condition, the head test (AUROC exact + Spearman permutation)
    and the tail metrics' exact tests at T_train and past tau*."""
    target = [r["ood_acc"] for r in rows]
    prim = np.array([r["primary"] for r in rows], float)
    has = ~np.isnan(prim)
    # both head tests are rank tests: read on ranks, an infinite speed ranks first and changes neither statistic
    prim[has] = rankdata(prim[has])
    gen = np.array(target)[has] >= THRESHOLD
    out = {"seeds": len(rows), "with_primary": int(has.sum()), "generalize": int(gen.sum()),
           "fail": int((~gen).sum()), "powered": bool(gen.sum() >= MIN_SIDE and (~gen).sum() >= MIN_SIDE)}
    out["head"] = _exact(prim, target)
    t = np.array(target)[has]
    out["head"]["rho_p"] = (spearman_permutation_p(prim[has], t) if has.sum() >= 3 and np.ptp(prim[has]) > 0
                            and np.ptp(t) > 0 else None)
    out["head"]["rho"] = round(spearman(prim[has], t).value, 4) if out["head"]["rho_p"] is not None else None
    a, rho = out["head"]["auroc"], out["head"]["rho"]
    same_sign = a is not None and rho is not None and (a - 0.5) * rho > 0
    out["head"]["direction"] = None if a is None or a == 0.5 else ("higher generalizes" if a > 0.5 else "lower generalizes")
    out["head"]["predicts"] = bool(same_sign and out["head"]["p"] < ALPHA and out["head"]["rho_p"] < ALPHA)
    out["tail_at_T_train"] = {m: _exact([r["at_T_train"][m] for r in rows], target) for m in TAIL_METRICS}
    out["tail_past_tau_star"] = {m: _exact([r[m] for r in rows], target) for m in TAIL_METRICS}
    return out


def _holm_count(tests: dict, where: str) -> tuple[int, int]:
    """(tail tests Holm-significant, tail tests defined) over the contests in `tests`."""
    ps = [e["p"] for t in tests.values() for e in t[where].values() if e["p"] is not None]
    return (sum(holm(ps, ALPHA)) if ps else 0), len(ps)


def contests_confirm_results(tests: dict) -> dict:
    """The readings the entry's rules (H) and (T) consume, from `contest_tests` per contest."""
    powered = {name: t for name, t in tests.items() if t["powered"]}
    directions = [t["head"]["direction"] for t in powered.values() if t["head"]["predicts"]]
    major = max(sorted(set(directions)), key=directions.count) if directions else None     # a tie: alphabetical
    h = sum(t["head"]["predicts"] and t["head"]["direction"] == major for t in powered.values())
    k = len(powered)
    tail_sig, tail_defined = _holm_count(powered, "tail_at_T_train")
    past_sig, past_defined = _holm_count(powered, "tail_past_tau_star")
    return {
        "contests": len(tests), "powered_contests": k,
        "split": {name: [t["generalize"], t["with_primary"]] for name, t in tests.items()},
        "powered": {name: t["powered"] for name, t in tests.items()},
        "head_predicting_contests": h, "head_direction": major,
        # rule (H): h / K, read only with K >= 2 (the precondition)
        "head_predicting_share": round(h / k, 3) if k else None,
        "head_by_contest": {name: {key: t["head"][key] for key in ("auroc", "p", "rho", "rho_p", "predicts")}
                            for name, t in tests.items()},
        # rule (T): Holm-significant tail tests at T_train over the powered contests
        "tail_significant_at_T_train": tail_sig if tail_defined else None, "tail_defined_at_T_train": tail_defined,
        "tail_significant_past_tau_star": past_sig if past_defined else None, "tail_defined_past_tau_star": past_defined,
        "tail_by_contest": {name: {m: [e["auroc"], None if e["p"] is None else round(e["p"], 4)]
                                   for m, e in t["tail_at_T_train"].items()} for name, t in tests.items()},
    }


def show(profile: str = "quick") -> dict | None:
    """Notebook 07's confirmatory section: once every run of the study is stored, read each seed at its
    contest's length, record the readings for the ledger and print them with the verdicts; until then
    say how many runs are in (or that P41-pilot's pick is not recorded yet) and record nothing."""
    if plan.CONFIRM_TARGETS is None:
        print(f"{ENTRY}: waiting for P41-pilot's picks (plan.CONFIRM_TARGETS is not recorded yet; no runs listed)")
        return None
    contests = plan.study_contests()
    study = plan.study()
    waiting = tuple(c for c in study if not store.is_done(c) and not store.is_diverged(c))
    print(store.study_progress(ENTRY, study, waiting))
    if waiting:
        return None
    if not contests:
        print(f"{ENTRY}: P41-pilot found no split in any contract, so no contest was run")
    # a diverged run has no reading: its seed leaves its contest's head and tail tests (PREREGISTRATION,
    # third transcription notes), printed below
    diverged = {name: [c.seed for c in cfgs if store.is_diverged(c)] for name, cfgs in contests.items()}
    rows = {name: [contest_row(store.load_run(c), plan.CONFIRM_TARGETS[name]) for c in cfgs if store.is_done(c)]
            for name, cfgs in contests.items()}
    tests = {name: contest_tests(rs) for name, rs in rows.items()}
    out = {**contests_confirm_results(tests), "diverged_seeds": diverged}
    record_confirmatory(ENTRY, out)
    for name, t in tests.items():
        hd = t["head"]
        print(f"{name} at n = {plan.CONFIRM_TARGETS[name]}: {t['generalize']} of {t['with_primary']} seeds generalize "
              f"(powered: {t['powered']}); {PRIMARY}: AUROC {hd['auroc']} (exact p {hd['p']}), rho {hd['rho']} "
              f"(permutation p {hd['rho_p']}), predicts {hd['predicts']}")
        for seed in diverged[name]:
            print(f"  seed {seed}: diverged (FAILED marker): not learned, no reading; in neither test")
        for r in rows[name]:
            if np.isnan(r["primary"]):
                print(f"  seed {r['seed']}: no primary metric ({_why_no_primary(r)}); in the tail tests, not the head's")
    print(f"tail tests at T_train Holm-significant: {out['tail_significant_at_T_train']} of "
          f"{out['tail_defined_at_T_train']}; past tau*: {out['tail_significant_past_tau_star']} of "
          f"{out['tail_defined_past_tau_star']}")
    print_confirmatory(CONFIRMATORY)
    return out
