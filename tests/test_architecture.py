"""The architecture-prior controls (Paper A §6.2, App. D) and the operator-wall schedule (§6.3)."""
import math

import numpy as np

import pytest
import torch

from lib import curriculum, tasks
from lib.model import LoopConfig, LoopedTransformer, rotary, scan_address, scan_shift
from lib.profiles import CURRICULA, architecture_prior, matched_untied, operator_wall
from lib.config import RunConfig
from lib.train import RunProgress, plateaued


# --- untied control -------------------------------------------------------------------------------

def test_untied_control_matches_depth_and_parameters_as_the_notebook_claims():
    plan = architecture_prior("quick")
    tied, untied = plan.tied[0], plan.untied[0]
    m_tied = LoopedTransformer(tied.model_config())
    m_untied = LoopedTransformer(untied.model_config())
    # depth: the tied model applies its n_layers layers T_train times; the untied one has that many layers
    assert len(m_tied.block) == tied.n_layers
    assert len(m_untied.block) == tied.n_layers * tied.T_train
    assert not untied.tied and untied.T_train == tied.T_train
    # parameters: within 10 % (matched by width: 04's text states d_model and both counts)
    assert abs(m_untied.n_params() / m_tied.n_params() - 1) < 0.10
    assert untied.d_model < tied.d_model and untied.d_model % untied.n_heads == 0


def test_matched_untied_picks_the_closest_width():
    cfg = RunConfig(n_layers=1, d_model=32, n_heads=2, T_train=4)
    best = matched_untied(cfg)
    target = LoopedTransformer(cfg.model_config()).n_params()
    gap = abs(LoopedTransformer(best.model_config()).n_params() - target)
    for d in range(2, 33, 2):
        other = LoopedTransformer(RunConfig(n_layers=1, d_model=d, n_heads=2, T_train=4, tied=False).model_config())
        assert gap <= abs(other.n_params() - target)


def test_untied_layers_are_each_used_once_in_order():
    torch.manual_seed(0)
    m = LoopedTransformer(LoopConfig(vocab_size=5, n_classes=4, n_layers=1, d_model=8, n_heads=2,
                                     injection="none", n_blocks=3))
    x = torch.randint(0, 5, (2, 6))
    seen = []
    for i, layer in enumerate(m.block):
        layer.register_forward_hook(lambda mod, inp, out, i=i: seen.append(i))
    m(x, 3)
    assert seen == [0, 1, 2]
    with pytest.raises(ValueError, match="T: an untied model has 3 blocks"):
        m(x, 4)
    # a tied model reuses its single block: the same layer runs at every loop
    tied = LoopedTransformer(LoopConfig(vocab_size=5, n_classes=4, n_layers=1, d_model=8, n_heads=2))
    calls = []
    tied.block[0].register_forward_hook(lambda *a: calls.append(1))
    tied(x, 5)
    assert len(calls) == 5


def test_untied_needs_fixed_schedule():
    with pytest.raises(ValueError, match="schedule: the untied control"):
        RunConfig(tied=False, schedule="log")
    with pytest.raises(ValueError, match="tied: must be True or False"):
        RunConfig(tied=1)


# --- positional encodings -------------------------------------------------------------------------

@pytest.mark.parametrize("k", [0, 1, 2, 3, 4])
def test_scan_address_lets_a_hand_set_head_read_position_i_minus_2k(k):
    """Constructed check: query R_k phi(i), keys phi(j), causal softmax at a sharp temperature;
    every position i >= 2^k attends (almost) only to i - 2^k."""
    N = 64
    phi = scan_address(N, max_len=64)
    q = phi @ scan_shift(k, max_len=64).T
    scores = 50.0 * (q @ phi.T)
    scores = scores.masked_fill(torch.ones(N, N).triu(1).bool(), float("-inf"))
    attn = scores.softmax(-1)
    for i in range(2 ** k, N):
        assert attn[i].argmax().item() == i - 2 ** k
        assert attn[i, i - 2 ** k].item() > 0.99


def test_scan_address_read_through_the_models_own_embedding():
    """The encoding as the model adds it: scan_proj hand-set to copy phi into channels 0..2M-1 and the
    token embedding to one-hot channels after them; a hand-set head (q = R_k phi, k = phi, v = token)
    copies to every position i the token at i - 2^k."""
    N, V, k = 40, 4, 2
    M2 = scan_address(1, 64).shape[1]
    d = M2 + V
    m = LoopedTransformer(LoopConfig(vocab_size=V, n_classes=V, n_layers=1, d_model=d, n_heads=1,
                                     pos="scan", max_len=64))
    with torch.no_grad():
        m.scan_proj.weight.zero_()
        m.scan_proj.weight[:M2] = torch.eye(M2)
        m.embed.weight.zero_()
        m.embed.weight[:, M2:] = torch.eye(V)
    tokens = torch.randint(0, V, (3, N), generator=torch.Generator().manual_seed(0))
    e = m.embed_tokens(tokens)
    phi, tok = e[..., :M2], e[..., M2:]
    q = 50.0 * phi @ scan_shift(k, 64).T
    out = torch.nn.functional.scaled_dot_product_attention(q[:, None], phi[:, None], tok[:, None], is_causal=True,
                                                           scale=1.0)[:, 0]
    read = out.argmax(-1)
    assert torch.equal(read[:, 2 ** k:], tokens[:, :N - 2 ** k])


def test_scan_feature_pair_zero_is_the_parity_bit():
    phi = scan_address(16, 16)
    assert torch.allclose(phi[:, 0], torch.tensor([(-1.0) ** i for i in range(16)]), atol=1e-6)


def test_rotary_scores_depend_only_on_offsets():
    torch.manual_seed(0)
    q1, k1 = torch.randn(1, 1, 1, 8), torch.randn(1, 1, 1, 8)
    N = 12
    q = rotary(q1.expand(1, 1, N, 8).contiguous())
    k = rotary(k1.expand(1, 1, N, 8).contiguous())
    s = (q[0, 0] @ k[0, 0].T)
    for off in range(N):
        diag = torch.diagonal(s, -off)
        assert torch.allclose(diag, diag[0].expand_as(diag), atol=1e-4)


@pytest.mark.parametrize("pos", ["learned", "rotary", "scan"])
def test_positional_models_run_and_see_positions(pos):
    """Identical tokens: absolute encodings (learned, scan) tell positions apart; rotary is relative
    and its values are all equal, so, like NoPE, it cannot (the start-token trap of the notes)."""
    torch.manual_seed(0)
    m = LoopedTransformer(LoopConfig(vocab_size=4, n_classes=3, n_layers=1, d_model=16, n_heads=2,
                                     injection="none", pos=pos, max_len=32))
    x = torch.zeros(1, 10, dtype=torch.long)     # identical tokens: only positions tell them apart
    out = m(x, 2)
    assert out.shape == (1, 10, 3)
    assert torch.allclose(out[0, 3], out[0, 4], atol=1e-5) == (pos == "rotary")
    if pos == "rotary":      # with a distinct first token, distance to it is visible to rotary
        x2 = x.clone()
        x2[0, 0] = 1
        o2 = m(x2, 2)
        assert not torch.allclose(o2[0, 3], o2[0, 4], atol=1e-5)
    nope = LoopedTransformer(LoopConfig(vocab_size=4, n_classes=3, n_layers=1, d_model=16, n_heads=2, injection="none"))
    o = nope(x, 2)
    assert torch.allclose(o[0, 3], o[0, 4], atol=1e-5)    # NoPE cannot (the start-token trap)


def test_bad_positional_encoding_is_refused():
    with pytest.raises(ValueError, match="pos: unknown positional encoding 'alibi'"):
        RunConfig(pos="alibi")
    with pytest.raises(ValueError, match="tokens: length 40 exceeds max_len=32"):
        LoopedTransformer(LoopConfig(vocab_size=4, n_classes=3, d_model=8, n_heads=2, pos="scan",
                                     max_len=32))(torch.zeros(1, 40, dtype=torch.long), 1)


# --- operator-first schedule and the deadlock stop ----------------------------------------------------

def test_operator_first_stages_and_promotion():
    plan = operator_wall("quick")
    op = plan.runs[("A5", "operator_first")][0]
    joint = plan.runs[("A5", "joint")][0]
    assert op.curriculum_start == 2 and joint.curriculum_start == joint.n_train
    assert set(CURRICULA) == {"operator_first", "joint"}
    c = curriculum.LengthCurriculum(op.n_train, op.curriculum_start, op.curriculum_step, op.promote_acc, op.first_acc,
                               window=4)
    # stage 1 is the operator (length-2 words: g1 and g1∘g2); it needs first_acc, not promote_acc
    for step in range(1, 9):
        assert not c.update(step, 0.97)          # 0.97 would promote a later stage (promote_acc 0.95)
    assert c.length == 2
    assert not c.update(9, 1.0)                  # window (.97 .97 .97 1): mean .9775 < first_acc
    assert c.update(10, 1.0)                     # window (.97 .97 1 1): mean .985 >= first_acc
    assert c.length == 3 and c.promotions == [10]
    # later stages promote at promote_acc, one length at a time, never past n_train
    for length in range(4, op.n_train + 1):
        for _ in range(4):
            c.update(0, 0.96)
        assert c.length == length
    assert c.done
    for _ in range(8):
        c.update(0, 1.0)
    assert c.length == op.n_train


def test_plateaued_detects_a_flat_loss_and_not_a_falling_one():
    flat = [{"step": s, "loss": 4.0 + 0.001 * (s % 3)} for s in range(50, 2001, 50)]
    falling = [{"step": s, "loss": 4.0 - s / 1000} for s in range(50, 2001, 50)]
    assert plateaued(flat, 500, [])
    assert not plateaued(falling, 500, [])
    assert not plateaued(flat, 500, [1800])          # a promotion inside the window is progress
    assert not plateaued(flat[:15], 500, [])         # too early to tell
    # after a promotion the loss jumps up and falls again: still learning, not a plateau, even though
    # it stays above the best loss of the shorter length before the promotion
    promoted = ([{"step": s, "loss": 0.05} for s in range(50, 3001, 50)]
                + [{"step": s, "loss": 2.0 - 1.4 * (s - 3000) / 2000} for s in range(3050, 5001, 50)])
    assert not plateaued(promoted, 900, [3000])
    assert plateaued(promoted + [{"step": s, "loss": 0.6} for s in range(5050, 7001, 50)], 900, [3000])


def test_plateau_stop_ends_a_run_and_survives_resume():
    cfg = RunConfig(plateau_stop=100, max_steps=10_000)
    run = RunProgress(cfg)
    for _ in range(400):
        run.after_step(3.0, 0.0, cfg.curriculum_start)
        if run.finished:
            break
    assert run.finished and run.plateau_at == run.step and run.step < 10_000
    again = RunProgress(cfg)
    again.load_state_dict(run.state_dict())
    assert again.finished and again.plateau_at == run.plateau_at
    with pytest.raises(ValueError, match="plateau_stop: must be an integer >= 0"):
        RunConfig(plateau_stop=-1)


# --- deadlock reading ---------------------------------------------------------------------------------

def _log(losses, every=50):
    return [{"step": every * (i + 1), "loss": l, "length": 8, "last_acc": 0.0} for i, l in enumerate(losses)]


def test_deadlock_reading_on_constructed_runs():
    from lib.instruments.deadlock import deadlock, operator_entropy_level
    level = operator_entropy_level(120, 8)
    assert level == pytest.approx(7 / 8 * math.log(120))
    stuck = {"log": _log([level * 1.01] * 100), "promotions": [], "reached_length": 8, "steps": 5000,
             "plateau_at": 5000}
    r = deadlock(stuck, 120, [1.0] + [1 / 120] * 7)
    assert r.deadlocked and r.plateau and r.later_position_acc == pytest.approx(1 / 120)
    # the same flat loss but later positions learned: not a deadlock (a plateau near success)
    assert not deadlock(stuck, 120, [1.0] * 8).deadlocked
    # loss falling to near zero: no plateau, no deadlock
    learning = {"log": _log(list(np.linspace(5, 0.01, 100))), "promotions": [100, 900], "reached_length": 8,
                "steps": 5000}
    assert not deadlock(learning, 120, [1.0] * 8).plateau
    # flat but far below the entropy level (e.g. stuck at 6 of 8 positions): not the operator wall
    low = {"log": _log([0.3] * 100), "promotions": [], "reached_length": 8, "steps": 5000}
    assert not deadlock(low, 120, [1.0] * 6 + [0.0] * 2).deadlocked
