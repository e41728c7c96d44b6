"""Paper B's knobs in the model and the fixed-point instruments on constructed cases."""
import numpy as np
import pytest
import torch

from lib.instruments import chunks, fixedpoint
from lib.sections.s09_stability import read as read09
from lib.model import LoopConfig, LoopedTransformer


@pytest.mark.parametrize("eigs", [[0.5, -0.3, 0.1], [1.7, 0.2, -0.9], [0.9, 0.8, 0.1]])
def test_spectral_radius_of_a_linear_map_matches_numpy(eigs):
    g = torch.Generator().manual_seed(1)
    Q = torch.linalg.qr(torch.randn(3, 3, generator=g))[0]
    A = Q @ torch.diag(torch.tensor(eigs)) @ torch.linalg.inv(Q)          # non-symmetric in general
    b = torch.randn(3)
    f = lambda h: (A @ h.reshape(3)).reshape(1, 3) + b
    rho = fixedpoint.spectral_radius(f, torch.zeros(1, 3), iters=200)
    assert rho == pytest.approx(max(abs(x) for x in eigs), rel=2e-2)


def test_spectral_radius_with_a_complex_top_pair():
    r, th = 0.8, 0.7                                      # eigenvalues 0.8 e^{±i 0.7}, and 0.3
    A = torch.tensor([[r * float(np.cos(th)), -r * float(np.sin(th)), 0.0], [r * float(np.sin(th)), r * float(np.cos(th)), 0.0], [0.0, 0.0, 0.3]])
    P = torch.tensor([[1.0, 0.5, 0.2], [0.0, 1.0, 0.3], [0.1, 0.0, 1.0]])
    A = P @ A @ torch.linalg.inv(P)
    f = lambda h: (A @ h.reshape(3)).reshape(1, 3)
    exact = max(abs(np.linalg.eigvals(A.numpy())))
    assert fixedpoint.spectral_radius(f, torch.zeros(1, 3), iters=400) == pytest.approx(exact, rel=3e-2)


def test_spectral_radius_of_a_tiny_looped_model_matches_its_full_jacobian():
    torch.manual_seed(0)
    m = LoopedTransformer(LoopConfig(vocab_size=4, n_classes=3, n_layers=1, d_model=4, n_heads=1, injection="add"))
    tokens = torch.tensor([[3, 0, 1]])
    h = fixedpoint.states(m, tokens, 5)[-1]
    e = m.embed_tokens(tokens).detach()
    G = fixedpoint.step_map(m, e)
    from torch.nn.attention import SDPBackend, sdpa_kernel
    with sdpa_kernel([SDPBackend.MATH]):
        J = torch.autograd.functional.jacobian(lambda x: G(x.reshape(h.shape)).reshape(-1), h.reshape(-1))
    exact = max(abs(np.linalg.eigvals(J.detach().numpy())))
    assert fixedpoint.spectral_radius(G, h, iters=300) == pytest.approx(exact, rel=5e-2)


def test_spectral_radii_of_a_batch_equal_each_input_alone_and_flag_a_dead_map():
    torch.manual_seed(0)
    m = LoopedTransformer(LoopConfig(vocab_size=4, n_classes=3, n_layers=1, d_model=8, n_heads=2, injection="add"))
    tokens = torch.tensor([[3, 0, 1, 2], [3, 2, 2, 0], [3, 1, 0, 0]])
    hs = fixedpoint.states(m, tokens, 5)[-1]
    e = m.embed_tokens(tokens).detach()
    alone = [fixedpoint.spectral_radius(fixedpoint.step_map(m, e[b:b + 1]), hs[b:b + 1], 40, seed=7 + b)
             for b in range(3)]
    together = fixedpoint.spectral_radii(fixedpoint.step_map(m, e), hs, 40, seeds=[7, 8, 9])
    assert together == pytest.approx(alone, rel=1e-5)
    dead = lambda h: h * torch.tensor([1.0, 0.0, 2.0]).view(3, 1, 1)     # input 1's map is the zero map
    assert fixedpoint.spectral_radii(dead, hs, 10).tolist() == pytest.approx([1.0, 0.0, 2.0])
    with pytest.raises(ValueError, match="seeds: one per input"):
        fixedpoint.spectral_radii(dead, hs, 10, seeds=[1])


def test_reachability_on_constructed_trajectories():
    T, B = 12, 2
    hs = torch.ones(T, B, 3, 2)
    for t in range(T):
        hs[t, 0] *= 1 + 0.5 ** t            # contracting: steps shrink geometrically
        hs[t, 1] *= 1 + 0.5 * (t % 2)       # oscillating: never settles
    r = fixedpoint.convergence(hs, "raw", tol=1e-2)
    assert r.reached_fraction == 0.5
    # input 0's step |0.5^{t+1} - 0.5^t| / (1 + 0.5^t) first falls below 0.01 at t = 6 (0-indexed) -> loop 7
    assert r.tau_star == 7


def test_input_dependence_counts_attractors():
    class Collapse(torch.nn.Module):             # every input goes to the same point: one fixed point
        def __call__(self, tokens, T, return_states=False):
            h = torch.ones(T, len(tokens), tokens.shape[1], 2)
            return None, h
    d = fixedpoint.input_dependence(Collapse(), torch.randint(0, 4, (16, 5)), 4, vocab=4)
    assert d.distinct_fixed_points == 1 and d.mean_distance == 0 and d.nearby_distance == 0

    class Identity(torch.nn.Module):             # the state is the input itself: every input its own point
        def __call__(self, tokens, T, return_states=False):
            h = torch.nn.functional.one_hot(tokens, 4).float()[None].expand(T, -1, -1, -1)
            return None, h
    tokens = torch.unique(torch.randint(0, 4, (32, 5)), dim=0)
    d = fixedpoint.input_dependence(Identity(), tokens, 4, vocab=4)
    assert d.distinct_fixed_points == len(tokens) and d.nearby_distance > 0


@pytest.mark.parametrize("injection", ["none", "add", "internal"])
@pytest.mark.parametrize("norm", ["pre", "peri", "post"])
@pytest.mark.parametrize("outer", [False, True])
def test_paper_b_knobs_run(injection, norm, outer):
    torch.manual_seed(0)
    m = LoopedTransformer(LoopConfig(vocab_size=5, n_classes=4, n_layers=1, d_model=8, n_heads=2,
                                     injection=injection, norm=norm, outer_norm=outer))
    x = torch.randint(0, 5, (3, 6))
    logits, hs = m(x, 4, return_states=True)
    assert logits.shape == (3, 6, 4) and torch.isfinite(hs).all()
    if outer:   # the outer LayerNorm puts every state on the normalised sphere (unit weight, zero bias at init):
        # zero mean, mean square var / (var + eps) <= 1 per position
        assert torch.allclose(hs.mean(-1), torch.zeros(hs.shape[:-1]), atol=1e-5)
        ms = hs.pow(2).mean(-1)
        assert (ms <= 1 + 1e-5).all() and (ms > 0.9).all()
    assert fixedpoint.gradient_norms(m, x, torch.randint(0, 4, (3, 6)), (2, 4))[4] > 0


def test_recall_placements_change_the_computation_graph_as_documented():
    """none: the input reaches loop t only through h^0; external (add): at the block entry;
    internal: inside each sublayer after its pre-norm (not at the entry)."""
    torch.manual_seed(0)
    cfg = dict(vocab_size=5, n_classes=4, n_layers=1, d_model=8, n_heads=2)
    x = torch.randint(0, 5, (2, 4))
    h = torch.randn(2, 4, 8)
    for injection in ("none", "add", "internal"):
        m = LoopedTransformer(LoopConfig(**cfg, injection=injection))
        e = m.embed_tokens(x).detach().requires_grad_(True)
        out = m.step(h, e)
        grad = torch.autograd.grad(out.sum(), e, allow_unused=True)[0]
        assert (grad is None) == (injection == "none"), injection     # no recall: one loop ignores e
        entry = {}
        m.block[0].ln_attn.register_forward_hook(lambda mod, inp, o: entry.update(x=inp[0]))
        m.step(h, e)
        # the block's entry sees h + e with external recall, plain h otherwise
        assert torch.allclose(entry["x"], h + e if injection == "add" else h), injection
        if injection == "internal":          # and e enters after the norm: attention's input is LN(h) + e
            seen = {}
            m.block[0].qkv.register_forward_hook(lambda mod, inp, o: seen.update(x=inp[0]))
            m.step(h, e)
            assert torch.allclose(seen["x"], m.block[0].ln_attn(h) + e)


def test_summary_reads_one_run_on_all_three_axes(store_root):
    from lib import store
    from lib.config import RunConfig
    cfg = RunConfig(experiment="fp_test", task="parity", n_train=4, T_train=2, n_layers=1, d_model=16, n_heads=2,
                    batch=16, max_steps=20, warmup=5, eval_count=32)
    run = store.get_or_train(cfg)
    s = read09.summary(run, test_ns=(4, 6), long_factor=3, eval_count=32)
    assert s["seed"] == 0 and s["in_acc"] == run.metrics["final_eval"]["seq_acc"]
    assert len(s["reach"].step) == 3 * cfg.T_train - 1    # steps between the long_factor * T_train states
    assert set(s["grads"]) == {2, 4, 8} and all(np.isfinite(list(s["grads"].values())))
    assert s["grad_growth"] == pytest.approx(s["grads"][8] / s["grads"][2]) and s["n_train"] == 4
    assert set(s["extrap"]) == {4, 6} and all(0.0 <= a <= 1.0 for a in s["extrap"].values())
    assert s["rho"] > 0 and s["dep"].distinct_fixed_points >= 1


def test_distinct_states_counts_as_the_scalar_definition_also_at_the_threshold():
    g = torch.Generator().manual_seed(3)
    base = torch.randn(6, 5, 4, generator=g)
    h = [base[i % 6] * (1 + 0.002 * i) for i in range(24)]                 # clusters 0.2 % apart in scale
    for r in (0.0099999, 0.01, 0.0100001, 0.02, 0.005):                     # offsets around tol_distinct
        u = torch.randn(5, 4, generator=g)
        h.append(base[0] + r * base[0].norm() * u / u.norm())
    h = torch.stack(h + [torch.zeros(5, 4)])                                 # and a zero state
    for tol in (1e-2, 3e-3, 0.5):
        assert fixedpoint.distinct_states(h, tol) == fixedpoint._distinct_states_by_definition(h, tol)


def _words_and_labels(m, n, B, T, seed):
    """Words of n symbols and labels that the model gets right at some loops: its own predictions after
    loop T // 2, with one position changed in a third of the words (some early, some late)."""
    g = torch.Generator().manual_seed(seed)
    tokens = torch.cat([torch.full((B, 1), 3), torch.randint(0, 3, (B, n), generator=g)], 1)
    with torch.no_grad():
        labels = m(tokens, T // 2).argmax(-1)
    wrong = torch.arange(B) % 3 == 0
    pos = torch.randint(1, n + 1, (B,), generator=g)
    labels[wrong, pos[wrong]] = (labels[wrong, pos[wrong]] + 1) % 3
    return tokens, labels


@pytest.mark.parametrize("outer", [False, True])
def test_best_accuracy_equals_the_plain_reader(monkeypatch, outer):
    """The fast extrapolation reading (chunks, prefix passes, loops that cannot beat the best skipped)
    gives exactly the plain reader's best loop, with and without prefix passes."""
    from lib.instruments import head
    torch.manual_seed(0)
    m = LoopedTransformer(LoopConfig(vocab_size=4, n_classes=3, n_layers=1, d_model=16, n_heads=2, injection="add",
                                     outer_norm=outer, max_len=200)).eval()
    with torch.no_grad():                   # weights large enough that the predictions move from loop to loop
        for p in m.parameters():
            if p.dim() == 2:
                p.normal_(0, 0.3)
    n, B, T = 95, 30, 10
    tokens, labels = _words_and_labels(m, n, B, T, 1)
    with torch.no_grad():
        seq = (head.loop_predictions(m, tokens, T) == labels[None, :, 1:]).all(2).double().mean(1)
    assert 0 < seq.max() < 1 and seq.min() < seq.max()          # the best loop stands out
    monkeypatch.setattr(chunks, "CHUNK_TOKENS", 200)                    # two inputs per chunk
    passes = []
    words_right = fixedpoint._words_right
    monkeypatch.setattr(fixedpoint, "_words_right", lambda m, tok, *a, **k: passes.append(tok.shape[1]) or words_right(m, tok, *a, **k))
    for previous in (None, 0.9):
        passes.clear()
        assert fixedpoint.best_accuracy(m, tokens, labels, T, causal=True, previous_best=previous) == float(seq.max())
        if previous is None and fixedpoint._prefix_exact(m, tokens, 32):
            assert passes[0] == 32 and passes[-1] == n + 1                   # a prefix pass, then the full words
    wrong = labels.clone()
    wrong[:, 2] = -100                                                      # no word's prefix is ever right
    passes.clear()
    assert fixedpoint.best_accuracy(m, tokens, wrong, T, causal=True) == 0.0
    assert len(passes) == 1 or not fixedpoint._prefix_exact(m, tokens, 32)  # the prefix pass decides it alone



def test_a_kept_summary_reads_back_as_the_summary(store_root):
    from lib import store
    from lib.config import RunConfig
    cfg = RunConfig(experiment="fp_test", task="parity", n_train=4, T_train=2, n_layers=1, d_model=16, n_heads=2,
                    batch=16, max_steps=20, warmup=5, eval_count=32)
    run = store.get_or_train(cfg)
    s = read09.summary(run, test_ns=(4, 6), long_factor=3, eval_count=32)
    for _ in range(2):                                   # computed and kept, then read back from the file
        kept = read09.kept_summary(run, test_ns=(4, 6), long_factor=3, eval_count=32)
        assert set(kept) == set(s) and list(kept["grads"]) == list(s["grads"]) and list(kept["extrap"]) == [4, 6]
        for k in ("reach", "reach_cosine"):
            assert kept[k].step.dtype == s[k].step.dtype and np.array_equal(kept[k].step, s[k].step)
            assert (kept[k].criterion, kept[k].reached_fraction) == (s[k].criterion, s[k].reached_fraction)
        assert kept["dep"] == s["dep"] and kept["rho"] == s["rho"] and kept["extrap"] == s["extrap"]
    assert len(list((run.path / "readings").glob("stability-summary-*.json"))) == 1
