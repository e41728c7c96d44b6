"""08, easy-to-hard generalisation: loops for length, the best loop, the readers behind the accuracy-per-loop
curves and the halting baselines, the results, and the recipe the prefix-sums search picked."""
import math
from types import SimpleNamespace
import numpy as np
import pytest
from lib import claims, profiles, rules
from lib.config import RunConfig
from lib.instruments import extrapolation
from lib.sections.s08_easy_to_hard import read as read08
from lib.sections.s09_stability import read as read09
from lib.instruments.head import LoopAccuracy
from tests.constructed import SerialPropagator


def fake_run(model, **cfg):
    return SimpleNamespace(config=RunConfig(**cfg), model=model.eval(),
                           metrics={"final_eval": {"seq_acc": 1.0}, "steps": 1})


def loop_acc(n, seq):
    return LoopAccuracy(n, np.asarray(seq, float), np.zeros((len(seq), n)))


def _picked(search, pick) -> tuple[str, dict] | None:
    """The search's logged pick checked against the profile's constant `pick`: None or (name, changes)."""
    import json
    rows = [json.loads(x) for x in search.LOG.read_text().splitlines()] if search.LOG.exists() else []
    logged = search.decide(rows)["pick"]
    if pick is None:
        assert logged is None
        return None
    assert logged == pick[0] and pick[1] == search.RECIPES[pick[0]]
    return pick


@pytest.mark.parametrize("profile", ["smoke", "quick", "paper"])
def test_scan_loops_reproduces_the_committed_scans(profile):
    """08 scanned ceil(1.5 max(n, T_train)) loops and 09 int(1.5 max(n, T_train)); with T_train = n_train
    (every plan's runs) both are 1.5 loops_at(n): the one rule changes no committed number."""
    e2h, stab = profiles.easy_to_hard(profile), profiles.stability(profile)
    cfgs = list(e2h.runs) + [c for cs in stab.runs.values() for c in cs]
    for c in cfgs:
        for n in e2h.test_ns:
            assert extrapolation.scan_loops(c, n, e2h.loops_factor) == math.ceil(e2h.loops_factor * max(n, c.T_train))
            assert extrapolation.scan_loops(c, n, read09.EXTRAPOLATION_FACTOR) == int(1.5 * max(n, c.T_train))
    for cs in stab.sudoku.values():            # sudoku: twice the training loops at the board's size
        assert all(extrapolation.scan_loops(c, c.n_train, 2) == 2 * c.T_train for c in cs)


def test_scan_loops_follows_the_contracts_demand_beyond_training():
    c = RunConfig(n_train=8, T_train=4)                       # half a loop per position
    assert [extrapolation.scan_loops(c, n, 1.5) for n in (4, 8, 16, 17)] == [6, 6, 12, 14]   # 1.5 x (4, 4, 8, 9)


def test_best_loop_is_the_first_best():
    assert extrapolation.best_loop([0.0, 0.5, 0.9, 0.9, 0.2]) == (0.9, 3)
    assert extrapolation.best_loop(np.zeros(4)) == (0.0, 1)


def test_four_x_length():
    assert read08.four_x_length((16, 32, 64), 16) == 64
    assert read08.four_x_length((32, 64, 128, 512), 32) == 128     # the paper profile tests beyond 4x
    assert read08.four_x_length((4, 8), 4) == 8                    # smoke: only to 2x, the longest


def test_accuracy_by_length_reads_a_serial_propagator():
    run = fake_run(SerialPropagator(5, period=1), task="Z5", n_train=4, T_train=4)
    curves = extrapolation.accuracy_by_length(run, (4, 8), 1.5, count=32)
    assert [len(curves[n].seq_acc) for n in (4, 8)] == [6, 12]                  # 1.5 x max(n, T_train)
    assert curves[4].seq_acc.tolist() == [0, 0, 0, 1, 1, 1]                     # whole word from loop n
    assert extrapolation.best_loop(curves[8].seq_acc) == (1.0, 8)
    slow = fake_run(SerialPropagator(5, period=2), task="Z5", n_train=4, T_train=4)
    assert extrapolation.best_loop(extrapolation.accuracy_by_length(slow, (8,), 1.5, 32)[8].seq_acc) == (0.0, 1)


def test_halting_rule_against_confidence_on_a_serial_propagator():
    run = fake_run(SerialPropagator(5, period=1), task="Z5", n_train=4, T_train=4)
    curves = extrapolation.accuracy_by_length(run, (4, 8), 1.5, count=32)
    r, v = read08.speed_in_distribution(run, count=32)
    assert r.solved_fraction == 1.0 and v == pytest.approx(1.0)
    h = read08.halting_against_confidence(run, curves, v, 0.9, count=32)
    assert list(h) == [8]                                                         # only beyond n_train
    assert h[8]["T_star"] == 8 and h[8]["acc_star"] == 1.0                       # ceil(8 / 1) loops: solved
    # the decoder is confident from the first loop (empty positions read as a confident "empty"):
    # max-confidence stopping stops at once and is wrong
    assert h[8]["conf_stop"] == 1.0 and h[8]["conf_acc"] == 0.0
    # a speed of 0.5 asks for 16 loops at n = 8; the scan has 12: read at the last scanned loop
    assert read08.halting_against_confidence(run, curves, 0.5, 0.9, 32)[8]["T_star"] == 16
    # no speed (too few solved words in distribution): the rule says nothing
    none = read08.halting_against_confidence(run, curves, float("nan"), 0.9, 32)[8]
    assert none["T_star"] is None and math.isnan(none["acc_star"])


def test_speed_in_distribution_is_undefined_without_solved_words():
    slow = fake_run(SerialPropagator(5, period=2), task="Z5", n_train=4, T_train=4)   # needs 8 loops at n = 4
    r, v = read08.speed_in_distribution(slow, count=32)
    assert r.n_solved == 0 and math.isnan(v)
    enough = fake_run(SerialPropagator(5, period=2), task="Z5", n_train=4, T_train=8)
    assert read08.speed_in_distribution(enough, count=32)[1] == pytest.approx(0.5)


def test_easy_to_hard_results_on_hand_built_readings():
    curves = {0: {4: loop_acc(4, [0, 1.0]), 8: loop_acc(8, [0, 0.6, 0.2]), 16: loop_acc(16, [0.5, 0.25])},
              1: {4: loop_acc(4, [0.5, 0.9]), 8: loop_acc(8, [0.2, 0.3, 0.1]), 16: loop_acc(16, [0.1, 0.0])}}
    halt = lambda a, c: dict(T_star=None if math.isnan(a) else 3, acc_star=a, conf_acc=c, conf_stop=1.0)
    halting = {0: {8: halt(0.4, 0.0), 16: halt(float("nan"), 0.5)},
               1: {8: halt(0.2, 1.0), 16: halt(float("nan"), 0.0)}}
    r = read08.easy_to_hard_results(curves, halting, (4, 8, 16), 4)
    assert r["e2h_4x_length"] == 16 and r["e2h_4x_best_acc"] == 0.1              # the worst seed's best loop
    assert r["best_acc_by_length"] == {"4": 0.95, "8": 0.45, "16": 0.3}          # means over seeds
    assert r["halting_acc"]["8"] == 0.3 and math.isnan(r["halting_acc"]["16"])   # nan where the rule never applied
    assert r["confidence_acc"] == {"8": 0.5, "16": 0.25}
    assert r["chess_best_acc"] is None
    assert read08.easy_to_hard_results(curves, halting, (4, 8, 16), 4, [0.5, 0.25])["chess_best_acc"] == 0.375
    # the ledger's precondition reads the best accuracy at n_train (0.95 >= 0.9: learned)
    assert rules.verdict(claims.claim("e2h_4x_best_acc"), r["e2h_4x_best_acc"], True, r) == "not reproduced"


def test_08s_quick_recipe_is_the_prefix_search_pick_by_its_log():
    """08 trains what searches/prefix_sums_search.py's logged rule picked, and its runs are the search's own."""
    from searches import prefix_sums_search as search
    from lib.config import run_id
    if (pick := _picked(search, profiles.PREFIX_SUMS_PICK)) is not None:
        assert ([run_id(c) for c in profiles.easy_to_hard("quick").runs]
                == [run_id(search.config(pick[0], s)) for s in search.SEEDS])
