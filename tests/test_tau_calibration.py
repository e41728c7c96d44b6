"""02, tau calibration: the section's results on constructed readings."""
from types import SimpleNamespace
import pytest
from lib.config import RunConfig
from lib.sections.s02_tau_calibration import read as calibration


def _speed(v, position1=1.0):
    return SimpleNamespace(v_tau=SimpleNamespace(v=v), v_frontier=v, position1_first_loop=position1)


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
