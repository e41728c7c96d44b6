"""Section readings moved out of notebook cells (budget law, calibration, saturation), on constructed data."""
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from lib.config import RunConfig
from lib.instruments import budget, calibration, head, saturation
from lib.stats import Estimate
from tests.constructed import SerialPropagator


def _speed(v):
    return SimpleNamespace(v_tau=SimpleNamespace(v=v), v_frontier=v)


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
    # one position per loop: at T_train = 4 the late positions 5..8 are empty; T* = ceil(8 / 1) = 8 solves all
    assert x["T_star"] == 8 and x["at_T_star"] == (1.0, 1.0) and x["at_T_train"] == (0.0, 0.0)
    assert x["best_whole"] == (1.0, 8) and x["best_late"] == (1.0, 8)
    res = budget.law_results([dict(config=cfg, tau=t, learned=True)], budget.law_fit([]), {cfg: x})
    assert res["rescue_gain"] == 1.0 and res["halting_acc"] == 1.0 and res["speed_at_T_eq_n"] == 1.0


def test_calibration_results_on_constructed_readings():
    fit = lambda cls: SimpleNamespace(cls=cls)                                              # noqa: E731
    controls = {("streaming", 0): SimpleNamespace(v_tau=SimpleNamespace(slope=1.0)),
                ("streaming", 1): SimpleNamespace(v_tau=SimpleNamespace(slope=0.9)),
                ("shortcut", 0): SimpleNamespace(v_tau=SimpleNamespace(slope=0.0))}
    c1, c2 = RunConfig(T_train=8), RunConfig(T_train=4)
    free = {c1: dict(against_n=SimpleNamespace(fit=fit("linear")), cones=SimpleNamespace(v_cone=1.2), tau=_speed(1.0)),
            c2: dict(against_n=SimpleNamespace(fit=None), cones=SimpleNamespace(v_cone=2.0), tau=_speed(2.0))}
    res = calibration.calibration_results(controls, {0: fit("flat")}, free)
    assert res["streaming_slope"] == 0.95 and res["shortcut_slope"] == 0.0 and res["shortcut_class"] == "flat"
    assert res["free_linear_fraction"] == 0.5 and res["cone_ratio_median"] == pytest.approx(1.1)
    assert res["free_scaling_classes"] == {c1.contract: "linear", c2.contract: None}


def test_saturation_results_count_fixed_points_and_significant_metrics():
    rows = [dict(in_acc=1.0, ood_acc=o, skip1=s, jac_align=0.9, cosine=0.9, cka=0.9, aa=0.9)
            for o, s in ((0.1, 1.0), (0.5, 0.9), (0.9, 0.8))] + [dict(in_acc=0.2, ood_acc=0.0, skip1=0.0, jac_align=0.0,
                                                                        cosine=0.0, cka=0.0, aa=0.0)]
    fitted = [r for r in rows if r["in_acc"] >= 0.9]
    corr = {m: Estimate(0.5, 0.1, 0.9, 3) if m == "skip1" else Estimate(0.0, -0.5, 0.5, 3) for m in saturation.METRICS}
    reached = SimpleNamespace(tau_star=5, holds=True)
    none = SimpleNamespace(tau_star=None, holds=False)
    res = saturation.saturation_results(rows, fitted, corr, [(None, reached), (None, none)])
    assert res["fixed_point_fraction"] == 0.5 and res["fixed_points_reached"] == "1/2"
    assert res["prop1_fraction"] == 1.0 and res["skip1_min"] == 0.8 and res["tail_max_abs_rho_significant"] == 1
    assert res["ood_acc_range"] == [0.1, 0.9]
    no_fp = saturation.saturation_results(rows, fitted, corr, [(None, none)])
    assert no_fp["prop1_fraction"] is None and no_fp["fixed_point_fraction"] == 0.0
    kept, _ = saturation.correlations(rows)
    assert len(kept) == 3
