"""The C41-contests study: its plan (reserved seeds, queue order, the picks held equal to P41-pilot's log)
and its readings (`s07_seed_contests.confirm`, `s01_tail_saturation.confirm`) on constructed rows, with the
entry's rules applied through the ledger: each band reachable, the power condition and the positive
control refusing what could not fail."""
import json
from pathlib import Path

import numpy as np
import pytest

from lib import claims, confirmatory, rules
from lib.config import RESERVED_SEEDS
from lib.sections.common import STUDY_MODE
from lib.sections.s01_tail_saturation.confirm import READINGS, population_confirm_results
from lib.sections.s01_tail_saturation.read import METRICS
from lib.sections.s07_seed_contests import plan
from lib.sections.s07_seed_contests.confirm import contest_tests, contests_confirm_results
from lib.sections.s07_seed_contests.read import TAIL_METRICS

PICKED = {"S4 n8 T8": 22, "S4 n8 T6": 15, "S4 n8 T4": None}
PILOT_LOG = Path(__file__).parents[1] / "searches" / "results" / "pilot_p41_contest.jsonl"


def test_the_plan_lists_runs_only_for_picked_contracts_seed_by_seed():
    assert plan.study({}) == ()
    q = plan.study(PICKED)
    assert len(q) == 32 and [c.T_train for c in q[:4]] == [8, 6, 8, 6] and [c.seed for c in q[:3]] == [130, 130, 131]
    assert all(c.seed in RESERVED_SEEDS and c.mode == STUDY_MODE and c.experiment == "confirm_contests" for c in q)
    assert {c.seed for c in q} == set(range(130, 146))
    with pytest.raises(ValueError, match="targets: unknown contracts"):
        plan.study({"S4 n8 T5": 12})


def test_the_recorded_picks_are_the_pilots():
    """CONFIRM_TARGETS is None until P41-pilot's contest part is read; then it is the logged pick."""
    picks = [json.loads(line) for line in PILOT_LOG.read_text().splitlines() if line.strip()] if PILOT_LOG.exists() else []
    picks = [r for r in picks if r.get("kind") == "pick"]
    assert plan.CONFIRM_TARGETS == (picks[-1]["pick"] if picks else None)
    assert confirmatory.study("C41-contests") == plan.study()


def seed_row(primary, ood, tail=0.9, past=1.0):
    return {"primary": primary, "ood_acc": ood, "at_T_train": {m: tail for m in TAIL_METRICS},
            **{m: past for m in TAIL_METRICS}}


def contest(k_generalize=8, perfect=True, tail=None):
    """16 seeds, k generalize; the primary metric ranks them perfectly (or not at all); tail metrics
    constant, or `tail(i)` per seed."""
    rows = []
    for i in range(16):
        gen = i >= 16 - k_generalize
        primary = float(i) if perfect else float(i % 2)      # alternating: AUROC 0.5
        r = seed_row(primary, 0.9 if gen else 0.1)
        if tail is not None:
            r["at_T_train"] = {m: tail(i) for m in TAIL_METRICS}
        rows.append(r)
    return rows


def conf(results, key, readings="C41-contests"):
    rules.record_confirmatory(readings, results)
    return claims.confirmatory_verdict(claims.claim(key))[0]


def test_three_perfect_contests_reproduce_the_head_and_a_flat_tail_reproduces_the_null(store_root):
    tests = {name: contest(tail=lambda i: 0.5 + 0.01 * (i % 3)) for name in ("a", "b", "c")}
    out = contests_confirm_results({n: contest_tests(r) for n, r in tests.items()})
    assert out["powered_contests"] == 3 and out["head_predicting_contests"] == 3
    assert out["head_by_contest"]["a"]["p"] == pytest.approx(2 / 12870) and out["head_direction"] == "higher generalizes"
    assert conf(out, "primary_significant_contests") == "reproduced"
    assert out["tail_significant_at_T_train"] == 0 and conf(out, "tail_excess_over_chance") == "reproduced"


def test_a_tail_metric_that_ranks_perfectly_everywhere_is_not_reproduced(store_root):
    tests = {name: contest(tail=lambda i: float(i)) for name in ("a", "b", "c")}
    out = contests_confirm_results({n: contest_tests(r) for n, r in tests.items()})
    assert out["tail_significant_at_T_train"] == 15 and conf(out, "tail_excess_over_chance") == "not reproduced"


def test_contests_without_power_do_not_count_and_two_are_needed(store_root):
    tests = {"a": contest(), "b": contest(k_generalize=3), "c": contest(k_generalize=2)}
    out = contests_confirm_results({n: contest_tests(r) for n, r in tests.items()})
    assert out["powered"] == {"a": True, "b": False, "c": False} and out["powered_contests"] == 1
    assert conf(out, "primary_significant_contests") == "not measured"


def test_the_tail_null_needs_a_positive_control(store_root):
    tests = {name: contest(perfect=False, tail=lambda i: 0.5 + 0.01 * (i % 3)) for name in ("a", "b", "c")}
    out = contests_confirm_results({n: contest_tests(r) for n, r in tests.items()})
    assert out["powered_contests"] == 3 and out["head_predicting_contests"] == 0
    assert conf(out, "primary_significant_contests") == "not reproduced"
    assert out["tail_significant_at_T_train"] == 0 and conf(out, "tail_excess_over_chance") == "not measured"


def test_some_contests_predicting_read_partly(store_root):
    tests = {"a": contest(), "b": contest(), "c": contest(perfect=False)}
    out = contests_confirm_results({n: contest_tests(r) for n, r in tests.items()})
    assert out["head_predicting_contests"] == 2 and conf(out, "primary_significant_contests") == "partly"


def test_two_contests_as_the_pilot_left_them_read_each_band_of_the_head_rule(store_root):
    """P41-pilot left two contests (T = 6 had no split): K = 2, so one predicting reads partly, both
    reproduced, and two predicting in opposite directions count one (h = 1: partly)."""
    both = {"S4 n8 T8": contest(), "S4 n8 T4": contest()}
    out = contests_confirm_results({n: contest_tests(r) for n, r in both.items()})
    assert out["powered_contests"] == 2 and conf(out, "primary_significant_contests") == "reproduced"
    one = {"S4 n8 T8": contest(), "S4 n8 T4": contest(perfect=False)}
    out = contests_confirm_results({n: contest_tests(r) for n, r in one.items()})
    assert out["head_predicting_contests"] == 1 and conf(out, "primary_significant_contests") == "partly"
    flipped = [dict(r, primary=-r["primary"]) for r in contest()]
    out = contests_confirm_results({n: contest_tests(r) for n, r in {"S4 n8 T8": contest(), "S4 n8 T4": flipped}.items()})
    assert out["head_predicting_contests"] == 1 and conf(out, "primary_significant_contests") == "partly"
    unpowered = {"S4 n8 T8": contest(), "S4 n8 T4": contest(k_generalize=3)}
    out = contests_confirm_results({n: contest_tests(r) for n, r in unpowered.items()})
    assert out["powered_contests"] == 1 and conf(out, "primary_significant_contests") == "not measured"


def test_a_seed_without_a_primary_metric_is_printed_with_its_reason():
    from lib.sections.s07_seed_contests.confirm import _why_no_primary
    assert "3 solved inputs" in _why_no_primary({"n_solved": 3, "decoder_valid": False, "position1_first_loop": None})
    assert "readout invalid" in _why_no_primary({"n_solved": 40, "decoder_valid": False, "position1_first_loop": 0.71})


def pop_row(i, tau_star=3, budget=None, ood=None):
    """A learned model at T_train = 8 reaching its fixed point at tau_star; tail metrics at T_train
    `budget(i)` (default: random), accuracy at n = 16 `ood(i)` (default: random)."""
    rng = np.random.default_rng(i)
    return {"learned": True, "tau_star": tau_star, "T_train": 8, "reached": True, "reached_long_window": True,
            "converged": {"raw": 1.0},
            "ood_acc": 0.9, "ood_at_loops": rng.uniform() if ood is None else ood(i), "v_tau": 1.0 + 0.01 * i,
            "prop1": {"tau_star": tau_star, "holds": True},
            "budget": budget(i) if budget else {m: rng.uniform() for m in METRICS}}


def test_the_population_rules_on_constructed_models(store_root):
    rows = [pop_row(i, budget=lambda i: {"skip1": 1.0, "jac_align": 0.95 + 0.001 * i, "cosine": 0.99, "cka": 0.99,
                                         "aa": 0.9}) for i in range(12)]
    out = population_confirm_results(rows)
    assert out["premise_models"] == 12 and out["fixed_point_share"] == 1.0
    assert conf(out, "fixed_point_fraction", READINGS) == "reproduced"
    assert conf(out, "jac_align_min_premise", READINGS) == "reproduced"
    # skip1 (and cosine, cka, aa) constant: the correlation null cannot be read (a constant metric has no rho)
    assert not out["correlation_powered"] and conf(out, "at_T_train_significant", READINGS) == "not measured"
    assert conf(out, "prop1_fraction", READINGS) == "reproduced"


def test_a_correlating_tail_metric_fails_the_population_null_and_few_models_are_not_read(store_root):
    rows = [pop_row(i, budget=lambda i: {m: float(i) for m in METRICS}, ood=lambda i: i / 20) for i in range(12)]
    out = population_confirm_results(rows)
    assert out["correlation_powered"] and out["tail_significant_holm"] == 5
    assert conf(out, "at_T_train_significant", READINGS) == "not reproduced"
    out = population_confirm_results(rows[:9])
    assert conf(out, "skip1_min_premise", READINGS) == "not measured"
    late = [pop_row(i, tau_star=8) for i in range(12)]          # fixed point only at T_train: no premise
    assert population_confirm_results(late)["premise_models"] == 0


def test_band_edges_are_judged_unrounded_and_ranks_at_the_instruments_resolution(store_root):
    """skip1 = 226/238 = 0.94958 is below S's 0.95 (at 3 places it would read 0.95, partly); N ranks the
    metrics at tail.DECIMALS, so two models apart only below it tie."""
    rows = [pop_row(i, budget=lambda i: {"skip1": 226 / 238 if i == 0 else 1.0, "jac_align": 0.95, "cosine": 0.99,
                                         "cka": 0.99, "aa": 0.9}) for i in range(12)]
    out = population_confirm_results(rows)
    assert out["skip1_min_at_T_train"] == 226 / 238 and conf(out, "skip1_min_premise", READINGS) == "not reproduced"
    noise = [pop_row(i, budget=lambda i: {m: 0.9 + 1e-5 * i for m in METRICS}, ood=lambda i: i / 20) for i in range(12)]
    assert not population_confirm_results(noise)["correlation_powered"]         # constant at the resolution


def test_the_fixed_point_share_is_the_entrys_raw_criterion_alone(store_root):
    """F counts a model that settles on >= half of its 128 inputs, with or without a tau* over 256."""
    rows = [pop_row(i) for i in range(12)]
    for r in rows[:3]:
        r["reached"] = False                          # no tau* among 256 inputs
    for r in rows[3:5]:
        r["converged"] = {"raw": 0.4}                 # settles on fewer than half
    out = population_confirm_results(rows)
    assert out["fixed_point_share"] == 10 / 12 and out["fixed_point_share_with_tau_star"] == 9 / 12


def test_an_infinite_speed_ranks_first_rather_than_leaving_the_contest():
    rows = contest()
    rows[15]["primary"] = float("inf")                # the fastest seed, a generalizer
    rows[0]["primary"] = float("nan")                 # no primary metric (validity): leaves
    t = contest_tests(rows)
    assert t["with_primary"] == 15 and t["head"]["auroc"] == 1.0 and t["head"]["predicts"]


def test_the_per_run_readers_read_a_stored_run_and_keep_their_readings(store_root):
    from dataclasses import replace

    from lib import profiles, store
    from lib.sections.s01_tail_saturation.confirm import population_confirm_row
    from lib.sections.s07_seed_contests.confirm import contest_row
    run = store.get_or_train(replace(profiles.SMOKE_BASE, T_train=2, max_steps=10, seed=5))
    row = contest_row(run, 2 * run.config.n_train)
    assert {"primary", "ood_acc", "decoder_valid", "at_T_train", "learned"} <= set(row)
    assert set(row["at_T_train"]) == set(TAIL_METRICS) and isinstance(row["decoder_valid"], bool)
    pop = population_confirm_row(run)
    assert {"budget", "tau_star", "reached", "ood_at_loops", "v_tau", "prop1"} <= set(pop)
    kept = sorted(p.name.rsplit("-", 1)[0] for p in (run.path / "readings").iterdir())
    assert kept == ["c41-population-row", "contest-operating-point", "contest-seed-metrics", "population-fixed-length"]
    assert pop["budget"] == pytest.approx(population_confirm_row(run)["budget"], nan_ok=True)   # read back
    again = contest_row(run, 2 * run.config.n_train)                    # read back from the kept files
    assert json.dumps(again, sort_keys=True) == json.dumps(row, sort_keys=True)    # as text: nan == nan


def test_a_diverged_seed_leaves_its_contest_and_the_tail_population(store_root, monkeypatch, capsys):
    """The third transcription notes: a diverged run has not learned and has no reading. The readers do
    not wait for it; its seed is printed and leaves the head and tail tests and the tail population."""
    from lib import store
    from lib.sections.s01_tail_saturation import confirm as s01
    from lib.sections.s07_seed_contests import confirm as s07
    targets = {"S4 n8 T8": 16, "S4 n8 T6": None, "S4 n8 T4": 12}
    contests = plan.study_contests(targets)
    failed = contests["S4 n8 T4"][2]
    store.run_dir(failed).mkdir(parents=True)
    (store.run_dir(failed) / "FAILED").write_text(json.dumps({"error": "loss nan", "step": 9}))
    monkeypatch.setattr(plan, "CONFIRM_TARGETS", targets)
    monkeypatch.setattr(store, "is_done", lambda c: not store.is_diverged(c))
    monkeypatch.setattr(store, "load_run", lambda c: c)
    rows = {c: r for cfgs in contests.values() for c, r in zip(cfgs, contest())}
    monkeypatch.setattr(s07, "contest_row", lambda c, n: rows[c])
    out = s07.show()
    assert out["diverged_seeds"] == {"S4 n8 T8": [], "S4 n8 T4": [failed.seed]}
    assert out["split"] == {"S4 n8 T8": [8, 16], "S4 n8 T4": [8, 15]}
    assert f"seed {failed.seed}: diverged" in capsys.readouterr().out
    monkeypatch.setattr(s01, "population_confirm_row", lambda c: pop_row(c.seed))
    pop = s01.show()
    assert pop["models"] == 32 and pop["learned_models"] == 31 and pop["diverged_seeds"] == [failed.seed]
