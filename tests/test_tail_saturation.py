"""01, tail saturation: the population's results past its fixed points, and a kept population row read back as computed."""
from types import SimpleNamespace


from lib.config import RunConfig
from lib.sections.s01_tail_saturation import read as saturation
from lib.stats import Estimate


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
