import pytest
import torch

from lib.model import PRESETS, LoopConfig, LoopedTransformer


def make(injection="adapter", n_layers=2, d_model=32, n_heads=4):
    torch.manual_seed(0)
    return LoopedTransformer(LoopConfig(vocab_size=7, n_classes=6, n_layers=n_layers, d_model=d_model,
                                        n_heads=n_heads, injection=injection))


def test_tied_model_owns_exactly_one_block():
    m = make(n_layers=2)
    block = sum(p.numel() for p in m.block.parameters())
    d = 32
    per_layer = 2 * 2 * d + (3 * d * d + 3 * d) + (d * d + d) + (4 * d * d + 4 * d) + (4 * d * d + d)
    assert block == 2 * per_layer
    other = m.embed.weight.numel() + m.adapter.weight.numel() + 2 * d + (d * 6 + 6)
    assert m.n_params() == block + other
    # the parameter count does not depend on how many loops are run
    x = torch.randint(0, 7, (2, 5))
    for T in (1, 3, 9):
        m(x, T)
    assert m.n_params() == block + other


@pytest.mark.parametrize("injection", ["none", "add", "adapter"])
def test_last_loop_logits_equal_model_output(injection):
    m = make(injection).eval()
    x = torch.randint(0, 7, (3, 6))
    all_logits, states = m(x, 5, all_loops=True, return_states=True)
    assert all_logits.shape == (5, 3, 6, 6) and states.shape == (5, 3, 6, 32)
    torch.testing.assert_close(all_logits[-1], m(x, 5))
    torch.testing.assert_close(all_logits[2], m(x, 3))       # loop t of a T-loop run = a t-loop run


def test_causal():
    m = make().eval()
    x = torch.randint(0, 7, (2, 8))
    y = x.clone()
    y[:, 5:] = (y[:, 5:] + 1) % 7
    torch.testing.assert_close(m(x, 4)[:, :5], m(y, 4)[:, :5])


def test_injection_changes_computation():
    x = torch.randint(0, 7, (2, 6))
    m_none, m_add = make("none").eval(), make("add").eval()
    m_add.load_state_dict(m_none.state_dict())
    assert not torch.allclose(m_none(x, 3), m_add(x, 3))
    # adapter initialised to [I | I] is the additive injection at start
    m_ad = make("adapter").eval()
    sd = {k: v for k, v in m_ad.state_dict().items() if not k.startswith("adapter")}
    m_add.load_state_dict(sd)
    torch.testing.assert_close(m_ad(x, 3), m_add(x, 3))


def test_presets():
    assert PRESETS["s"]["n_layers"] == 2 and PRESETS["s"]["d_model"] == 128
    assert PRESETS["m"]["n_layers"] == 2 and PRESETS["m"]["d_model"] == 256
    assert PRESETS["l"]["n_layers"] == 4 and PRESETS["l"]["d_model"] == 512
    m = LoopedTransformer(LoopConfig(vocab_size=25, n_classes=24, **PRESETS["s"]))
    assert 0.35e6 < m.n_params() < 0.5e6          # ~0.43M, as the prototype's s-size model


@pytest.mark.parametrize("kw,msg", [
    (dict(d_model=30, n_heads=4), "d_model"), (dict(injection="concat"), "injection"),
    (dict(recall_op="mul"), "recall_op"), (dict(injection="add", recall_op="concat"), "recall_op"),
    (dict(injection="none", recall_op="linear"), "recall_op"), (dict(injection="adapter", recall_op="linear"), "recall_op"),
    (dict(norm="outer"), "norm"), (dict(norm_kind="batch"), "norm_kind"),
    (dict(n_layers=0), "n_layers"), (dict(n_heads=0), "n_heads")])
def test_bad_config(kw, msg):
    with pytest.raises(ValueError, match=msg):
        LoopConfig(vocab_size=5, n_classes=4, **kw)


def test_bad_T():
    with pytest.raises(ValueError, match="T: "):
        make()(torch.zeros(1, 3, dtype=torch.long), 0)


def test_bidirectional_attention_lets_early_positions_see_later_tokens():
    torch.manual_seed(0)
    m = LoopedTransformer(LoopConfig(vocab_size=7, n_classes=6, n_layers=1, d_model=32, n_heads=4,
                                     causal=False)).eval()
    causal = make(n_layers=1)
    causal.load_state_dict(m.state_dict())                 # same weights, only the mask differs
    x = torch.randint(0, 7, (2, 8))
    y = x.clone()
    y[:, 5:] = (y[:, 5:] + 1) % 7
    assert not torch.allclose(m(x, 2)[:, :5], m(y, 2)[:, :5])
    torch.testing.assert_close(causal(x, 2)[:, :5], causal(y, 2)[:, :5])
    torch.testing.assert_close(m(x, 1)[:, -1], causal(x, 1)[:, -1])   # one loop: the last position sees all either way
    with pytest.raises(ValueError, match="streaming"):
        m(x, 9, streaming=True)
    with pytest.raises(ValueError, match="causal"):
        LoopConfig(vocab_size=5, n_classes=4, causal=1)


# --- population axis: P models of one config as one model (LoopedTransformer.stack) ---------------
CONTROLS = [dict(), dict(injection="add"), dict(injection="none"), dict(injection="internal"), dict(n_blocks=4),
            dict(pos="learned"), dict(pos="rotary"), dict(pos="scan", max_len=32), dict(pos="grid"), dict(norm="peri"),
            dict(norm="post"), dict(outer_norm=True), dict(causal=False),
            # Paper B's knobs as its code has them: recall ops at both placements, sandwich, RMSNorm
            dict(injection="add", recall_op="linear"), dict(injection="internal", recall_op="linear"),
            dict(injection="internal", recall_op="concat"), dict(norm="sandwich"),
            dict(norm_kind="rms", outer_norm=True, norm="peri"), dict(attn_window=3)]


@pytest.mark.parametrize("kw", CONTROLS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()) or "default")
def test_stacked_model_runs_each_seed_as_its_single_model(kw):
    cfg = LoopConfig(vocab_size=7, n_classes=6, n_layers=2, d_model=16, n_heads=2, **kw)
    models = []
    for s in range(3):
        torch.manual_seed(s)
        m = LoopedTransformer(cfg).eval()
        with torch.no_grad():            # seeds must differ in every parameter (recall maps start at I, norms at 1)
            for p in m.parameters():
                p.add_(0.05 * torch.randn(p.shape))
        models.append(m)
    rng = torch.get_rng_state()
    stacked = LoopedTransformer.stack(models)
    assert torch.equal(torch.get_rng_state(), rng)                     # stacking draws nothing
    assert [k for k, _ in stacked.named_parameters()] == [k for k, _ in models[0].named_parameters()]
    x = torch.randint(0, 7, (3, 5, 7))
    close = dict(atol=1e-5, rtol=1e-5)
    out, states = stacked(x, 4, all_loops=True, return_states=True)
    assert out.shape == (3, 4, 5, 7, 6) and states.shape == (3, 4, 5, 7, 16)
    Ts = [2, 4, 3]                                                     # one loop count per seed
    own = stacked(x, Ts)
    streams = [dict(streaming=False)] + ([dict(streaming=True)] if cfg.causal else [])
    for p, m in enumerate(models):
        torch.testing.assert_close(out[p], m(x[p], 4, all_loops=True), **close)
        torch.testing.assert_close(own[p], m(x[p], Ts[p]), **close)
        for kw_s in streams:
            torch.testing.assert_close(stacked(x, Ts, **kw_s)[p], m(x[p], Ts[p], **kw_s), **close)
    with pytest.raises(ValueError, match="T: "):
        stacked(x, [2, 3])


def test_single_model_has_no_population_axis():
    m = make()
    assert m.population is None and all(layer.population is None for layer in m.block)
    with pytest.raises(ValueError, match="unstack"):
        m.unstack(0)
    with pytest.raises(ValueError, match="models"):
        LoopedTransformer.stack([m, make(injection="add")])


@pytest.mark.parametrize("causal", [True, False])
def test_attention_as_broadcast_products_equals_the_fused_kernel(causal):
    from lib.layers import attention_products
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(3, 2, 4, 9, 16, generator=g) for _ in range(3))    # (P, B, H, N, d): population shape too
    fused = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    assert torch.allclose(attention_products(q, k, v, causal), fused, atol=1e-5)


def test_a_compiled_training_run_is_a_close_sample_of_the_eager_one(tmp_path):
    from lib.config import RunConfig
    from lib.train import train
    cfg = RunConfig(task="S3", n_train=4, T_train=4, d_model=16, n_heads=2, batch=8, max_steps=6, warmup=2,
                    eval_count=16, schedule="proportional", T_jitter=2.0, loss_loops="tail", outer_norm=True)
    eager, m_eager = train(cfg)
    compiled, m_compiled = train(cfg, compile=True)
    assert "step" not in vars(compiled)                          # the plain method again after training
    for name, w in eager.state_dict().items():
        assert torch.allclose(w, compiled.state_dict()[name], atol=1e-4), name
    assert [r["step"] for r in m_eager["log"]] == [r["step"] for r in m_compiled["log"]]
    assert m_compiled["compiled"] is True and "compiled" not in m_eager      # eager metrics as before


# --- Paper B's knobs ------------------------------------------------------------------------------
@pytest.mark.parametrize("injection", ["add", "internal"])
def test_linear_recall_starts_as_additive_recall(injection):
    """W_x = W_e = I and zero biases at initialisation: the same function as recall_op="add"."""
    torch.manual_seed(0)
    add = LoopedTransformer(LoopConfig(vocab_size=7, n_classes=6, n_layers=2, d_model=16, n_heads=2,
                                       injection=injection)).eval()
    lin = LoopedTransformer(LoopConfig(vocab_size=7, n_classes=6, n_layers=2, d_model=16, n_heads=2,
                                       injection=injection, recall_op="linear")).eval()
    missing = lin.load_state_dict(add.state_dict(), strict=False).missing_keys
    assert missing and all("recall_" in k for k in missing)           # only the recall maps are new
    x = torch.randint(0, 7, (3, 6))
    torch.testing.assert_close(lin(x, 3), add(x, 3))
    with torch.no_grad():                                               # and they act once trained away from I
        next(p for n, p in lin.named_parameters() if n.endswith("recall_e.weight")).mul_(2.0)
    assert not torch.allclose(lin(x, 3), add(x, 3))


def test_concat_recall_feeds_each_sublayer_state_and_input():
    m = LoopedTransformer(LoopConfig(vocab_size=7, n_classes=6, n_layers=1, d_model=16, n_heads=2,
                                     injection="internal", recall_op="concat"))
    layer = m.block[0]
    assert layer.qkv.in_features == 32 and layer.mlp_in.in_features == 32 and layer.attn_out.in_features == 16
    x, e = torch.randn(2, 5, 16), torch.randn(2, 5, 16)
    torch.testing.assert_close(layer.recall(x, e), torch.cat([x, e], -1))
    assert m(torch.randint(0, 7, (2, 5)), 3).shape == (2, 5, 6)


@pytest.mark.parametrize("kind", ["layer", "rms"])
def test_sandwich_and_post_norm_leave_every_position_normalised(kind):
    """Both end each sublayer with a norm after the residual add: at initialisation (unit scale, zero
    shift) every position of a layer's output has zero mean and unit variance (LayerNorm) or unit
    root-mean-square (RMSNorm); pre-norm's output does not."""
    x = torch.randn(2, 5, 16) * 3 + 1
    for norm, normalised in (("sandwich", True), ("post", True), ("pre", False)):
        layer = LoopedTransformer(LoopConfig(vocab_size=7, n_classes=6, n_layers=1, d_model=16, n_heads=2,
                                             norm=norm, norm_kind=kind)).block[0]
        y = layer(x)
        unit = (y.pow(2).mean(-1).sqrt() if kind == "rms" else y.var(-1, unbiased=False)).detach()
        centred = y.mean(-1).abs().max() < 1e-5 if kind == "layer" else True
        assert (torch.allclose(unit, torch.ones_like(unit), atol=1e-3) and centred) == normalised, (norm, kind)
    rms = LoopedTransformer(LoopConfig(vocab_size=7, n_classes=6, norm_kind="rms", outer_norm=True))
    assert all(isinstance(mod, torch.nn.RMSNorm) for n, mod in rms.named_modules() if n.split(".")[-1].startswith("ln_"))


def test_local_attention_sees_only_its_window():
    from lib.layers import local_mask
    assert local_mask(4, 2).int().tolist() == [[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]]
    torch.manual_seed(0)
    m = LoopedTransformer(LoopConfig(vocab_size=7, n_classes=6, n_layers=1, d_model=16, n_heads=2,
                                     attn_window=2)).eval()
    x = torch.randint(0, 7, (2, 8))
    y = x.clone()
    y[:, 2] = (y[:, 2] + 1) % 7
    # one loop, one layer: position 4 sees positions 3-4 only, so a change at 2 cannot reach it...
    torch.testing.assert_close(m(x, 1)[:, 4:], m(y, 1)[:, 4:])
    # ...but after two loops it can: position 4 reads 3, which read 2 a loop before (a serial frontier)
    assert not torch.allclose(m(x, 2)[:, 4], m(y, 2)[:, 4])
    torch.testing.assert_close(m(x, 2)[:, 5:], m(y, 2)[:, 5:])              # and not yet 5 or beyond
    with pytest.raises(ValueError, match="attn_window"):
        LoopConfig(vocab_size=5, n_classes=4, attn_window=3, causal=False)


def test_depth_scaled_residual_init_shrinks_with_the_untied_stack():
    def write_std(**kw):
        torch.manual_seed(0)
        m = LoopedTransformer(LoopConfig(vocab_size=7, n_classes=6, n_layers=2, d_model=64, n_heads=4, **kw))
        return float(torch.cat([layer.mlp_out.weight.detach().flatten() for layer in m.block]).std())
    block, depth = write_std(n_blocks=8), write_std(n_blocks=8, residual_init="depth")
    assert block == pytest.approx(0.02 / 2, rel=0.05)                   # 0.02 / sqrt(2 x 2 layers)
    assert depth == pytest.approx(0.02 / 32 ** 0.5, rel=0.05)           # 0.02 / sqrt(2 x 16 layers)
    assert write_std() == write_std(residual_init="depth")              # a tied block: the same rule
    with pytest.raises(ValueError, match="residual_init"):
        LoopConfig(vocab_size=5, n_classes=4, residual_init="fan_in")


def test_grid_positions_tie_exactly_the_cells_sudoku_ties():
    from lib.model import GRID_CELLS, grid_address
    from lib.sudoku import BOX, COL, ROW
    f = grid_address()
    assert f.shape == (GRID_CELLS + 1, 28) and torch.equal(f[0], torch.eye(28)[0])   # BOS: its flag alone
    shared = (f[1:] @ f[1:].T) > 0
    for i in range(81):
        assert int(f[1 + i].sum()) == 3                                               # a row, a column, a box
        for j in range(81):
            assert bool(shared[i, j]) == (ROW[i] == ROW[j] or COL[i] == COL[j] or BOX[i] == BOX[j])


def test_grid_positions_refuse_a_longer_sequence_and_a_non_board_task():
    from lib.config import RunConfig
    from lib.model import grid_address
    with pytest.raises(ValueError, match="grid"):
        grid_address(83)
    m = LoopedTransformer(LoopConfig(vocab_size=11, n_classes=10, d_model=16, n_heads=2, pos="grid", causal=False))
    with pytest.raises(ValueError, match="grid"):
        m(torch.zeros(1, 83, dtype=torch.long), T=1)
    with pytest.raises(ValueError, match="pos: 'grid'"):
        RunConfig(task="S4", pos="grid")
