"""The C43 studies built on P43-pilots (easy-to-hard, recall, sudoku) and C43-controls: their plans keep
the pilot's recipes and candidates (only seeds, experiment and mode differ), and the recorded picks are the
pilot's logged ones (None before it is read)."""
import json
from dataclasses import replace
from pathlib import Path

import pytest

from lib import confirmatory
from lib.sections.s02_tau_calibration import plan as s02
from lib.sections.s05_operator_wall import plan as s05
from lib.sections.s08_easy_to_hard import plan as s08
from lib.sections.s09_stability import plan as s09
from searches import p43_pilots

RESULTS = Path(__file__).parents[1] / "searches" / "results"


def _logged_pick(part: str):
    log = RESULTS / f"{part}.jsonl"
    rows = [json.loads(line) for line in log.read_text().splitlines() if line.strip()] if log.exists() else []
    picks = [r for r in rows if r.get("kind") == "pick"]
    return picks[-1]["pick"] if picks else None


def _same_recipe(a, b):
    return replace(a, experiment="x", seed=0, mode="") == replace(b, experiment="x", seed=0, mode="")


def test_the_candidates_and_recorded_picks_are_the_pilots():
    assert s08.E2H_CANDIDATES == p43_pilots.PREFIX_SUMS_CANDIDATES
    assert s09.SUDOKU_CANDIDATES == p43_pilots.SUDOKU_CANDIDATES
    assert s08.E2H_CONFIRM_PICK == _logged_pick(p43_pilots.PREFIX_SUMS)
    assert s09.SUDOKU_CONFIRM_PICKS == _logged_pick(p43_pilots.SUDOKU)
    for entry in ("C43-easy-to-hard", "C43-recall", "C43-sudoku", "C43-controls", "C43-controls-streaming"):
        assert confirmatory.study(entry) == confirmatory.STUDIES[entry]()


@pytest.mark.parametrize("pick", sorted(s08.E2H_CANDIDATES))
def test_easy_to_hard_and_recall_runs_are_the_pilots_recipe_at_its_pick(pick):
    pilot = p43_pilots.prefix_sums_runs()[pick][0]
    runs = s08.study(pick)
    assert [c.seed for c in runs] == [170, 171, 172, 173] and all(_same_recipe(c, pilot) for c in runs)
    recall = s09.recall_study_runs(pick)
    assert len(recall) == 6 and all(len(cfgs) == 3 for cfgs in recall.values())
    for knobs, cfgs in recall.items():
        assert all(_same_recipe(c, replace(s09.with_knobs(pilot, knobs), n_layers=1)) for c in cfgs)
    assert {(k.recall, k.outer_norm) for k in recall} == {(r, o) for r in ("none", "external", "internal") for o in (False, True)}


def test_sudoku_runs_are_the_pilots_recipe_at_each_recalls_pick():
    picks = {"external": "lr1e-3_4k", "internal": "lr3e-4_8k"}
    runs = s09.sudoku_study_runs(picks)
    pilot = p43_pilots.sudoku_runs()
    for recall, cfgs in runs.items():
        assert [c.seed for c in cfgs] == [185, 186, 187]
        assert all(_same_recipe(c, pilot[(recall, picks[recall])][0]) for c in cfgs)
    with pytest.raises(ValueError, match="picks: one of"):
        s09.sudoku_study_runs({"external": "lr1e-2_4k", "internal": "lr3e-4_8k"})


def test_the_controls_read_c05s_streaming_runs_and_train_only_the_shortcut():
    runs = s02.study_controls()
    assert runs["streaming"] == tuple(stream for _, stream in s05.study_streaming())
    assert [c.seed for c in runs["shortcut"]] == [180, 181, 182]
    assert all(_same_recipe(c, s02.calibration("quick").shortcut[0]) for c in runs["shortcut"])


def test_the_streaming_follow_up_trains_02s_own_streaming_control_offered_20k_steps():
    runs = s02.streaming_study()
    control = s02.calibration("quick").streaming[0]
    assert [c.seed for c in runs] == [190, 191, 192] and {c.experiment for c in runs} == {"confirm_controls"}
    assert all(_same_recipe(c, replace(control, max_steps=20_000)) for c in runs)
    assert control.curriculum_start == 2 and control.schedule == "streaming"     # unlike C05-wall's joint runs
    assert not set(runs) & set(s02.study())


# ---------------------------------------------------------------------------------------------
# the readings on constructed rows, the entries' rules applied through the ledger

from lib import claims, rules                                                       # noqa: E402
from lib.sections.s02_tau_calibration.confirm import controls_confirm_results     # noqa: E402
from lib.sections.s08_easy_to_hard.confirm import e2h_confirm_results             # noqa: E402
from lib.sections.s09_stability.confirm import recall_confirm_results, sudoku_confirm_results  # noqa: E402


def conf(entry, results, key):
    rules.record_confirmatory(entry, results)
    return claims.confirmatory_verdict(claims.claim(key))[0]


def test_the_controls_read_their_slopes_and_need_two_runs_read(store_root):
    row = lambda seed, slope, read=True: {"seed": seed, "slope": slope, "read": read}       # noqa: E731
    r = controls_confirm_results({"streaming": [row(100, 1.0), row(101, 1.05), row(102, None, False)],
                                  "shortcut": [row(180, 0.0), row(181, 0.3, False), row(182, None, False)]})
    assert r["streaming_slope"] == 1.025 and r["shortcut_slope"] is None and r["shortcut_runs_read"] == 1
    assert conf("C43-controls", r, "shortcut_slope") == "not measured"
    # the streaming row is C43-controls-streaming's test; C43-controls' reading of it is printed beside
    assert conf("C43-controls", r, "streaming_slope") == "registered (C43-controls-streaming), not yet read"
    assert "earlier entry C43-controls: reproduced (1.02)" in claims.confirmatory_verdict(claims.claim("streaming_slope"))[2]
    unread = controls_confirm_results({"streaming": [row(190, None, False), row(191, 0.8), row(192, None, False)]})
    assert conf("C43-controls-streaming", unread, "streaming_slope") == "not measured"
    assert conf("C43-controls-streaming", controls_confirm_results({"streaming": [row(190, 0.8), row(191, 0.7)]}),
                "streaming_slope") == "partly"


def e2h_row(seed, acc64, best=1.0):
    return {"seed": seed, "in_acc": 1.0, "by_n": {n: {"acc": acc64 if n == 64 else 1.0, "best": best, "best_loop": 3}
                                                 for n in (32, 64, 128)}}


def test_easy_to_hard_is_judged_on_its_worst_seed_at_the_schedules_loops(store_root):
    r = e2h_confirm_results([e2h_row(170 + i, a) for i, a in enumerate((1.0, 0.95, 0.92, 0.91))])
    assert r["e2h_4x_min_at_loops"] == 0.91 and conf("C43-easy-to-hard", r, "e2h_4x_best_acc") == "reproduced"
    r = e2h_confirm_results([e2h_row(170 + i, a) for i, a in enumerate((1.0, 1.0, 1.0, 0.4))])
    assert conf("C43-easy-to-hard", r, "e2h_4x_best_acc") == "not reproduced"      # one seed refutes "every seed"


def test_a_diverged_seed_counts_as_one_that_did_not_learn(store_root):
    from lib.sections.s08_easy_to_hard.confirm import diverged_row
    diverged = diverged_row(s08.study("lr1e-3_8k")[3])
    r = e2h_confirm_results([e2h_row(170 + i, 1.0) for i in range(3)] + [diverged])
    assert r["e2h_4x_min_at_loops"] == 0.0 and r["diverged_seeds"] == [173]
    assert conf("C43-easy-to-hard", r, "e2h_4x_best_acc") == "not reproduced"


def recall_rows(acc, stable=True, distinct=1.0):
    """acc: (recall, outer) -> accuracy at n = 32 for every seed."""
    from lib.sections.s09_stability.plan import Knobs
    return [{"knobs": Knobs(rc, o), "seed": s, "stable": stable and o, "stable_cosine": stable and o, "reached": 1.0,
             "distinct": distinct, "acc": {32: a, 64: a / 2}, "best": {32: a, 64: a}}
            for (rc, o), a in acc.items() for s in (175, 176, 177)]


GRID = {(rc, o): 0.3 for rc in ("none", "external", "internal") for o in (False, True)}


def test_recall_b1_needs_the_best_to_have_recall_outer_norm_stable_points_and_a_lead(store_root):
    r = recall_confirm_results(recall_rows({**GRID, ("internal", True): 0.7, ("external", True): 0.65}))
    assert r["recall_outer_score"] == 1.0 and conf("C43-recall", r, "best_is_recall_outer") == "reproduced"
    assert r["internal_minus_external"] == pytest.approx(0.05) and conf("C43-recall", r, "internal_minus_external") == "reproduced"
    r = recall_confirm_results(recall_rows({**GRID, ("internal", True): 0.32}))     # a lead of 0.02: partly
    assert conf("C43-recall", r, "best_is_recall_outer") == "partly"
    r = recall_confirm_results(recall_rows({**GRID, ("none", False): 0.9}))
    assert conf("C43-recall", r, "best_is_recall_outer") == "not reproduced"
    r = recall_confirm_results(recall_rows({k: 0.01 for k in GRID}))               # nothing scores: no ranking
    assert conf("C43-recall", r, "best_is_recall_outer") == "not measured"
    assert conf("C43-recall", r, "internal_minus_external") == "not measured"


def test_recall_b2_reads_distinct_fixed_points_without_recall(store_root):
    r = recall_confirm_results(recall_rows(GRID, distinct=0.25))
    assert r["no_recall_distinct_fraction"] == 0.25 and conf("C43-recall", r, "no_recall_distinct_fraction") == "reproduced"
    r = recall_confirm_results(recall_rows(GRID, distinct=1.0))
    assert conf("C43-recall", r, "no_recall_distinct_fraction") == "not reproduced"


def test_sudoku_needs_a_lead_with_complete_separation_and_solved_training_boards(store_root):
    boards = lambda internal, external: {(rc, s, g): (v if g != 34 else 0.9)                  # noqa: E731
                                         for rc, vals in (("internal", internal), ("external", external))
                                         for s, v in zip((185, 186, 187), vals) for g in (34, 28, 24)}
    r = sudoku_confirm_results(boards((0.5, 0.6, 0.4), (0.1, 0.0, 0.2)))
    assert r["sudoku_internal_minus_external"] == pytest.approx(0.4) and conf("C43-sudoku", r, "sudoku_internal_minus_external") == "reproduced"
    r = sudoku_confirm_results(boards((0.5, 0.6, 0.1), (0.2, 0.0, 0.0)))           # overlap: partly
    assert not r["sudoku_separated"] and conf("C43-sudoku", r, "sudoku_internal_minus_external") == "partly"
    r = sudoku_confirm_results({k: 0.0 for k in boards((0, 0, 0), (0, 0, 0))})
    assert conf("C43-sudoku", r, "sudoku_internal_minus_external") == "not measured"


def test_the_per_run_readers_read_stored_runs(store_root, monkeypatch):
    from lib import profiles, store
    from lib.sections.s02_tau_calibration import confirm as c02
    from lib.sections.s08_easy_to_hard import confirm as c08
    from lib.sections.s09_stability import confirm as c09
    from lib.sections.s02_tau_calibration.confirm import control_row
    from lib.sections.s08_easy_to_hard.confirm import seed_row
    from lib.sections.s09_stability.confirm import recall_row
    for module in (c02, c08, c09):                       # the readers' plumbing, on a smoke model at small sizes
        monkeypatch.setattr(module, "EVAL_COUNT", 16)
    monkeypatch.setattr(c08, "TEST_NS", (6, 8))
    monkeypatch.setattr(c09, "TEST_NS", (6, 8))
    monkeypatch.setattr(c09, "LONG_FACTOR", 2)
    base = replace(profiles.SMOKE_BASE, task="prefix_sums", n_train=4, T_train=4, max_steps=10, seed=5)
    run = store.get_or_train(base)
    assert set(seed_row(run)["by_n"]) == {6, 8}
    assert {"stable", "distinct", "acc"} <= set(recall_row(run, s09.Knobs("none", False)))
    assert isinstance(control_row(run)["read"], bool)


def test_recall_b1_reads_a_tie_at_the_top_as_no_lead(store_root):
    r = recall_confirm_results(recall_rows({k: 1.0 for k in GRID}))        # every configuration perfect at n = 32
    assert r["recall_outer_score"] == 0.5 and conf("C43-recall", r, "best_is_recall_outer") == "partly"


def test_recall_b1_with_two_best_recall_configurations_asks_both_to_be_stable_whatever_their_order(store_root):
    rows = recall_rows({**GRID, ("internal", True): 0.7, ("external", True): 0.7})
    assert recall_confirm_results(rows)["recall_outer_score"] == 1.0
    for unstable in ("external", "internal"):
        shaky = [dict(r, stable=False) if r["knobs"].recall == unstable and r["knobs"].outer_norm else r for r in rows]
        assert recall_confirm_results(shaky)["recall_outer_score"] == 0.5
        assert recall_confirm_results(list(reversed(shaky)))["recall_outer_score"] == 0.5


def test_the_recall_and_sudoku_values_are_judged_unrounded(store_root):
    """A sudoku lead of 1/3072 (half a board of 1,536 over two sets) is above 0: partly, not a tie read as 0."""
    boards = {(rc, s, g): (0.5 if g == 34 else (1 / 1536 if rc == "internal" and g == 28 and s == 185 else 0.0))
              for rc in ("internal", "external") for s in (185, 186, 187) for g in (34, 28, 24)}
    r = sudoku_confirm_results(boards)
    assert 0 < r["sudoku_score"] < 1e-3 and conf("C43-sudoku", r, "sudoku_internal_minus_external") == "partly"


def test_a_diverged_recall_or_sudoku_run_reads_as_one_that_did_not_learn(store_root):
    from lib.sections.s09_stability.confirm import diverged_recall_row, diverged_sudoku_reading
    rows = recall_rows({**GRID, ("internal", True): 0.7, ("external", True): 0.35})
    i = next(i for i, r in enumerate(rows) if (r["knobs"].recall, r["knobs"].outer_norm) == ("internal", True))
    rows[i] = diverged_recall_row(s09.recall_study()[0], rows[i]["knobs"])
    r = recall_confirm_results(rows)
    assert r["mean_at_loops"]["internal recall, outer norm"]["32"] == pytest.approx(0.467, abs=1e-3)
    assert r["recall_outer_score"] == 0.5 and len(r["diverged"]) == 1          # a seed without stable points
    none_outer = next(i for i, r in enumerate(rows) if (r["knobs"].recall, r["knobs"].outer_norm) == ("none", True))
    rows[none_outer] = diverged_recall_row(s09.recall_study()[0], rows[none_outer]["knobs"])
    r = recall_confirm_results(rows)
    assert r["no_recall_distinct_fraction"] == 1.0 and r["no_recall_reached_min"] == 0.0
    assert conf("C43-recall", r, "no_recall_distinct_fraction") == "not measured"      # reach precondition fails
    cfg = s09.sudoku_study_runs({"external": "lr1e-3_4k", "internal": "lr3e-4_8k"})["internal"][0]
    kept = diverged_sudoku_reading("internal", cfg)
    assert set(kept) == {("internal", cfg.seed, g) for g in (34, 28, 24)}
    assert all(r["board"][r["T"] - 1] == 0 and r["board"].max() == 0 for r in kept.values())


def _fail(cfg):
    from lib import store
    store.run_dir(cfg).mkdir(parents=True)
    (store.run_dir(cfg) / "FAILED").write_text(json.dumps({"error": "loss nan", "step": 9}))


def test_the_readers_do_not_wait_for_a_diverged_run_and_read_it_as_not_learned(store_root, monkeypatch, capsys):
    import numpy as np

    from lib import store
    from lib.sections.s08_easy_to_hard import confirm as e2h
    from lib.sections.s09_stability import confirm as stab
    monkeypatch.setattr(store, "is_done", lambda c: not store.is_diverged(c))
    monkeypatch.setattr(store, "load_run", lambda c: c)
    _fail(s08.study()[3])
    monkeypatch.setattr(e2h, "seed_row", lambda c: e2h_row(c.seed, 1.0))
    out = e2h.show()
    assert out["diverged_seeds"] == [173] and out["e2h_4x_min_at_loops"] == 0.0
    assert "4 of 4 runs stored" not in capsys.readouterr().out              # 3 stored, 1 diverged
    picks = {"external": "lr1e-3_4k", "internal": "lr3e-4_8k"}
    monkeypatch.setattr(s09, "SUDOKU_CONFIRM_PICKS", picks)
    external = s09.sudoku_study_runs(picks)["external"][0]
    _fail(external)
    none_outer = next(cfgs[0] for k, cfgs in s09.recall_study_runs().items() if (k.recall, k.outer_norm) == ("none", True))
    _fail(none_outer)
    acc = {**GRID, ("internal", True): 0.7}
    monkeypatch.setattr(stab, "recall_row", lambda c, k: next(r for r in recall_rows(acc) if r["knobs"] == k
                                                              and r["seed"] == c.seed))
    half = np.full(32, 0.5)
    monkeypatch.setattr(stab, "sudoku_readings", lambda runs, givens, scan: {
        (rc, c.seed, g): dict(cell=half, board=half, T=16, best_board_loop=1) for rc, cs in runs.items() for c in cs
        for g in givens})
    out = stab.show()
    recall, sudoku = out["C43-recall"], out["C43-sudoku"]
    assert recall["diverged"] == recall["diverged_comparators"] == [f"no recall, outer norm seed {none_outer.seed}"]
    assert recall["no_recall_reached_min"] == 0.0
    assert sudoku["diverged"] == [f"external seed {external.seed}"]
    assert sudoku["sudoku_internal_minus_external"] == pytest.approx(0.5 / 3)
    printed = capsys.readouterr().out
    assert printed.count("note: ") == 2 and "1 diverged" in printed
