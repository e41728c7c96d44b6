"""Instruments on constructed looped maps whose answers are known in closed form."""
import numpy as np
import pytest
import torch

from lib.instruments import head, patching, tail
from lib.model import LoopConfig, LoopedTransformer, reveal_loops
from tests.constructed import LinearContraction, SerialPropagator, TwoFixedPoints, serial_labels


def words(m, B, n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(0, m, (B, n), generator=g)
    return torch.cat([torch.full((B, 1), m), x], dim=1)


@pytest.mark.parametrize("period", [1, 2])
def test_serial_propagator_tau_and_damage_cone(period):
    m, n, B = 5, 6, 16
    model = SerialPropagator(m, period)
    tokens = words(m, B, n, 0)
    labels = serial_labels(tokens, m)
    T = period * n + 2
    preds = head.loop_predictions(model, tokens, T).numpy()
    r = head.measure(preds, labels[:, 1:].numpy())
    assert r.solved_fraction == 1.0
    assert r.tau_curve.tolist() == [period * i for i in range(1, n + 1)]
    assert r.v_tau.v == pytest.approx(1 / period)
    cones = patching.damage_cones(model, tokens, labels, words(m, B, n, 1), T,
                                  positions=[1, 2, 3], loops=list(range(period * 3, T - 2)))
    assert cones.n_points > 0
    assert cones.v_cone == pytest.approx(1 / period)
    assert cones.r2 == pytest.approx(1.0)
    # damage goes only forward in position (causality) and dprob is non-positive where outputs flipped
    for p, (j, t) in enumerate(cones.grid):
        assert np.all(cones.flip[p][:, : j - 1] == 0)
        assert np.all(cones.flip[p][: t - 1] == 0)
    assert np.all(cones.dprob[cones.flip >= 0.99] < 0)


def test_patch_strength_validated():
    model = SerialPropagator()
    tokens = words(5, 2, 3, 0)
    with pytest.raises(ValueError, match="alpha"):
        patching.damage_cones(model, tokens, serial_labels(tokens, 5), tokens, 4, alpha=0.0)


def test_contraction_satisfies_proposition_1_exactly():
    model = LinearContraction(rho=0.3).eval()
    tokens = torch.randint(0, 3, (8, 5))
    check = tail.proposition1(model, tokens, T=40, tol=1e-6)
    assert check.tau_star is not None and check.tau_star < 40
    assert check.skip_preservation == 1.0
    assert check.jacobian_change < 1e-5            # J_t = A for every t (a linear map)
    assert check.feature_change < 1e-4
    assert check.holds
    assert tail.skip_k_preservation(model, tokens, 40, k=5) == 1.0
    align = tail.jacobian_alignment(model, tokens, 10)
    assert np.allclose(align, 1.0, atol=1e-5)


def test_asymptotic_alignment_separates_one_from_two_fixed_points():
    tokens = torch.randint(0, 3, (16, 6))
    contraction = LinearContraction(rho=0.5).eval()
    assert tail.asymptotic_alignment(contraction, tokens, T_long=60) > 0.999
    bistable = TwoFixedPoints().eval()
    assert tail.asymptotic_alignment(bistable, tokens, T_long=60) < 0.5


def test_cka_and_cosine_on_known_matrices():
    X = torch.randn(50, 4, generator=torch.Generator().manual_seed(0))
    assert tail.linear_cka(X, X) == pytest.approx(1.0)
    assert tail.linear_cka(X, 3 * X @ torch.linalg.qr(torch.randn(4, 4))[0]) == pytest.approx(1.0, abs=1e-5)
    Y = torch.randn(50, 4, generator=torch.Generator().manual_seed(1))
    assert tail.linear_cka(X, Y) < 0.5


def test_streaming_masks_position_by_position():
    torch.manual_seed(0)
    model = LoopedTransformer(LoopConfig(vocab_size=7, n_classes=6, n_layers=1, d_model=16, n_heads=2)).eval()
    n = 5
    tokens = words(6, 3, n, 0)
    T = n + 2
    e = model.embed(tokens)
    _, states = model(tokens, T, return_states=True, streaming=True)
    start = reveal_loops(n + 1)
    assert start.tolist() == [0, 0, 1, 2, 3, 4]         # token i starts at loop i - 1
    for j in range(n + 1):
        for t in range(T):                               # states[t] = state after 0-indexed loop t
            if t < start[j]:
                assert torch.equal(states[t][:, j], e[:, j]), (j, t)
            else:
                assert not torch.equal(states[t][:, j], e[:, j]), (j, t)
    # a token changed at position i leaves every earlier position untouched at every loop
    other = tokens.clone()
    other[:, 4] = (other[:, 4] + 1) % 6
    _, states2 = model(other, T, return_states=True, streaming=True)
    assert torch.equal(states[:, :, :4], states2[:, :, :4])
    # streaming differs from free running
    _, free = model(tokens, T, return_states=True)
    assert not torch.equal(free, states)


@pytest.mark.parametrize("period", [1, 2])
def test_tau_against_n_reads_a_serial_propagator_as_linear(period):
    from lib.config import RunConfig
    cfg = RunConfig(task="Z5", n_train=6, T_train=2 * 6 + 2)      # Z5 prefix products = prefix sums mod 5
    r = head.tau_against_n(SerialPropagator(5, period), cfg, ns=[2, 3, 4, 5, 6], count=32)
    assert r.ns == [2, 3, 4, 5, 6]
    assert r.last == [float(period * n) for n in r.ns]          # the front reaches position n at loop period * n
    assert r.fit.cls == "linear"
    short = head.tau_against_n(SerialPropagator(5, period), RunConfig(task="Z5", n_train=6, T_train=3), ns=[3, 6],
                               count=32)
    assert short.fit is None                                     # fewer than 3 lengths: no class
