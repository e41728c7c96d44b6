"""Seed-contest evaluation (Paper A §8): metric-vs-target statistics on constructed data, the OOD
target length, and one contest row read from a tiny trained run."""
import json
import math
from dataclasses import replace

import numpy as np
import pytest

from lib import claims, profiles, rules, store
from lib.config import RunConfig
from lib.instruments import head
from lib.sections.s07_seed_contests import read as contest

R, P, N = "reproduced", "partly", "not reproduced"


def test_perfect_and_reversed_predictors():
    y = np.array([0.0, 0.1, 0.2, 0.3, 0.6, 0.7, 0.8, 0.9])      # 4 below, 4 at or above 0.5
    e = contest.evaluate_metric(np.arange(8.0), y, threshold=0.5)
    assert e["n"] == 8 and e["rho"].value == pytest.approx(1.0) and e["auroc"].value == pytest.approx(1.0)
    assert contest.significant(e) and contest.discrimination(e) == pytest.approx(1.0)
    r = contest.evaluate_metric(-np.arange(8.0), y, threshold=0.5)   # a reversed predictor still predicts
    assert r["auroc"].value == pytest.approx(0.0) and contest.significant(r)
    assert contest.discrimination(r) == pytest.approx(1.0)


def test_known_partial_auroc_and_dropped_nans():
    # scores of the 2 positives vs 2 negatives: one of four pairs wrongly ordered -> 0.75
    x = [0.1, 0.6, float("nan"), 0.5, 0.9]
    y = [0.0, 0.0, 1.0, 1.0, 1.0]
    e = contest.evaluate_metric(x, y, threshold=0.5)
    assert e["n"] == 4 and e["auroc"].value == pytest.approx(0.75)
    assert e["rho"].value == pytest.approx(np.corrcoef([1, 3, 2, 4], [1.5, 1.5, 3.5, 3.5])[0, 1])


def test_undefined_cases_are_none_not_numbers():
    e = contest.evaluate_metric([1.0, 2.0, 3.0, 4.0], [0.1, 0.2, 0.3, 0.4], threshold=0.5)   # one class
    assert e["auroc"] is None and e["rho"].value == pytest.approx(1.0)
    assert not contest.significant(e) and math.isnan(contest.discrimination(e))
    c = contest.evaluate_metric([2.0, 2.0, 2.0, 2.0], [0.1, 0.9, 0.3, 0.6], threshold=0.5)  # constant metric
    assert c["rho"] is None and c["auroc"].value == pytest.approx(0.5)
    few = contest.evaluate_metric([1.0, float("nan"), float("nan"), 2.0], [0.1, 0.9, 0.3, 0.6], threshold=0.5)
    assert few["n"] == 2 and few["rho"] is None and few["auroc"] is None
    with pytest.raises(ValueError, match="values, targets"):
        contest.evaluate_metric([1.0, 2.0], [0.1, 0.2, 0.3], threshold=0.5)


def test_ood_length_is_beyond_training_and_loops_scale_with_it():
    plan = profiles.contests("quick")
    # the proportional schedule's one rule: loops = ceil(n / demand), demand = n_train / T_train
    assert plan.n_ood("S4 n8 T6") == 15 and plan.T_ood("S4 n8 T6") == 12 and plan.T_ood("S4 n8 T4") == 8
    assert plan.T_ood("S4 n8 T8") == 22
    with pytest.raises(ValueError, match="targets"):     # never the training length itself
        replace(plan, targets={k: 8 for k in plan.contests})
    assert profiles.contests("paper").n_ood("S4 n16 T8") == 32


def test_contests_are_group_word_problems_at_the_contest_seeds():
    plan = profiles.contests("quick")
    assert len(plan.contests) == 3 and all(len(cfgs) == 16 for cfgs in plan.contests.values())
    for name, cfgs in plan.contests.items():
        assert [c.seed for c in cfgs] == list(profiles.CONTEST_SEEDS)
        assert cfgs[0] == replace(profiles.contest_contracts("quick")[name], seed=cfgs[0].seed)
        assert cfgs[0].task == "S4" and cfgs[0].schedule == "proportional"
    with pytest.raises(ValueError, match="SEEDS: seeds \\[1\\] are the pilot's"):
        profiles.contests("quick", seeds=[1, 3])
    with pytest.raises(ValueError, match="SEEDS: must be a non-empty list"):
        profiles.contests("quick", seeds=[])
    with pytest.raises(ValueError, match="SEEDS: must be a non-empty list"):
        profiles.contests("quick", seeds=5)
    with pytest.raises(ValueError, match="SEEDS: duplicate seeds \\[3\\]"):
        profiles.contests("quick", seeds=[3, 3, 4])
    assert [c.seed for c in profiles.contests("quick", seeds=range(3, 6)).contests["S4 n8 T6"]] == [3, 4, 5]


def test_seed_row_reads_a_trained_run(store_root):
    cfg = RunConfig(experiment="contest_test", task="parity", n_train=4, T_train=4, n_layers=1, d_model=16,
                    n_heads=2, batch=16, max_steps=30, warmup=5, eval_count=32)
    run = store.get_or_train(cfg)
    row = contest.seed_metrics(run, n_ood=6, T_ood=6, eval_count=64, probes=2, conv_factor=2)
    assert set(row) == {"seed", "task", "in_acc", "ood_acc", "tau_star", "fixed_fraction", *contest.HEAD_METRICS,
                        *contest.TAIL_METRICS}
    expected = head.accuracy_by_loops(run.model, cfg.task_obj(), 6, 6, count=64, seed=8000).seq_acc[-1]
    assert row["ood_acc"] == pytest.approx(float(expected)) and 0.0 <= row["in_acc"] <= 1.0
    one_loop = store.get_or_train(replace(cfg, T_train=1))
    row1 = contest.seed_metrics(one_loop, n_ood=6, T_ood=2, eval_count=64, probes=2, conv_factor=2)
    assert all(math.isnan(row1[m]) for m in ("skip1", "jac_align", "cosine", "cka"))
    for _ in range(2):                                      # computed and kept, then read back from the file
        kept = contest.kept_seed_metrics(one_loop, n_ood=6, T_ood=2, eval_count=64, probes=2, conv_factor=2)
        assert json.dumps(kept, sort_keys=True) == json.dumps(row1, sort_keys=True)       # NaN included
    assert len(list((one_loop.path / "readings").glob("contest-seed-metrics-*.json"))) == 1


def _table(ood, metric):
    rows = [dict(seed=i, in_acc=1.0, ood_acc=o, **{m: float(i) for m in contest.HEAD_METRICS + contest.TAIL_METRICS})
            for i, o in enumerate(ood)]
    for r, v in zip(rows, metric):
        r["v_tau"] = v
    return rows


def test_contest_results_on_constructed_tables():
    ood = [0.0, 0.1, 0.2, 0.3, 0.6, 0.7, 0.8, 0.9]
    # contest a: v_tau orders the seeds perfectly; every other metric (= seed index) too
    # contest b: every seed below the threshold -> nothing testable
    table = {"a": _table(ood, range(8)), "b": _table([0.1] * 8, range(8))}
    summary = contest.summarize(table, 0.5)
    res = contest.contest_results(table, summary)
    assert res["contests_tested"] == 1 and res["head_best_auroc_min"] is None     # not every contest tested
    assert res["head_significant_contests"] == 1
    # the primary metric (v_tau here) predicts in contest a; contest b is untested (None, not a miss)
    assert contest.PRIMARY == "v_tau" and res["primary_significant_contests"] == 1
    assert res["primary_auroc"]["a"][0] == pytest.approx(1.0) and res["primary_auroc"]["b"] is None
    hits, defined = contest.significant_hits(summary, contest.TAIL_METRICS)
    assert defined == len(contest.TAIL_METRICS) and res["tail_significant_count"] == len(hits) == defined
    assert res["ood_spread"] == {"a": [0.0, 0.9], "b": [0.1, 0.1]}
    assert contest.metric_verdict(summary["a"]["v_tau"], "head") == "predicts (as the paper)"
    assert contest.metric_verdict(summary["a"]["aa"], "tail") == "predicts (paper: no signal)"
    assert contest.metric_verdict(summary["b"]["v_tau"], "head") == "untested"
    both = contest.contest_results({"a": table["a"]}, {"a": summary["a"]})
    assert both["head_best_auroc_min"] == pytest.approx(1.0)
    none = contest.contest_results({"b": table["b"]}, {"b": summary["b"]})
    assert none["tail_significant_count"] is None and none["contests_tested"] == 0
    assert none["tail_excess_over_chance"] is None and none["tail_defined_by_contest"] == {"b": 0}
    # five tail AUROCs defined, all significant: chance alone gives at most 1 of 5 at 95 %
    assert res["tail_defined_by_contest"] == {"a": 5, "b": 0} and res["tail_chance_bound"] == 1
    assert res["tail_excess_over_chance"] == 5 - 1 and res["cost"] is None


def test_the_primary_metric_counts_contests_in_one_direction():
    ood = [0.0, 0.1, 0.2, 0.3, 0.6, 0.7, 0.8, 0.9]
    forward, reverse = _table(ood, range(8)), _table(ood, range(8, 0, -1))
    table = {"a": forward, "b": reverse, "c": forward}
    res = contest.contest_results(table, contest.summarize(table, 0.5), costs={"a": {"cpu_s": 1.0}})
    assert res["primary_significant_by_direction"] == {"higher generalizes": 2, "lower generalizes": 1}
    assert res["primary_significant_contests"] == 2 and res["cost"] == {"a": {"cpu_s": 1.0}}
    flipped = {"a": forward, "b": reverse}
    assert contest.contest_results(flipped, contest.summarize(flipped, 0.5))["primary_significant_contests"] == 1


def test_pilot_target_length_rule():
    from searches.contest_pilot import target_length
    # 2 n_train splits: it is the target even when a longer length also splits
    acc = {12: [0.9, 0.8, 0.3], 16: [0.6, 0.2, 0.1], 20: [0.55, 0.1, 0.0], 24: [0.1, 0.0, 0.0]}
    assert target_length(acc, 8) == 16
    # 2 n_train does not split (every seed above): the longest length that does
    acc = {12: [0.9, 0.9, 0.9], 16: [0.9, 0.8, 0.7], 20: [0.7, 0.4, 0.6], 22: [0.6, 0.3, 0.2], 24: [0.2, 0.1, 0.0]}
    assert target_length(acc, 8) == 22
    # every seed on one side everywhere: no target; lengths outside (n_train, 3 n_train] are not read
    assert target_length({8: [0.9, 0.1], 16: [0.9, 0.9], 25: [0.9, 0.1]}, 8) is None
    # the threshold counts as generalizing (>=)
    assert target_length({16: [0.5, 0.49]}, 8) == 16


def test_pilot_seeds_never_enter_a_contest():
    from searches.contest_pilot import OUT, PILOT_SEEDS
    assert not set(PILOT_SEEDS) & set(profiles.CONTEST_SEEDS) and len(profiles.CONTEST_SEEDS) == 16
    pilot = json.loads(OUT.read_text())                      # the seeds the committed pilot actually read
    assert all(p["pilot_seeds"] == list(profiles.CONTEST_PILOT_SEEDS) for p in pilot.values())
    quick = profiles.contest_contracts("quick")
    # at T = 8 and T = 4 a contest seed's run is the tail population's run of that seed (one stored run);
    # T = 6 is not a budget-law contract
    tail = set(profiles.tail_saturation("quick", seeds=(5,)).configs())
    assert {profiles.contest_config(quick[k], 5) for k in ("S4 n8 T8", "S4 n8 T4")} <= tail
    assert profiles.contest_config(quick["S4 n8 T6"], 5) not in tail


def test_quick_contest_targets_are_the_pilots():
    import json
    from pathlib import Path
    pilot = json.loads((Path(__file__).resolve().parent.parent / "searches/results/contest_pilot.json").read_text())
    assert profiles.CONTEST_TARGETS == {name: r["target_n"] for name, r in pilot.items() if r["target_n"] is not None}
    assert set(profiles.CONTEST_TARGETS) == set(profiles.contest_contracts("quick"))


def test_smallest_p_is_the_exact_permutation_bound_by_brute_force():
    from itertools import combinations
    for seeds, k in ((16, 1), (16, 3), (6, 2), (5, 0)):
        # a perfect score ranks the k generalizing seeds on top; count the labelings that rank at least as well
        labelings = list(combinations(range(seeds), k))
        one_sided = sum(set(c) == set(range(seeds - k, seeds)) for c in labelings) / len(labelings)
        assert contest.smallest_p(seeds, k) == pytest.approx(min(1.0, 2 * one_sided))
    assert contest.smallest_p(16, 1) == 0.125 and contest.smallest_p(16, 3) == pytest.approx(2 / 560)
    with pytest.raises(ValueError, match="generalize"):
        contest.smallest_p(16, 17)
    assert contest.describe_split("c", [0.0, 0.6, 0.2, 0.5], 0.5) == (
        "c: 2/4 seeds generalize (OOD acc >= 0.5); OOD accuracy range 0.000..0.600; the smallest p-value any "
        "metric can reach with this split: 0.333")


def test_the_contest_claim_needs_three_group_word_problem_contests():
    c = claims.claim("primary_significant_contests")
    tested = {"a": [0.9, 0.8, 1.0], "b": [0.9, 0.8, 1.0], "c": [0.9, 0.8, 1.0]}
    powered = {"a": 0.001, "b": 0.001, "c": 0.001}
    groups = dict(primary_auroc=tested, tasks={"a": "S4", "b": "S4", "c": "A5"}, smallest_p=powered)
    assert rules.verdict(c, 3, True, groups) == R
    one_of_16 = {**groups, "smallest_p": {**powered, "b": 0.125}}          # a contest with 1 positive of 16
    assert rules.verdict(c, 0, True, one_of_16) == "not measured"
    pilot = dict(primary_auroc=tested, tasks={"a": "parity", "b": "parity", "c": "parity"})
    assert rules.verdict(c, 0, True, pilot) == "not measured"          # a parity pilot is not the paper's contest
    two = dict(primary_auroc=dict(list(tested.items())[:2]), tasks={"a": "S4", "b": "S4"})
    assert rules.verdict(c, 2, True, two) == "not measured"


def test_the_tail_contest_claim_needs_a_tail_reading_in_every_contest():
    c = claims.claim("tail_excess_over_chance")
    tested = {"a": [0.9, 0.8, 1.0], "b": [0.9, 0.8, 1.0], "c": [0.9, 0.8, 1.0]}
    every = dict(primary_auroc=tested, tasks={"a": "S4", "b": "S4", "c": "S4"},
                 tail_defined_by_contest={"a": 5, "b": 2, "c": 1}, smallest_p={"a": 0.001, "b": 0.001, "c": 0.001})
    assert rules.verdict(c, 0, True, every) == R
    assert rules.verdict(c, 0, True, {**every, "smallest_p": {"a": 0.001, "b": 0.125, "c": 0.001}}) == "not measured"
    one_without = {**every, "tail_defined_by_contest": {"a": 5, "b": 0, "c": 1}}   # a contest with no fixed point read
    assert rules.verdict(c, 0, True, one_without) == "not measured"
    assert rules.verdict(c, 0, True, {**every, "tail_defined_by_contest": {}}) == "not measured"
    untested = {**every, "primary_auroc": {**tested, "c": None}}                  # seeds on one side in contest c
    assert rules.verdict(c, 0, True, untested) == "not measured"
