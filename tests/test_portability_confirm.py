"""The C41-annealing study: its plan (the chain T = 8 -> 4 -> T_L and the scratch run per reserved seed,
the pick held equal to P41-pilot's) and its readings (`s06_portability.confirm`) on constructed rows,
with rules (A) and (L) applied through the ledger."""
import json
from pathlib import Path

import pytest

from lib import claims, confirmatory, rules
from lib.config import RESERVED_SEEDS, run_id
from lib.sections.common import STUDY_MODE
from lib.sections.s06_portability import plan
from lib.sections.s06_portability.confirm import annealing_confirm_results
from searches import p41_pilot

PILOT_LOG = Path(__file__).parents[1] / "searches" / "results" / "pilot_p41_annealing.jsonl"


def test_the_chain_and_its_scratch_run_per_seed():
    s = plan.annealing_study("b")
    assert [c.seed for c in s.start] == list(range(150, 162))
    for start, anneal, lottery, scratch in zip(s.start, s.anneal, s.lottery, s.scratch):
        assert (start.T_train, anneal.T_train, lottery.T_train, scratch.T_train) == (8, 4, 2, 2)
        assert anneal.init_from == run_id(start) and lottery.init_from == run_id(anneal) and not scratch.init_from
        assert lottery.max_steps == scratch.max_steps == 24000 and anneal.max_steps == start.max_steps == 12000
    q = s.configs()
    assert all(c.seed in RESERVED_SEEDS and c.mode == STUDY_MODE and c.experiment == "confirm_annealing" for c in q)
    assert all(q.index(c) > q.index(p) for c in q for p in q if c.init_from == run_id(p))      # parents first
    none = plan.annealing_study("none")
    assert not none.lottery_contract and none.lottery[0].T_train == 3
    with pytest.raises(ValueError, match="pick: unknown"):
        plan.annealing_study("c")


def test_the_candidates_and_the_recorded_pick_are_the_pilots():
    assert plan.LOTTERY_CANDIDATES == p41_pilot.CANDIDATES
    rows = [json.loads(line) for line in PILOT_LOG.read_text().splitlines() if line.strip()] if PILOT_LOG.exists() else []
    picks = [r for r in rows if r.get("kind") == "pick"]
    expected = None if not picks else (picks[-1]["pick"] or "none")
    assert plan.LOTTERY_PICK == expected
    assert confirmatory.study("C41-annealing") == plan.study()


def reading(seed, learned, steps, valid=True, v=1.0, T=3, budget=12000):
    return {"seed": seed, "T_train": T, "demand": 8 / T, "learned": learned, "acc": 0.99 if learned else 0.3,
            "steps_to_learn": steps if learned else budget + 1, "v_tau": v if valid else float("nan"),
            "v_frontier": v if valid else float("nan"), "valid": valid}


def study(lottery_learns=12, scratch_learns=6, lottery_steps=3000, scratch_steps=8000, v=8 / 3):
    lottery = [reading(150 + i, i < lottery_learns, lottery_steps, v=v) for i in range(12)]
    scratch = [reading(150 + i, i < scratch_learns, scratch_steps) for i in range(12)]
    return annealing_confirm_results(lottery, scratch, previous_demand=2.0)


def conf(results, key):
    rules.record_confirmatory("C41-annealing", results)
    return claims.confirmatory_verdict(claims.claim(key))[0]


def test_annealing_that_transfers_faster_and_bypasses_the_lottery_reproduces_both(store_root):
    r = study()
    assert r["transferred_share"] == 1.0 and r["faster_than_scratch"] and r["sign_test"][:2] == [12, 0]
    assert r["mcnemar"][:2] == [6, 0] and r["mcnemar"][2] == pytest.approx(1 / 64, abs=1e-4)
    assert conf(r, "anneal_transfer_fraction") == "reproduced" and conf(r, "anneal_minus_scratch") == "reproduced"


def test_learning_without_re_pricing_or_no_faster_than_scratch_is_not_full_transfer(store_root):
    r = study(v=2.0)                                   # speed stayed at T = 4's price: learned, not transferred
    assert r["transferred_share"] == 0.0 and conf(r, "anneal_transfer_fraction") == "not reproduced"
    r = study(lottery_steps=9000, scratch_steps=8000, scratch_learns=12)      # as slow as relearning
    assert not r["faster_than_scratch"] and r["anneal_transfer_score"] == 0.5
    assert conf(r, "anneal_transfer_fraction") == "partly"


def test_the_lottery_rule_needs_five_scratch_failures_and_reads_each_band(store_root):
    assert conf(study(scratch_learns=8), "anneal_minus_scratch") == "not measured"      # 4 failures: no power
    assert conf(study(scratch_learns=0), "anneal_minus_scratch") == "not measured"      # no scratch seed learns
    r = study(lottery_learns=9, scratch_learns=6)                # 3 of the 6 failures bypassed: p = 1/8
    assert r["anneal_minus_scratch"] == 0.25 and conf(r, "anneal_minus_scratch") == "partly"
    r = study(lottery_learns=5, scratch_learns=6)
    assert conf(r, "anneal_minus_scratch") == "not reproduced"


def test_the_frontier_estimator_is_reported_beside_and_does_not_enter_rule_a(store_root):
    lottery = [dict(reading(150 + i, True, 3000, v=8 / 3), v_frontier=2.0) for i in range(12)]   # frontier: T = 4's price
    scratch = [reading(150 + i, i < 6, 8000) for i in range(12)]
    r = annealing_confirm_results(lottery, scratch, previous_demand=2.0)
    assert r["transferred_share"] == 1.0 and r["transferred_share_frontier"] == 0.0
    assert conf(r, "anneal_transfer_fraction") == "reproduced"


def test_too_few_valid_readouts_leave_transfer_unmeasured_and_unlearned_runs_count_against_it(store_root):
    lottery = [reading(150 + i, True, 3000, valid=i < 7, v=8 / 3) for i in range(12)]
    scratch = [reading(150 + i, i < 6, 8000) for i in range(12)]
    r = annealing_confirm_results(lottery, scratch, previous_demand=2.0)
    assert r["lottery_runs_read"] == 7 and conf(r, "anneal_transfer_fraction") == "not measured"
    lottery = [reading(150 + i, i < 6, 3000, valid=i < 6, v=8 / 3) for i in range(12)]    # 6 fail, unreadable
    r = annealing_confirm_results(lottery, scratch, previous_demand=2.0)
    assert r["lottery_runs_read"] == 12 and r["transferred_share"] == 0.5
    with pytest.raises(ValueError, match="same seed order"):
        annealing_confirm_results(lottery, scratch[::-1], previous_demand=2.0)


def test_the_per_run_reader_reads_a_stored_run(store_root):
    from dataclasses import replace

    from lib import profiles, store
    from lib.sections.s06_portability.confirm import run_reading
    run = store.get_or_train(replace(profiles.SMOKE_BASE, T_train=2, max_steps=10, seed=5))
    r = run_reading(run)
    assert r["seed"] == 5 and r["steps_to_learn"] in (10, 11) and isinstance(r["valid"], bool)


def test_a_diverged_run_reads_as_not_learned_and_a_broken_chain_leaves_its_lottery_run_unlearned(store_root, monkeypatch):
    """The third transcription notes: the reader does not wait for a run that diverged, nor for the runs of
    its chain after it; the seed's lottery run reads as not learned (steps B + 1), as does a diverged
    scratch run."""
    from lib import store
    from lib.sections.s06_portability import confirm
    s = plan.annealing_study("a")
    for c in (s.start[0], s.scratch[1]):
        store.run_dir(c).mkdir(parents=True)
        (store.run_dir(c) / "FAILED").write_text(json.dumps({"error": "loss nan", "step": 9}))
    trained = set(s.configs()) - {s.start[0], s.anneal[0], s.lottery[0], s.scratch[1]}
    monkeypatch.setattr(plan, "LOTTERY_PICK", "a")
    monkeypatch.setattr(store, "is_done", lambda c: c in trained)
    monkeypatch.setattr(store, "load_run", lambda c: c)
    monkeypatch.setattr(confirm, "run_reading", lambda c: reading(c.seed, True, 3000 if c.init_from else 8000, v=8 / 3))
    out = confirm.show()
    assert out["diverged"] == {"lottery": [150], "scratch": [151]}
    assert out["lottery_learned_fraction"] == round(11 / 12, 3) and out["scratch_learned_fraction"] == round(11 / 12, 3)
    assert out["mcnemar"][:2] == [1, 1] and out["sign_test"][:2] == [11, 1]


def test_the_figure_marks_each_learned_run_without_a_readout_and_plots_both_estimators():
    import matplotlib
    matplotlib.use("Agg")
    from lib.sections.s06_portability import figures
    lottery = [reading(150 + i, i < 6, 3000, valid=i % 2 == 0, v=3.5, T=2) for i in range(12)]
    scratch = [reading(150 + i, i < 2, 8000, T=2) for i in range(12)]
    fig = figures.confirm_annealing(lottery, scratch, previous_demand=2.0, learned=0.9)
    left, right = fig.axes[:2]
    assert "annealed 6/12, scratch 2/12" in left.get_title()
    by_label = {line.get_label(): line for line in right.get_lines()}
    assert len(by_label["learned, readout invalid (no v-hat)"].get_xdata()) == 3          # seeds 151, 153, 155
    assert list(by_label["v-hat from tau (the entry's estimator)"].get_xdata()) == [0, 2, 4]
    assert len(by_label["v-hat from the frontier (beside)"].get_xdata()) == 3
