"""Loop schedules above the contract, and convergence criteria on constructed maps."""
import math

import pytest
import torch

from lib.instruments import fixedpoint, tail
from lib.sections.s01_tail_saturation import read as saturation
from lib.config import RunConfig, loops_at_length
from lib.step import loop_loss, loops_for
from tests.constructed import SerialPropagator


def test_fixed_schedule_draws_nothing():
    g = torch.Generator().manual_seed(3)
    before = g.get_state().clone()
    assert loops_for(RunConfig(T_train=5), 7, g) == (5, 5)
    assert torch.equal(g.get_state(), before)         # committed runs keep their data stream


def test_proportional_holds_the_demand():
    cfg = RunConfig(n_train=8, T_train=4, schedule="proportional")
    g = torch.Generator().manual_seed(0)
    assert [loops_for(cfg, n, g)[0] for n in (1, 2, 3, 8, 9)] == [1, 1, 2, 4, 5]
    assert loops_at_length(16, 8, 16) == 32 and loops_at_length(12, 8, 8) == 12


@pytest.mark.parametrize("schedule,n,T_min", [("fixed", 5, 8), ("proportional", 5, 5)])
def test_jitter_range_and_determinism(schedule, n, T_min):
    cfg = RunConfig(n_train=8, T_train=8, schedule=schedule, T_jitter=2.0)
    draws = [loops_for(cfg, n, g) for g in [torch.Generator().manual_seed(1)] for _ in range(400)]
    assert {d[0] for d in draws} == {T_min}
    Ts = {d[1] for d in draws}
    assert Ts == set(range(T_min, 2 * T_min + 1))       # every count in [T_min, 2 T_min], nothing outside
    again = [loops_for(cfg, n, g) for g in [torch.Generator().manual_seed(1)] for _ in range(400)]
    assert draws == again


def test_tail_loss_is_the_mean_over_loops_past_T_min():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(6, 3, 4, 5, generator=g)
    labels = torch.randint(0, 5, (3, 4), generator=g)
    labels[:, 0] = -100
    per_loop = [loop_loss(logits[t], labels, 1, "final") for t in range(6)]
    assert torch.allclose(loop_loss(logits, labels, 3, "tail"), torch.stack(per_loop[2:]).mean())


@pytest.mark.parametrize("bad,msg", [({"T_jitter": 0.5}, "T_jitter"), ({"loss_loops": "all"}, "loss_loops"),
                                     ({"schedule": "streaming", "T_train": 10, "T_jitter": 2.0}, "T_jitter")])
def test_bad_schedule_parameters_are_named(bad, msg):
    with pytest.raises(ValueError, match=msg):
        RunConfig(**bad)


def _states(step, h0, T):
    out, h = [], h0
    for _ in range(T):
        h = step(h)
        out.append(h)
    return torch.stack(out)


def test_contraction_converges_by_every_criterion():
    g = torch.Generator().manual_seed(0)
    fp = torch.randn(4, 3, 8, generator=g)
    hs = _states(lambda h: fp + 0.5 * (h - fp), torch.randn(4, 3, 8, generator=g), 40)
    conv = fixedpoint.convergence_all(hs)
    assert all(c.reached_fraction == 1.0 for c in conv.values())
    # 0.5^t shrinks the step: ||h^{t+1} - h^t|| / ||h^t|| <= 1e-3 from about loop 10 on
    assert 5 <= conv["raw"].tau_star <= 15


def test_growth_along_one_direction_is_not_a_fixed_point():
    g = torch.Generator().manual_seed(0)
    d = torch.randn(4, 3, 8, generator=g)
    hs = _states(lambda h: 1.2 * h, d, 30)                 # direction fixed, norm x1.2 a loop
    conv = fixedpoint.convergence_all(hs)
    assert conv["raw"].reached_fraction == 0.0 and math.isnan(conv["raw"].tau_star)
    assert conv["normalised"].reached_fraction == 1.0 and conv["cosine"].reached_fraction == 1.0
    with pytest.raises(ValueError, match="criterion"):
        fixedpoint.convergence(hs, "angle")


def test_serial_propagator_settles_after_its_front_and_skips_preserve_outputs():
    m, n = 5, 6
    model = SerialPropagator(m=m, period=1)
    tokens = torch.cat([torch.full((8, 1), m), torch.randint(0, m, (8, n), generator=torch.Generator().manual_seed(2))], 1)
    T = 3 * n
    hs = model(tokens, T, return_states=True)[1]
    conv = fixedpoint.convergence(hs, "raw")
    # the front reaches the last position at loop n; from then on the state does not move
    assert conv.reached_fraction == 1.0 and conv.tau_star == n
    p1 = tail.proposition1(model, tokens, T)
    assert p1.tau_star == n and p1.skip_preservation == 1.0
    assert tail.skip_k_preservation(model, tokens, T, k=T - n) == 1.0
    assert tail.skip_k_preservation(model, tokens, T, k=T - n + 2) < 1.0    # before tau*: outputs still change


def test_probe_sets_are_named_and_checked():
    from lib.probes import PROBE_SEEDS, probe_seed
    assert probe_seed("extrapolation", 16) == PROBE_SEEDS["extrapolation"] + 16
    assert len(set(PROBE_SEEDS.values())) == len(PROBE_SEEDS)
    with pytest.raises(ValueError, match="purpose"):
        probe_seed("ood", 3)
    with pytest.raises(ValueError, match="key"):
        probe_seed("tail", 1000)                       # would collide with the next purpose's range


def test_one_rule_scales_loops_with_length():
    fixed = RunConfig(n_train=8, T_train=4)
    assert [fixed.loops_at(n) for n in (2, 8, 12, 16)] == [4, 4, 6, 8]       # T_train in range, demand beyond
    prop = RunConfig(n_train=8, T_train=4, schedule="proportional")
    assert [prop.loops_at(n) for n in (2, 8, 12, 16)] == [1, 4, 6, 8]
    assert RunConfig(n_train=8, T_train=10, schedule="streaming").loops_at(12) == 14
    assert RunConfig(n_train=8, T_train=6, tied=False).loops_at(16) == 6       # the untied control has its depth


def test_tail_metrics_after_the_fixed_point_of_a_contraction():
    from tests.constructed import LinearContraction
    model = LinearContraction(rho=0.3).eval()
    tokens = torch.randint(0, 3, (8, 5), generator=torch.Generator().manual_seed(0))
    solved = torch.ones(8, dtype=torch.bool)
    row = tail.metrics_after_fixed_point(model, tokens, T_train=4, solved=solved, probes=2)
    assert row["tau_star"] is not None and row["tau_star"] < 32
    assert row["skip1"] == 1.0 and row["jac_align"] == pytest.approx(1.0)    # J_t = A at every loop
    assert row["cosine"] == pytest.approx(1.0, abs=1e-6)
    hs = model(tokens, 32, return_states=True)[1]                           # the caller's states: same reading
    assert tail.metrics_after_fixed_point(model, tokens, T_train=4, solved=solved, probes=2, states=hs) == row
    with pytest.raises(ValueError, match="states"):                         # another run's states: refused
        tail.metrics_after_fixed_point(model, tokens, T_train=4, solved=solved, probes=2, states=hs[:16])
    growing = LinearContraction(rho=1.3).eval()                              # no fixed point: no tail after it
    none = tail.metrics_after_fixed_point(growing, tokens, T_train=4, solved=solved, probes=2)
    assert none["tau_star"] is None and all(math.isnan(none[m]) for m in ("skip1", "jac_align", "aa"))


def test_settled_inputs_keep_the_inputs_that_reach_a_fixed_point():
    T = 10
    t = torch.arange(1, T + 1, dtype=torch.float32)[:, None, None]
    h = torch.ones(T, 3, 2, 4)
    h[:, 0] *= t.clamp(max=4)                  # input 0 moves until loop 4, then rests
    h[:, 1] *= 1.5 ** t                        # input 1 grows for ever
    h[:, 2] *= t.clamp(max=8)                  # input 2 rests from loop 8 on
    assert tail.fixed_point_loops(h).tolist() == [4, T, 8]
    fixed, tau_star = tail.settled_inputs(h)
    assert fixed.tolist() == [True, False, True] and tau_star == 8      # the loop from which both have settled
    fixed, tau_star = tail.settled_inputs(h, quantile=0.5)              # the median settler: input 2 waits
    assert fixed.tolist() == [True, False, False] and tau_star == 4
    late = h.clone()
    late[:, 2] = h[:, 1]
    late[:, 0] = t.clamp(max=T - 1)            # the only settling input rests from the last step on
    assert tail.settled_inputs(late)[1] is None                         # settles only at the last loop: no tail


def test_jacobian_alignment_from_a_loop_equals_the_tail_of_the_full_reading():
    model = SerialPropagator(5, 1)
    tokens = torch.cat([torch.full((4, 1), 5), torch.randint(0, 5, (4, 6), generator=torch.Generator().manual_seed(1))], 1)
    full = tail.jacobian_alignment(model, tokens, 10)
    assert len(full) == 9
    assert torch.allclose(torch.tensor(tail.jacobian_alignment(model, tokens, 10, from_loop=4)), torch.tensor(full[3:]))


def test_stacked_jacobian_products_equal_one_pass_per_pair():
    # the instruments stack (state, probe) pairs along the batch; a pass per pair is the reference
    from lib.model import LoopedTransformer
    torch.manual_seed(0)
    model = LoopedTransformer(RunConfig(task="S4", n_layers=2, d_model=32, n_heads=4, T_train=4,
                                        outer_norm=True).model_config()).eval()
    g = torch.Generator().manual_seed(2)
    tokens = torch.randint(0, 24, (3, 7), generator=g)
    e = model.embed_tokens(tokens).detach()
    hs, us = torch.randn(5, 3, 7, 32, generator=g), torch.randn(2, 3, 7, 32, generator=g)   # 5 loops, 2 probes
    f = lambda h: model.step(h, e)                                       # noqa: E731
    one_by_one = torch.stack([torch.stack([tail.jvp(f, (h,), (u,))[1] for u in us]) for h in hs])
    for max_elements in (1, 2 * 3 * 7 * 32 * 2, 2 ** 23):               # a loop per pass, two, all at once
        chunks = list(tail.jacobian_products(model, e, hs, us, max_elements=max_elements))
        assert torch.allclose(torch.cat(chunks), one_by_one, atol=1e-5)
    assert [len(c) for c in chunks] == [5] and len(list(tail.jacobian_products(model, e, hs, us, 1))) == 5


def test_jacobian_alignment_without_a_loop_pair_is_empty_and_a_bad_from_loop_is_named():
    model = SerialPropagator(5, 1)
    tokens = torch.cat([torch.full((2, 1), 5), torch.randint(0, 5, (2, 4), generator=torch.Generator().manual_seed(0))], 1)
    assert len(tail.jacobian_alignment(model, tokens, 6, from_loop=6)) == 0
    assert len(tail.jacobian_alignment(model, tokens, 6, from_loop=9)) == 0
    with pytest.raises(ValueError, match="from_loop: .* >= 1"):
        tail.jacobian_alignment(model, tokens, 6, from_loop=0)


def test_tail_readings_from_given_states_equal_the_readings_that_run_the_loop():
    from lib.model import LoopedTransformer
    torch.manual_seed(1)
    model = LoopedTransformer(RunConfig(task="S4", n_layers=1, d_model=16, n_heads=2, T_train=4,
                                       outer_norm=True).model_config()).eval()
    tokens = torch.randint(0, 24, (40, 6), generator=torch.Generator().manual_seed(3))
    solved = torch.arange(40) % 3 > 0
    hs = fixedpoint.states(model, tokens, 12)                            # longer than T: the first T are read
    row = tail.metrics_row(model, tokens, 4, solved, 2, 12, states=hs)
    assert row == pytest.approx(tail.metrics_row(model, tokens, 4, solved, 2, 12), nan_ok=True)
    assert all(math.isnan(x) or x == round(x, tail.DECIMALS) for x in row.values())   # read at the resolution
    with pytest.raises(ValueError, match=r"states: expected at least 4 loops. states \(T, B, N, d\) of the \(40, 6\) tokens"):
        tail.metrics_row(model, tokens, 4, solved, states=hs[:, :10])


def test_tail_readings_refuse_given_states_with_streaming():
    model = SerialPropagator(5, 1)
    tokens = torch.cat([torch.full((2, 1), 5), torch.randint(0, 5, (2, 4), generator=torch.Generator().manual_seed(0))], 1)
    hs = model(tokens, 6, return_states=True)[1]
    with pytest.raises(ValueError, match="states: not with streaming=True"):
        tail.metrics_row(model, tokens, 6, torch.ones(2, dtype=torch.bool), streaming=True, states=hs)


def test_tail_readings_that_differ_below_the_resolution_are_one_reading():
    # past a fixed point two machines read 1 - 4e-5 and 1 - 9e-6: float noise, a tie, not a ranking
    assert tail.at_resolution(1 - 4e-5) == tail.at_resolution(1 - 9e-6) == 1.0
    assert tail.at_resolution(0.8764) != tail.at_resolution(0.8754)           # a real difference stays
    assert math.isnan(tail.at_resolution(float("nan")))
    fitted = [dict(recipe="settled", in_acc=1.0, reached=True, ood_acc=a, budget={},
                   **{m: tail.at_resolution(1 - e) for m in saturation.METRICS})
              for a, e in ((0.2, 4e-5), (0.5, 9e-6), (0.9, 2e-5))]
    _, corr = saturation.correlations(fitted)
    assert all(math.isnan(e.value) for e in corr.values())                    # ties only: undefined
