"""The recipe search's pre-registered rule (searches/settle_search.py), applied to constructed log rows."""
import json

import pytest

from searches.settle_search import decide


def _row(recipe, demand, seed, v, in_acc=1.0, raw=0.9, at_4T=0.95, best=0.5):
    return dict(recipe=recipe, demand=demand, seed=seed, v_tau=v, in_acc={"1T": in_acc, "2T": in_acc, "4T": at_4T},
                convergence={"raw": {"reached": raw}}, ood={"16": {"best": best}})


def _recipe(name, speeds, **kw):
    return [_row(name, d, s, speeds(d, s), **kw) for s in (0, 1) for d in (0.5, 1.0, 2.0)]


def test_a_recipe_on_the_law_that_settles_is_picked_and_the_rule_reads_each_part():
    on_law = _recipe("on", lambda d, s: d * (1.0 + 0.02 * s))
    off_law = _recipe("off", lambda d, s: d ** 0.5)                      # exponent 0.5: interval misses 1
    unsettled = _recipe("drift", lambda d, s: d, raw=0.2)                 # on the law, no fixed point
    v = decide(on_law + off_law + unsettled)
    assert v["on"]["keeps_law"] and v["on"]["settles"]
    assert v["off"]["keeps_law"] is False and v["off"]["settles"]
    assert v["drift"]["keeps_law"] and v["drift"]["settles"] is False


def test_missing_seeds_and_stopped_runs():
    rows = _recipe("r", lambda d, s: d)
    assert decide(rows[:5])["r"]["keeps_law"] is None                    # demand 2 has one seed: undecided
    stopped = dict(recipe="r", demand=0.5, seed=2, abandoned="ran away")
    assert decide(rows + [stopped])["r"]["keeps_law"] is False           # a stopped run did not learn
    forgets = _recipe("f", lambda d, s: d, at_4T=0.5)
    assert decide(forgets)["f"]["settles"] is False
    # one seed that fails decides a part before the other seeds run; one that passes does not
    early = [dict(recipe="e", demand=0.5, seed=0, abandoned="ran away"),
             _row("e", 1.0, 0, 1.0, raw=0.1)]
    assert decide(early)["e"]["keeps_law"] is False and decide(early)["e"]["settles"] is False
    assert decide([_row("p", 1.0, 0, 1.0)])["p"]["settles"] is None


def test_prefix_sums_search_rule_on_constructed_rows():
    from searches.prefix_sums_search import RECIPES, decide
    names = list(RECIPES)

    def row(recipe, seed, in_acc, best64, wall=100.0):
        return {"recipe": recipe, "seed": seed, "in_acc_T": in_acc, "best": {"64": [best64, 10]}, "train_wall_s": wall}
    rows = [row(names[0], 0, 0.95, 0.6), row(names[0], 1, 0.92, 0.3),      # learns, min 0.3
            row(names[1], 0, 0.99, 0.9), row(names[1], 1, 0.85, 0.9),      # one seed short: does not learn
            row(names[2], 0, 0.99, 0.305, 50.0), row(names[2], 1, 0.99, 0.7, 50.0)]   # learns, 0.305 (a tie), cheaper
    d = decide(rows)
    assert d["recipes"][names[1]]["learns"] is False and d["recipes"][names[3]]["learns"] is None
    assert d["pick"] is None                        # recipes still unmeasured: no pick yet
    rest = [row(n, s, 0.5, 0.0) for n in names[3:] for s in (0, 1)]      # the rest measured, none learns
    assert decide(rows + rest)["pick"] == names[2]  # within 0.01 of the best score, and cheaper
    assert decide(rows[2:4] + rest)["pick"] is None     # nobody learns: no pick


def test_untied_search_rule_waits_for_earlier_candidates_and_prefers_the_matched_width():
    from searches.untied_search import RECIPES, config, decide
    names = list(RECIPES)
    row = lambda r, s, acc: {"recipe": r, "seed": s, "in_acc_T": acc}   # noqa: E731
    first_fails = [row(names[0], 0, 0.95), row(names[0], 1, 0.4)]
    assert decide(first_fails + [row(names[1], 0, 0.99)])["pick"] is None              # names[1] half measured
    assert decide(first_fails + [row(names[1], 0, 0.99), row(names[1], 1, 0.91)])["pick"] == names[1]
    # a held-out row (rule 4) decides nothing: names[1]'s seed 0 alone is still half measured
    assert decide(first_fails + [row(names[1], 0, 0.99), {**row(names[1], 2, 0.2), "held_out": True}])["pick"] is None
    # depth stays matched in every candidate but "depth8" (labelled); only "depth8" and "d32" change the width,
    # and the width-unmatched "d32" comes last
    base = config(names[0], 0)
    depth = {r: config(r, 0).n_layers * config(r, 0).T_train for r in names}
    assert {r for r, d in depth.items() if d != 16} == {"depth8"} and depth["depth8"] == 8
    assert all(not config(r, 0).tied for r in names)
    assert [r for r in names if config(r, 0).d_model != base.d_model] == ["depth8", "d32"] and names[-1] == "d32"


def test_the_untied_second_round_trains_its_failed_seed_first_and_no_more_if_it_misses():
    from searches.untied_search import QUEUE, RECIPES, SEED_ORDER, SEEDS, decided
    assert all(sorted(order) == sorted(SEEDS) for order in SEED_ORDER.values()) and set(SEED_ORDER) <= set(RECIPES)
    mine = [s for r, s in QUEUE if r == "depth_init_lr3e-4_60k"]
    assert mine == [1, 0] and len(QUEUE) == len(RECIPES) * len(SEEDS)
    missed = [{"recipe": "depth_init_lr3e-4_60k", "seed": 1, "in_acc_T": 0.5}]
    assert decided(missed, ("depth_init_lr3e-4_60k", 0))


def test_held_out_seed_needs_a_pick_before_any_work(tmp_path, monkeypatch):
    from searches import untied_search
    monkeypatch.setattr(untied_search, "LOG", tmp_path / "log.jsonl")
    with pytest.raises(SystemExit, match="--held-out: no candidate picked yet"):
        untied_search.main(["--held-out"])
    assert not (tmp_path / "log.jsonl").exists()


def test_worker_shares_are_checked_before_any_work():
    import pytest
    from searches.search_log import parse_share
    assert parse_share("1/2", "--worker") == (1, 2)
    for bad in ("2/2", "0/0", "-1/2", "x", "1/2/3"):
        with pytest.raises(SystemExit, match="--shard: expected i/k"):
            parse_share(bad, "--shard")


def test_a_worker_skips_only_recipes_decided_false_on_both_parts(tmp_path, monkeypatch):
    import json
    import searches.settle_search as search
    monkeypatch.setattr(search, "LOG", tmp_path / "log.jsonl")
    assert search.decided_out("fixed") is False                       # nothing logged: nothing decided
    rows = [dict(recipe="fixed", demand=0.5, seed=0, abandoned="ran away"), _row("fixed", 1.0, 0, 1.0, raw=0.1),
            _row("prop_jit2_outer", 1.0, 0, 1.0, raw=0.1)]               # the second: law still open
    search.LOG.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert search.decided_out("fixed") is True
    assert search.decided_out("prop_jit2_outer") is False


def test_time_to_learn_counts_the_steps_spent_at_each_curriculum_length():
    import pytest
    from dataclasses import replace
    from bench.time_to_learn import recipe_config, steps_per_length
    cfg = replace(recipe_config(), curriculum_start=2, curriculum_step=3, n_train=6)
    # lengths 2 -> 5 -> 6 (clamped at n_train, as the curriculum does), left at steps 10 and 30, 50 in all
    assert steps_per_length({"promotions": [10, 30], "steps": 50}, cfg) == {2: 10, 5: 20, 6: 20}
    assert steps_per_length({"promotions": [], "steps": 7}, cfg) == {2: 7}
    with pytest.raises(ValueError, match="promotions"):
        steps_per_length({"promotions": [30, 10], "steps": 50}, cfg)


def test_time_to_learn_refuses_bad_input_before_doing_anything(capsys):
    import pytest
    from bench.time_to_learn import main
    with pytest.raises(SystemExit, match="--candidate: unknown 'batch 32'"):
        main(["--stop", "0", "--candidate", "batch 32"])
    with pytest.raises(SystemExit, match="--stop: seed must be one of"):
        main(["--stop", "7", "--candidate", "batch 64, lr 1e-3"])
    for argv in (["--update"], ["--cost", "--compile"], []):
        with pytest.raises(SystemExit):
            main(argv)
        assert "error:" in capsys.readouterr().err


@pytest.mark.parametrize("module", ["searches.prefix_sums_search", "searches.untied_search"])
def test_a_search_skips_the_other_seed_of_a_recipe_one_seed_has_failed(tmp_path, monkeypatch, module):
    """Rule 1 needs every seed at the bar, so one seed below it decides the recipe: its other seed is
    not trained, and the rule reads the recipe as not learning (not as unmeasured)."""
    import importlib
    search = importlib.import_module(module)
    monkeypatch.setattr(search, "LOG", tmp_path / "log.jsonl")
    names = list(search.RECIPES)
    calls = []

    def fake_measure(recipe, seed, compile=False):         # the first recipe fails, every other learns
        calls.append((recipe, seed))
        return {"recipe": recipe, "seed": seed, "in_acc_T": 0.5 if recipe == names[0] else 0.95,
                "best": {"64": [0.1, 3]}, "train_wall_s": 10.0}
    monkeypatch.setattr(search, "measure_one", fake_measure)
    assert search.main(["--worker", "0/1"]) == 0
    after = names[1:2] if module == "searches.untied_search" else names[1:]   # the untied search stops at its pick
    assert calls == [(names[0], 0)] + [(r, s) for r in after for s in search.SEEDS]
    d = search.decide([json.loads(x) for x in search.LOG.read_text().splitlines()])
    learns = d["recipes"][names[0]]["learns"] if "recipes" in d else d["learns"][names[0]]
    assert learns is False and d["pick"] == names[1]


def test_the_untied_search_trains_no_candidate_after_its_pick():
    """Rule 2 takes the first learner in order: once it has one, later candidates cannot change the
    pick and are decided; before that only a failed recipe's other seed is."""
    from searches.untied_search import RECIPES, decided
    names = list(RECIPES)
    row = lambda r, s, acc: {"recipe": r, "seed": s, "in_acc_T": acc}   # noqa: E731
    rows = [row(names[0], 0, 0.1), row(names[0], 1, 0.2), row(names[1], 0, 0.95)]
    assert decided(rows, (names[0], 1)) and not decided(rows, (names[1], 1)) and not decided(rows, (names[2], 0))
    rows.append(row(names[1], 1, 0.93))                                  # names[1] learns: the pick
    assert all(decided(rows, (r, s)) for r in names[2:] for s in (0, 1))
    held = rows[:3] + [{**row(names[1], 1, 0.93), "held_out": True}]     # a held-out row picks nothing
    assert not decided(held, (names[2], 0))
    # a later candidate that learns while an earlier one is unmeasured is no pick: nothing after it is decided
    early = [row(names[0], 0, 0.95), row(names[1], 0, 0.95), row(names[1], 1, 0.95)]
    assert not decided(early, (names[0], 1)) and not decided(early, (names[2], 0))
