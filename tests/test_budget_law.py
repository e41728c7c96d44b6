"""03, the budget law: the law's fit and its seed interval, and the rescue reading, on constructed runs; the
ledger's rules for the exponent."""
from types import SimpleNamespace

import numpy as np
import pytest

from lib import claims, rules
from lib.config import RunConfig
from lib.instruments import head
from lib.sections.s03_budget_law import read as budget
from tests.constructed import SerialPropagator

R, P, N = "reproduced", "partly", "not reproduced"


def _speed(v, position1=1.0):
    return SimpleNamespace(v_tau=SimpleNamespace(v=v), v_frontier=v, position1_first_loop=position1)


def _reading(demand, v, seed=0, learned=True):
    return dict(config=RunConfig(n_train=8, T_train=int(8 / demand), seed=seed), tau=_speed(v), learned=learned)


def test_law_fit_recovers_a_known_exponent_and_interval_from_seeds():
    # v = demand^0.8 exactly in seed 0; seed 1 reads 10 % faster at every demand
    readings = [_reading(d, d ** 0.8 * f, seed) for seed, f in ((0, 1.0), (1, 1.1)) for d in (0.5, 1, 2)]
    readings.append(_reading(4, 0.3, learned=False))         # not learned: never fitted
    fit = budget.law_fit(readings)
    assert fit.tau.exponent == pytest.approx(0.8) and fit.usable.tolist() == [True] * 6 + [False]
    lo, hi = fit.interval
    assert lo <= 0.8 <= hi
    one_seed = budget.law_fit(readings[:3])
    assert one_seed.tau.exponent == pytest.approx(0.8) and one_seed.interval is None   # nothing to resample
    assert budget.law_fit(readings[:1]).tau is None


def test_seed_interval_widens_when_seeds_disagree():
    d = np.array([0.5, 0.5, 1, 1, 2, 2])
    agree = budget.seed_interval(d, d ** 1.0 * np.array([1, 1.01] * 3))
    disagree = budget.seed_interval(d, d ** 1.0 * np.array([0.6, 1.6, 1.6, 0.6, 0.6, 1.6]))
    assert agree[1] - agree[0] < 0.05 < disagree[1] - disagree[0]


def test_rescue_reads_a_serial_propagator_at_twice_its_length():
    model = SerialPropagator(5, 1)
    cfg = RunConfig(task="Z5", n_train=4, T_train=4)
    t = head.tau(model, cfg.task_obj(), 4, 4, count=32)
    x = budget.rescue(dict(run=SimpleNamespace(model=model), config=cfg, tau=t), n_long=8, loops_factor=3, eval_count=32)
    # one position per loop: at T_train = 4 the late positions 5..8 are empty; the contract gives n = 8
    # eight loops (demand held), T* = ceil(8 / 1) = 8 solves all; the scan runs to 3 x 8 loops
    assert x["T_star"] == 8 and x["T_contract"] == 8 and len(x["acc"].seq_acc) == 24
    assert x["at_T_star"] == (1.0, 1.0) and x["at_contract"] == (1.0, 1.0) and x["at_T_train"] == (0.0, 0.0)
    assert x["best_whole"] == (1.0, 8) and x["best_late"] == (1.0, 8)
    res = budget.law_results([dict(config=cfg, tau=t, learned=True)], budget.law_fit([]), {cfg: x})
    assert res["rescue_gain"] == 1.0 and res["halting_late_acc"] == 1.0 and res["halting_acc"] == 1.0
    assert res["late_at_T_train"] == 0.0 and res["speed_at_T_eq_n"] == 1.0
    assert "T_train (4) 0.00 / 0.00   contract (8) 1.00 / 1.00   T* (8) 1.00 / 1.00   best 1.00 (8) / 1.00 (8)" \
        in budget.rescue_table({cfg: x}, 8)


def test_rescue_scans_to_T_star_when_the_speed_is_slower_than_the_contract():
    model = SerialPropagator(5, 1)
    cfg = RunConfig(task="Z5", n_train=4, T_train=2)          # demand 2, but the model moves 1 position a loop
    t = head.tau(model, cfg.task_obj(), 4, 4, count=32)       # read at 4 loops: v-hat 1
    x = budget.rescue(dict(run=SimpleNamespace(model=model), config=cfg, tau=t), n_long=8, loops_factor=1, eval_count=32)
    assert x["T_contract"] == 4 and x["T_star"] == 8 and len(x["acc"].seq_acc) == 8    # scan extended to T*
    assert x["at_contract"] == (0.0, 0.0) and x["at_T_star"] == (1.0, 1.0)
    nothing = budget.rescue(dict(run=SimpleNamespace(model=model), config=cfg,
                                 tau=_speed(float("nan"))), n_long=8, loops_factor=1, eval_count=32)
    assert nothing["T_star"] is None and nothing["at_T_star"] is None


E = 1e-6


def test_r2_counts_only_with_the_exponent_in_tolerance():
    r2 = claims.claim("budget_r2")
    measured = {"demands_learned": 3, "budget_exponent_interval": [0.9, 1.1], "decoder_position1_min": 1.0}
    assert rules.verdict(r2, 0.99, True, {**measured, "budget_exponent": 0.81}) == "not measured"
    assert rules.verdict(r2, 0.99, True, {**measured, "budget_exponent": 0.97}) == R


def test_the_exponent_needs_its_seed_interval_and_the_fit_needs_the_exponent():
    exponent, r2 = claims.claim("budget_exponent"), claims.claim("budget_r2")
    one_seed = {"demands_learned": 3, "budget_exponent": 0.98, "budget_exponent_interval": None,
                "decoder_position1_min": 1.0}
    assert rules.verdict(exponent, 0.98, ran=True, results=one_seed) == "not measured"
    assert rules.verdict(r2, 0.99, ran=True, results=one_seed) == "not measured"
    seeds = {**one_seed, "budget_exponent_interval": [0.9, 1.05]}
    assert rules.verdict(exponent, 0.98, ran=True, results=seeds) == "reproduced"
    assert rules.verdict(r2, 0.99, ran=True, results=seeds) == "reproduced"
    assert rules.verdict(r2, 0.99, ran=True, results={**seeds, "budget_exponent": 0.8}) == "not measured"


def test_the_budget_laws_confirmatory_exponent_is_underpowered_when_its_interval_is_wide(store_root):
    c = claims.claim("budget_exponent_uncapped")
    base = {"exponent_meets_band": 1.0, "demands_valid": 5}
    rules.record_confirmatory("C03-budget", {**base, "interval_width": 0.16})
    assert claims.confirmatory_verdict(c)[0] == "reproduced"
    rules.record_confirmatory("C03-budget", {**base, "interval_width": 0.16 + E})
    assert claims.confirmatory_verdict(c)[0] == "not measured"
    rules.record_confirmatory("C03-budget", {**base, "interval_width": 0.1, "exponent_meets_band": 0.5})
    assert claims.confirmatory_verdict(c)[0] == "partly"
