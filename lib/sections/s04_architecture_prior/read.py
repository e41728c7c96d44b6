"""The architecture prior (Paper A §6.2, App. D): which algorithm a trained run selected, read from
tau, and how far it carries in length.

A serial algorithm settles position i about one loop after position i - 1, so tau at the last
position grows like n; a parallel (Hillis-Steele) scan settles every position after about log n
layers. `head.tau_against_n` reads the class (flat / log / linear) over the lengths a run solves.
A claim about the algorithm a run learned needs a run that learned its training distribution
(whole-word accuracy >= `learned_acc` at its contract): an unlearned run's class is shown, never
counted. Every length gets the loops the run gets there (`RunConfig.loops_at`): a tied model loops
in proportion beyond its training length, an untied model has only its depth. The untied model's
"loops" are its blocks, read with the same instruments.
"""
from __future__ import annotations

import numpy as np

from ...instruments import head
from ...instruments.contract import final_accuracy_by_length
from ...probes import probe_seed


def families(plan) -> dict[str, tuple]:
    """The plan's configs by family: 'tied', 'untied', 'tied + scan', 'untied + scan', and for each
    extra positional encoding (paper profile) '<tied|untied> + <encoding>'. A family may be empty."""
    out = {"tied": plan.tied, "untied": plan.untied, "tied + scan": plan.tied_scan, "untied + scan": plan.untied_scan}
    for cfg in plan.extra:
        name = ("tied" if cfg.tied else "untied") + " + " + cfg.pos
        out[name] = out.get(name, ()) + (cfg,)
    return out


def prior_row(name: str, run, test_ns, long_ns, count: int = 512, learned_acc: float = head.LEARNED) -> dict:
    """One run of the architecture prior: tau at its contract (the frontier map and whether it
    learned), tau at the last position against n with its scaling class, and whole-word accuracy at
    every test and extrapolation length."""
    c = run.config
    contract = head.tau(run.model, c.task_obj(), c.n_train, c.T_train, count=count,
                        seed=probe_seed("in_distribution", c.seed), streaming=c.streaming)
    scaling = head.tau_against_n(run.model, c, test_ns, count)
    return dict(name=name, seed=c.seed, config=c, n_params=run.metrics["n_params"], tau=contract,
                learned=contract.solved_fraction >= learned_acc, ns=scaling.ns, last=scaling.last, fit=scaling.fit,
                extrapolation=final_accuracy_by_length(run, tuple(dict.fromkeys(tuple(test_ns) + tuple(long_ns))), count))


def describe_row(r: dict) -> str:
    """Two lines for one run: the decoder's validity, and tau(last) against n with its scaling class."""
    head_ = f"{r['name']:14s} seed {r['seed']}:"
    fit = r["fit"].cls + " (" + r["fit"].note + ")" if r["fit"] else "too few lengths solved"
    return (f"{head_} decoder reads position 1 at the first loop/block on {r['tau'].position1_first_loop:.2f} of "
            f"solved inputs (valid at >= {head.DECODER_VALID})\n{head_} solved {r['tau'].solved_fraction:.2f}; "
            f"tau(last) over n={r['ns']}: {np.round(r['last'], 2).tolist()} -> {fit}")


def describe_a5(run, acc: head.LoopAccuracy) -> str:
    """One line for an untied A5 control run: its size and training, and what it learned (`acc`: its
    `contract.at_contract` reading)."""
    c = run.config
    return (f"untied {c.task} seed {c.seed}: {len(run.model.block)} layers d={c.d_model}, {run.metrics['n_params']:,} parameters, "
            f"{run.metrics['steps']} steps, curriculum reached length {run.metrics['reached_length']} of {c.n_train}; "
            f"whole-word accuracy {acc.at(c.T_train):.3f}, per position {np.round(acc.position_acc[-1], 2).tolist()}")


def prior_rows(runs, test_ns, long_ns, count: int = 512, learned_acc: float = head.LEARNED) -> list[dict]:
    """`runs`: (family name, run) pairs; one `prior_row` each, in order."""
    return [prior_row(name, run, test_ns, long_ns, count, learned_acc) for name, run in runs]


def class_fraction(rows, names, cls: str) -> float | None:
    """Among the LEARNED runs of the named families, the fraction whose tau fits `cls` (a run with
    too few solved lengths counts as not fitting); None when no run of those families learned."""
    fits = [r["fit"] for r in rows if r["name"] in names and r["learned"]]
    return round(float(np.mean([f is not None and f.cls == cls for f in fits])), 3) if fits else None


def prior_results(rows, untied_a5, long_n: int) -> dict:
    """The ledger's numbers for §6.2.

    'Untied extrapolates worst' is compared within matched pairs only (same positional encoding:
    'tied + x' against 'untied + x'), and only where the tied family extrapolates at all (mean
    whole-word accuracy >= 0.5 at the longest length `long_n`); elsewhere it is not measured (None).
    The value is the largest (untied - tied) gap over those pairs: < 0 in every pair means untied is
    worst. 'The untied control fails A5' says something only if the same untied recipe learns S4:
    `untied_s4_learned_fraction` is the learned fraction of the 'untied' family (the A5 control's
    recipe: no positional encoding, width matched), which the ledger reads as the precondition.
    `untied_a5`: the untied A5 runs' `at_contract` readings; the best seed's whole-word accuracy is
    the value."""
    names = list(dict.fromkeys(r["name"] for r in rows))
    ood = {name: float(np.mean([r["extrapolation"][long_n] for r in rows if r["name"] == name])) for name in names}
    pairs = [(t, "untied" + t[len("tied"):]) for t in ood if t.startswith("tied") and "untied" + t[len("tied"):] in ood]
    measurable = [(t, u) for t, u in pairs if ood[t] >= 0.5]
    untied = [r["learned"] for r in rows if r["name"] == "untied"]
    key = lambda r: f"{r['name']} seed {r['seed']}"      # noqa: E731
    return {
        "untied_log_fraction": class_fraction(rows, {n for n in names if n.startswith("untied")}, "log"),
        "tied_linear_fraction": class_fraction(rows, {n for n in names if n.startswith("tied")}, "linear"),
        "tied_scan_linear_fraction": class_fraction(rows, {"tied + scan"}, "linear"),
        "scaling_classes": {key(r): (r["fit"].cls if r["fit"] else None) for r in rows},
        "r2_log_linear": {key(r): ([round(r["fit"].r2["log"], 3), round(r["fit"].r2["linear"], 3)]
                                   if r["fit"] and r["fit"].cls != "flat" else None) for r in rows},
        "ood_seq_acc": {name: round(v, 3) for name, v in ood.items()},
        "ood_length": long_n,
        "untied_minus_tied_ood": round(max(ood[u] - ood[t] for t, u in measurable), 3) if measurable else None,
        "untied_a5_seq_acc": round(float(max(acc.seq_acc[-1] for acc in untied_a5)), 3),
        "untied_s4_learned_fraction": round(float(np.mean(untied)), 3) if untied else None,
        "params": {key(r): r["n_params"] for r in rows},
        # decoder validity per family (the worst seed): position 1 read at the first loop / block
        "decoder_position1": {name: round(float(min(r["tau"].position1_first_loop for r in rows if r["name"] == name)), 3)
                              for name in names},
    }
