"""Section readings moved out of notebook cells (budget law, calibration, saturation), on constructed data."""
from types import SimpleNamespace

import numpy as np
import pytest

from lib.config import RunConfig
from lib.instruments import head
from lib.sections.s01_tail_saturation import read as saturation
from lib.sections.s02_tau_calibration import read as calibration
from lib.sections.s03_budget_law import read as budget
from lib.stats import Estimate
from tests.constructed import SerialPropagator


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


def test_calibration_results_on_constructed_readings():
    fit = lambda cls: SimpleNamespace(cls=cls)                                              # noqa: E731
    controls = {("streaming", 0): SimpleNamespace(v_tau=SimpleNamespace(slope=1.0)),
                ("streaming", 1): SimpleNamespace(v_tau=SimpleNamespace(slope=0.9)),
                ("shortcut", 0): SimpleNamespace(v_tau=SimpleNamespace(slope=0.0))}
    c1, c2 = RunConfig(T_train=8), RunConfig(T_train=4)
    free = {c1: dict(against_n=SimpleNamespace(fit=fit("linear")), cones=SimpleNamespace(v_cone=1.2), tau=_speed(1.0),
                     against_n_uncapped=SimpleNamespace(fit=fit("log"))),
            c2: dict(against_n=SimpleNamespace(fit=None), cones=SimpleNamespace(v_cone=2.0), tau=_speed(2.0, 0.7),
                     against_n_uncapped=SimpleNamespace(fit=fit("linear")))}
    res = calibration.calibration_results(controls, {0: fit("flat")}, free)
    assert res["streaming_slope"] == 0.95 and res["shortcut_slope"] == 0.0 and res["shortcut_class"] == "flat"
    assert res["free_linear_fraction"] == 0.5 and res["cone_ratio_median"] == pytest.approx(1.1)
    assert res["free_scaling_classes"] == {c1.contract: "linear", c2.contract: None}
    assert res["free_linear_fraction_uncapped"] == 0.5          # read with 4x the loops, classes swap here
    assert res["free_scaling_classes_uncapped"] == {c1.contract: "log", c2.contract: "linear"}
    assert res["decoder_position1_min"] == 0.7                  # the worst free model's decoder validity


def _row(run, recipe, in_acc, ood, tau_star, skip1=1.0, metric=0.9, T_train=8):
    after = {m: (metric if tau_star else float("nan")) for m in saturation.METRICS}
    after["skip1"] = skip1 if tau_star else float("nan")
    return dict(run=run, model=run, recipe=recipe, in_acc=in_acc, ood_acc=ood, tau_star=tau_star,
                fixed_fraction=1.0 if tau_star else 0.0, reached=bool(tau_star), T_train=T_train,
                reached_long_window=bool(tau_star) or run == "d",
                converged={"raw": 1.0 if tau_star else 0.0, "cosine": 1.0},
                budget={m: 0.5 for m in saturation.METRICS}, **after)


def test_saturation_results_read_the_settled_population_past_its_fixed_points():
    rows = [_row("a", "settled", 1.0, 0.1, 5, skip1=1.0), _row("b", "settled", 1.0, 0.5, 6, skip1=0.9),
            _row("c", "settled", 1.0, 0.9, 7, skip1=0.8), _row("d", "settled", 1.0, 0.3, None),
            _row("e", "settled", 0.2, 0.0, 4, skip1=0.0),                   # did not learn: never correlated
            _row("f", "fixed", 1.0, 0.0, None), _row("g", "fixed", 1.0, 0.0, None)]
    fitted, _ = saturation.correlations(rows)
    assert [r["run"] for r in fitted] == ["a", "b", "c"]          # learned, settled, metrics past tau* exist
    at_budget, _ = saturation.correlations(rows, recipe="fixed", metrics_at="budget")
    assert [r["run"] for r in at_budget] == ["f", "g"]
    corr = {m: Estimate(0.5, 0.1, 0.9, 3) if m == "skip1" else Estimate(0.0, -0.5, 0.5, 3) for m in saturation.METRICS}
    cfg = lambda seed: RunConfig(seed=seed)                                                     # noqa: E731
    rows[0]["run"], rows[3]["run"] = (saturation.run_id(cfg(s)) for s in (10, 11))
    checks = [(cfg(10), SimpleNamespace(tau_star=5, holds=True, fixed_fraction=1.0)),
              (cfg(11), SimpleNamespace(tau_star=None, holds=False, fixed_fraction=0.0)),
              (cfg(12), SimpleNamespace(tau_star=3, holds=False, fixed_fraction=1.0))]   # not in the population: not counted
    res = saturation.saturation_results(rows, fitted, corr, checks)
    assert res["population"] == 5 and res["learned"] == 4
    assert res["fixed_point_fraction"] == 0.8 and res["fixed_points_reached"] == "4/5"
    assert res["contrast_fixed_points_reached"] == "0/2" and res["converged_by_criterion"] == {"raw": 0.8, "cosine": 1.0}
    assert res["skip1_min"] == 0.8 and res["tail_max_abs_rho_significant"] == 1
    assert res["prop1_fraction"] == 1.0 and res["prop1_holds"] == "1/1"
    assert res["ood_acc_range"] == [0.1, 0.9]
    assert res["fixed_point_fraction_long_window"] == 1.0                  # d settles within the long window
    # the operating point: tau* <= T_train - 1 = 7 on a, b, c; d never settles (e did not learn)
    assert res["premise_met"] == "3/4" and res["skip1_min_at_T_train"] == 0.5 and res["skip1_min_premise"] == 0.5
    too_few = saturation.saturation_results(rows, fitted[:2], corr, checks)
    assert too_few["tail_max_abs_rho_significant"] is None                 # under 3 models: not measured
    none = saturation.saturation_results([_row("x", "settled", 1.0, 0.2, None)], [], corr, [])
    assert none["fixed_point_fraction"] == 0.0 and none["skip1_min"] is None and none["prop1_fraction"] is None


def test_a_kept_population_row_reads_back_as_the_row(store_root):
    import json
    from lib import store
    from lib.config import RunConfig
    run = store.get_or_train(RunConfig(experiment="row_test", task="parity", n_train=4, T_train=2, n_layers=1,
                                       d_model=16, n_heads=2, batch=16, max_steps=20, warmup=5, eval_count=32))
    args = dict(ood_factor=2, long_factor=2, conv_factor=2, eval_count=32, probes=2, conv_inputs=16)
    row = saturation.population_row(run, "settled", **args)
    for _ in range(2):                                      # computed and kept, then read back from the file
        kept = saturation.kept_population_row(run, "settled", **args)
        assert json.dumps(kept, sort_keys=True) == json.dumps(row, sort_keys=True)        # NaN included
    assert saturation.kept_population_row(run, "fixed", **args)["recipe"] == "fixed"      # another argument, another reading
    assert len(list((run.path / "readings").glob("tail-population-row-*.json"))) == 2
