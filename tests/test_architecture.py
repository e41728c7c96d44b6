"""The architecture-prior controls (Paper A §6.2, App. D) and the operator-wall schedule (§6.3)."""
import json
import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from lib import claims, curriculum, plots, rules, tasks
from lib.config import RunConfig
from lib.instruments import contract, head
from lib.sections.s04_architecture_prior import figures as figures04, read as architecture
from lib.sections.s05_operator_wall import claims as claims05, figures as figures05, read as wall_reader
from lib.layers import rotary
from lib.model import LoopConfig, LoopedTransformer, scan_address, scan_shift
from lib.profiles import CURRICULA, architecture_prior, matched_untied, operator_wall
from lib.train import RunProgress, plateaued
from tests.constructed import SerialPropagator


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
    return [{"step": every * (i + 1), "loss": loss, "length": 8, "last_acc": 0.0} for i, loss in enumerate(losses)]


def test_deadlock_reading_on_constructed_runs():
    from lib.sections.s05_operator_wall.read import deadlock, operator_entropy_level
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


# --- the readers behind notebooks 04 and 05, on constructed runs ----------------------------------------



class ScanPropagator(LoopedTransformer):
    """Hillis-Steele prefix sums in Z_m: at loop t (1-based) every position i >= 2^(t-1) adds the partial
    sum held at i - 2^(t-1). Position i's window reaches BOS after floor(log2 i) + 1 loops; from then
    on it decodes its prefix sum (before: 'empty', class m), so tau(n, n) = floor(log2 n) + 1."""

    def __init__(self, m: int = 5):
        super().__init__(LoopConfig(vocab_size=m + 1, n_classes=m + 1, n_layers=1, d_model=m + 1, n_heads=1,
                                    injection="none"))
        self.m = m

    def embed(self, tokens):                  # [value one-hot (BOS: 0), flag: the window reaches BOS]
        value = F.one_hot(torch.where(tokens == self.m, 0, tokens), self.m).float()
        flag = (torch.arange(tokens.shape[1]) == 0).float().expand(tokens.shape)[..., None]
        return torch.cat([value, flag], -1)

    def step(self, h, e, loop=0):
        s = 2 ** loop
        if s >= h.shape[1]:
            return h
        v, flag = h[..., :self.m].argmax(-1), h[..., self.m:]
        new_v, new_flag = v.clone(), flag.clone()
        new_v[:, s:] = (v[:, s:] + v[:, :-s]) % self.m
        new_flag[:, s:] = torch.maximum(flag[:, s:], flag[:, :-s])
        return torch.cat([F.one_hot(new_v, self.m).float(), new_flag], -1)

    def decode(self, h):
        flag = h[..., self.m:]
        return torch.cat([h[..., :self.m] * flag, 1 - flag], -1) * 10.0


def fake_run(model, **cfg):
    """A stored run's three parts, built by hand: a Z5 config (prefix sums mod 5), a model, metrics."""
    return SimpleNamespace(config=RunConfig(task="Z5", **cfg), model=model, metrics={"n_params": 100})


def test_scan_propagator_settles_in_log_n_loops():
    tokens, labels = tasks.test_set(tasks.make_task("Z5"), 16, 16, 0)
    r = head.measure(head.loop_predictions(ScanPropagator(), tokens, 6).numpy(), labels[:, 1:].numpy())
    assert r.solved_fraction == 1.0
    assert r.tau_curve.tolist() == [math.floor(math.log2(i)) + 1 for i in range(1, 17)]


def test_families_name_each_encoding_and_tying():
    tied, untied = RunConfig(), RunConfig(tied=False)
    extra = (RunConfig(pos="learned"), RunConfig(pos="rotary"), RunConfig(tied=False, pos="learned"),
             RunConfig(pos="learned", seed=1))
    plan = SimpleNamespace(tied=(tied,), untied=(untied,), tied_scan=(), untied_scan=(), extra=extra)
    fam = architecture.families(plan)
    assert list(fam) == ["tied", "untied", "tied + scan", "untied + scan", "tied + learned", "tied + rotary",
                         "untied + learned"]
    assert fam["tied + learned"] == (extra[0], extra[3]) and fam["tied + scan"] == ()


def test_accuracy_by_length_gives_each_length_the_runs_loops_on_its_probe_set(monkeypatch):
    serial = SerialPropagator(5, period=1)
    tied = fake_run(serial, n_train=4, T_train=4)
    untied = fake_run(serial, n_train=4, T_train=4, tied=False)
    # a tied run keeps T_train below its training length and loops in proportion beyond it; an untied
    # run has only its depth: the one-position-per-loop propagator fails past n = 4 with 4 loops
    assert contract.final_accuracy_by_length(tied, (2, 4, 6, 8), 16) == {2: 1.0, 4: 1.0, 6: 1.0, 8: 1.0}
    assert contract.final_accuracy_by_length(untied, (2, 4, 6, 8), 16) == {2: 1.0, 4: 1.0, 6: 0.0, 8: 0.0}
    slow = fake_run(SerialPropagator(5, period=2), n_train=4, T_train=4)      # needs 2n loops, gets max(4, n)
    assert contract.final_accuracy_by_length(slow, (2, 3, 8), 16) == {2: 1.0, 3: 0.0, 8: 0.0}
    calls = []
    real = head.accuracy_by_loops
    monkeypatch.setattr(head, "accuracy_by_loops",
                        lambda *a, **k: calls.append((a[2], a[3], k["seed"])) or real(*a, **k))
    contract.final_accuracy_by_length(tied, (2, 12), 16)
    contract.at_contract(fake_run(serial, n_train=4, T_train=4, seed=3), 16)
    assert calls == [(2, 4, 4002), (12, 12, 4012), (4, 4, 1003)]     # probe sets: extrapolation, in_distribution


def test_at_contract_reads_the_last_of_T_train_loops():
    acc = contract.at_contract(fake_run(SerialPropagator(5, period=2), n_train=4, T_train=6), 16)
    assert acc.seq_acc.tolist() == [0.0] * 6                     # position 4 needs 8 loops
    assert acc.position_acc[-1].tolist() == [1.0, 1.0, 1.0, 0.0]
    assert contract.at_contract(fake_run(SerialPropagator(5, period=2), n_train=4, T_train=8), 16).at(8) == 1.0


def test_prior_rows_read_serial_as_linear_and_a_scan_as_log():
    runs = [("tied", fake_run(SerialPropagator(5, 1), n_train=8, T_train=8)),
            ("untied", fake_run(ScanPropagator(), n_train=8, T_train=4, tied=False)),       # 4 blocks: n <= 15
            ("untied + scan", fake_run(SerialPropagator(5, 2), n_train=8, T_train=4, tied=False))]  # never learns
    rows = architecture.prior_rows(runs, (2, 4, 8), (16,), count=16)
    tied, untied, unlearned = rows
    assert tied["learned"] and tied["last"] == [2.0, 4.0, 8.0] and tied["fit"].cls == "linear"
    assert untied["learned"] and untied["last"] == [2.0, 3.0, 4.0] and untied["fit"].cls == "log"
    assert not unlearned["learned"] and unlearned["ns"] == [2] and unlearned["fit"] is None
    assert tied["extrapolation"] == {2: 1.0, 4: 1.0, 8: 1.0, 16: 1.0}
    assert untied["extrapolation"] == {2: 1.0, 4: 1.0, 8: 1.0, 16: 0.0}   # n = 16 needs a fifth block
    a5 = [contract.at_contract(fake_run(SerialPropagator(5, 2), n_train=8, T_train=8, tied=False), 16)]
    results = architecture.prior_results(rows, a5, 16)
    assert results["untied_log_fraction"] == 1.0            # the unlearned untied run is not counted
    assert results["tied_linear_fraction"] == 1.0
    assert results["tied_scan_linear_fraction"] is None     # no tied scan-address run
    assert results["scaling_classes"] == {"tied seed 0": "linear", "untied seed 0": "log", "untied + scan seed 0": None}
    assert results["r2_log_linear"]["tied seed 0"][1] == 1.0 and results["r2_log_linear"]["untied seed 0"][0] == 1.0
    assert results["ood_seq_acc"] == {"tied": 1.0, "untied": 0.0, "untied + scan": 0.0}
    assert results["untied_minus_tied_ood"] == -1.0         # one matched pair (NoPE); 'untied + scan' has none
    assert results["untied_a5_seq_acc"] == 0.0 and results["untied_s4_learned_fraction"] == 1.0
    assert rules.verdict(claims.claim("untied_a5_seq_acc"), 0.0, True, results) == "reproduced"


def _row(name, learned, cls, ood, seed=0, position1=1.0):
    fit = None if cls is None else SimpleNamespace(cls=cls, r2={"log": 0.5, "linear": 0.25})
    return dict(name=name, seed=seed, learned=learned, fit=fit, extrapolation={16: ood}, n_params=1,
                tau=SimpleNamespace(position1_first_loop=position1))


def test_prior_results_on_hand_built_rows():
    rows = [_row("tied", True, "linear", 0.4), _row("tied", True, "log", 0.2, seed=1),
            _row("tied", False, "flat", 0.0, seed=2),
            _row("untied", False, "log", 0.1), _row("tied + scan", True, "linear", 0.9),
            _row("untied + scan", True, "flat", 0.3), _row("untied + scan", True, None, 0.5, seed=1)]
    a5 = [SimpleNamespace(seq_acc=np.array([0.0, 0.3])), SimpleNamespace(seq_acc=np.array([0.9, 0.05]))]
    rows[3]["tau"].position1_first_loop = 0.04                 # the readout cannot see this untied model's block 1
    r = architecture.prior_results(rows, a5, 16)
    assert r["decoder_position1"]["untied"] == 0.04 and r["decoder_position1"]["tied"] == 1.0
    assert r["tied_linear_fraction"] == 0.667                # 2 of 3 learned tied runs (the unlearned one not counted)
    assert r["tied_scan_linear_fraction"] == 1.0
    assert r["untied_log_fraction"] == 0.0                   # learned untied runs: a flat one and one without a class
    assert r["ood_seq_acc"] == {"tied": 0.2, "untied": 0.1, "tied + scan": 0.9, "untied + scan": 0.4}
    assert r["untied_minus_tied_ood"] == -0.5                # only the scan pair: its tied family reaches 0.5
    assert r["r2_log_linear"]["tied seed 2"] is None and r["r2_log_linear"]["tied seed 0"] == [0.5, 0.25]
    assert r["untied_a5_seq_acc"] == 0.3                     # the best seed after its last loop
    assert r["untied_s4_learned_fraction"] == 0.0
    assert rules.verdict(claims.claim("untied_a5_seq_acc"), 0.0, True, r) == "not measured"
    rows[4]["extrapolation"][16] = 0.49                      # no tied family reaches 0.5: not measured
    assert architecture.prior_results(rows, a5, 16)["untied_minus_tied_ood"] is None
    assert architecture.prior_results(rows[:3], a5, 16)["untied_s4_learned_fraction"] is None


def _wall_run(period, T_train, seed, log, plateau_at=None):
    run = fake_run(SerialPropagator(5, period), n_train=4, T_train=T_train, seed=seed)
    run.metrics = {"log": log, "promotions": [], "reached_length": 4, "steps": 50 * len(log), "plateau_at": plateau_at}
    return run


def test_wall_rows_on_constructed_runs():
    level = wall_reader.operator_entropy_level(5, 4)
    flat, falling = _log([level] * 60), _log(list(np.linspace(3, 0.01, 60)))
    learns, misses = (lambda s: _wall_run(1, 4, s, falling)), (lambda s: _wall_run(2, 4, s, falling))
    copies_g1 = lambda s, log: _wall_run(2, 2, s, log, 3000 if log is flat else None)   # only position 1 in 2 loops
    wall = {("A", "operator_first"): [learns(0), misses(1)], ("A", "joint"): [learns(0)],
            ("B", "operator_first"): [learns(0)], ("B", "joint"): [copies_g1(0, flat), copies_g1(1, falling)]}
    rows = wall_reader.wall_rows(wall, (8,), count=16)
    assert list(rows) == [("A", "operator_first", 0), ("A", "operator_first", 1), ("A", "joint", 0),
                          ("B", "operator_first", 0), ("B", "joint", 0), ("B", "joint", 1)]
    first = rows[("A", "operator_first", 0)]
    assert first["seq_acc"] == 1.0 and first["ood"] == {8: 1.0} and not first["reading"].deadlocked
    assert rows[("A", "operator_first", 1)]["pos_acc"].tolist() == [1.0, 1.0, 0.0, 0.0]
    stuck = rows[("B", "joint", 0)]
    assert stuck["pos_acc"].tolist() == [1.0, 0.0, 0.0, 0.0] and stuck["reading"].deadlocked
    assert stuck["entropy_at_n_train"] == pytest.approx(level) and stuck["log"] is flat
    assert not rows[("B", "joint", 1)]["reading"].deadlocked           # stuck accuracy, but the loss still falls


def test_streaming_pairs_give_each_schedule_its_own_loops():
    free = fake_run(SerialPropagator(5, 1), n_train=4, T_train=4)
    slow_stream = fake_run(SerialPropagator(5, 2), n_train=4, T_train=6, schedule="streaming")   # T = n + 2 < 2n
    fast_stream = fake_run(SerialPropagator(5, 1), n_train=4, T_train=6, schedule="streaming")
    pairs = wall_reader.streaming_pairs([free], [slow_stream], (8,), count=16)
    assert pairs == {"Z5": {"free": {4: 1.0, 8: 1.0}, "streaming": {4: 0.0, 8: 0.0}}}
    assert wall_reader.streaming_pairs([free], [fast_stream], (8,), 16)["Z5"]["streaming"] == {4: 1.0, 8: 1.0}
    with pytest.raises(ValueError):                                     # unpaired lists
        wall_reader.streaming_pairs([free, free], [fast_stream], (8,), 16)
    other = fake_run(SerialPropagator(5, 1), n_train=6, T_train=8, schedule="streaming")
    with pytest.raises(ValueError, match="a pair is one task at one training length"):
        wall_reader.streaming_pairs([free], [other], (8,), 16)


def test_a_flat_tau_reads_flat_not_as_a_huge_speed():
    from lib.instruments.head import SpeedFit
    assert plots.speed_text(SpeedFit(29013.33, 3.4e-5, 1.0, 0.1)) == "flat"       # the shortcut control
    assert plots.speed_text(SpeedFit(float("inf"), 0.0, 1.0, float("nan"))) == "flat"
    assert plots.speed_text(SpeedFit(1.05, 0.95, 0.0, 1.0)) == "v = 1.05"


def test_figures_draw_from_the_readers_rows():
    import matplotlib
    matplotlib.use("Agg")
    runs = [("tied", fake_run(SerialPropagator(5, 1), n_train=4, T_train=4)),
            ("untied", fake_run(ScanPropagator(), n_train=4, T_train=4, tied=False))]
    rows = architecture.prior_rows(runs, (2, 3, 4), (8,), count=16)
    assert len(figures04.tau_against_n(rows).axes) == 2
    assert len(figures04.frontier_maps(rows).axes) == 3                    # two maps and one shared colour bar
    assert len(figures04.length_extrapolation(rows).axes[0].lines) == 3    # two runs and the training length
    wall = wall_reader.wall_rows({("A", "joint"): [_wall_run(1, 4, 0, _log([1.0] * 3))]}, (8,), 16)
    assert len(figures05.wall_loss(wall).axes) == 1 and len(figures05.wall_accuracy(wall, (8,)).axes) == 2
    # eighteen runs outgrow the colour cycle: colour names the group, the line the curriculum, the marker the seed
    many = wall_reader.wall_rows({(g, c): [_wall_run(1, 4, s, _log([1.0] * 3)) for s in (0, 1, 2)]
                                  for g in ("A", "B", "C") for c in ("joint", "operator_first")}, (8,), 16)
    lines = {ln.get_label(): ln for ln in figures05.wall_accuracy(many, (8,)).axes[1].lines}
    assert len(lines) == 18
    assert lines["A joint s0"].get_color() == lines["A operator_first s2"].get_color() != lines["B joint s0"].get_color()
    assert lines["A joint s0"].get_linestyle() != lines["A operator_first s0"].get_linestyle()
    assert lines["A joint s0"].get_marker() != lines["A joint s1"].get_marker() == lines["C joint s1"].get_marker()
    assert len(figures05.streaming_pairs({"Z5": {"free": {4: 1.0}, "streaming": {4: 0.0}}}).axes[0].lines) == 2
    per_seed = figures05.streaming_pairs({("Z5", "joint", s): {"free": {4: 1.0}, "streaming": {4: 0.0}} for s in (0, 1)})
    assert [ln.get_label() for ln in per_seed.axes[0].lines] == ["Z5 joint 0 free", "Z5 joint 0 streaming",
                                                               "Z5 joint 1 free", "Z5 joint 1 streaming"]
    lines = per_seed.axes[0].lines
    # one colour a task and curriculum, one line style a schedule, one marker a seed
    assert len({ln.get_color() for ln in lines}) == 1
    assert lines[0].get_linestyle() == lines[2].get_linestyle() != lines[1].get_linestyle() == lines[3].get_linestyle()
    assert lines[0].get_marker() == lines[1].get_marker() != lines[2].get_marker() == lines[3].get_marker()
    two_tasks = figures05.streaming_pairs({(t, "joint", 0): {"free": {4: 1.0}, "streaming": {4: 0.0}} for t in ("Z5", "S4")})
    assert two_tasks.axes[0].lines[0].get_color() != two_tasks.axes[0].lines[2].get_color()
    # a run at 0 at every length hides on the axis: the legend names it
    assert any("(streaming): all 2 runs" in t.get_text() for t in per_seed.axes[0].get_legend().get_texts())


@pytest.mark.parametrize("profile", ["smoke", "quick"])
def test_the_fair_wall_offers_every_curriculum_the_same_steps_and_reuses_the_walls_runs(profile):
    from dataclasses import replace
    from lib import profiles
    plan = profiles.fair_wall(profile)
    wall, nc1, solvable = profiles.FAIR_GROUPS[profile]
    assert {g for g, _ in plan.runs} == {wall, nc1, solvable} and {name for _, name in plan.runs} == set(CURRICULA)
    cfgs = [c for cs in plan.runs.values() for c in cs]
    assert {c.max_steps for c in cfgs} == {profiles.operator_wall(profile, (0,)).runs[(wall, "operator_first")][0].max_steps}
    assert all(c.plateau_stop == 0 for c in cfgs)           # equal budgets: the wall's operator-first budget for all
    assert all([c.seed for c in cs] == [0, 1, 2] for cs in plan.runs.values())               # >= 3 seeds each
    for (g, name), cs in plan.runs.items():         # the curricula differ in where they start, nothing else
        other = plan.runs[(g, "joint" if name == "operator_first" else "operator_first")]
        assert [replace(c, curriculum_start=1) for c in cs] == [replace(c, curriculum_start=1) for c in other]
        assert all(c.curriculum_start == (2 if name == "operator_first" else c.n_train) for c in cs)
    # forced seriality on the wall with its help and on the solvable group trained jointly, each streaming
    # run paired with the free run of its task, seed and curriculum, T = n + 2
    assert plan.free == plan.runs[(wall, "operator_first")] + plan.runs[(solvable, "joint")]
    for st, fr in zip(plan.streaming, plan.free, strict=True):
        assert st.schedule == "streaming" and st.T_train == fr.n_train + 2
        assert replace(st, schedule=fr.schedule, T_train=fr.T_train) == fr
    old = profiles.operator_wall(profile, (0, 1))                # the wall's operator-first runs, not trained twice
    for g in (wall, nc1):
        assert set(old.runs[(g, "operator_first")]) <= set(plan.runs[(g, "operator_first")])
    assert profiles.fair_wall_groups(profile) == {"wall": wall, "nc1": nc1, "solvable": solvable}
    assert profiles.SECTIONS["operator_wall"] is profiles.fair_wall          # what 05 reads is what the CLI trains


def test_the_paper_profiles_fair_wall_holds_its_stated_budget_for_every_run():
    from lib import profiles
    plan = profiles.fair_wall("paper")
    cfgs = [c for cs in plan.runs.values() for c in cs] + list(plan.streaming)
    assert {c.max_steps for c in cfgs} == {profiles.FAIR_STEPS["paper"]} and all(c.plateau_stop == 0 for c in cfgs)
    assert {g for g, _ in plan.runs} == {"S5", "A5", "S4"} and len(cfgs) == 3 * 2 * 3 + 6
    assert profiles.fair_wall_groups("paper") == {"wall": "S5", "nc1": "A5", "solvable": "S4"}
    with pytest.raises(ValueError, match="profile"):
        profiles.fair_wall_groups("huge")


def test_fair_wall_results_judge_nc1_against_the_solvable_group_and_streaming_per_seed():
    from types import SimpleNamespace as NS
    def row(seq, ood, dead=False, steps=20000):
        return dict(seq_acc=seq, ood={12: ood[0], 16: ood[1]}, reading=NS(deadlocked=dead),
                    config=NS(max_steps=steps))
    rows = {("S5", "operator_first", 0): row(1.0, (0.5, 0.1)), ("S5", "operator_first", 1): row(0.1, (0, 0)),
            ("S5", "joint", 0): row(0.0, (0, 0), True), ("S5", "joint", 1): row(0.0, (0, 0), False),
            ("A5", "operator_first", 0): row(1.0, (0.6, 0.02)), ("A5", "operator_first", 1): row(1.0, (0.4, 0.0)),
            ("A5", "joint", 0): row(0.2, (0, 0)), ("A5", "joint", 1): row(0.95, (0, 0)),
            ("S4", "operator_first", 0): row(1.0, (0.9, 0.3)), ("S4", "operator_first", 1): row(1.0, (0.7, 0.3)),
            ("S4", "joint", 0): row(1.0, (0.3, 0.0)), ("S4", "joint", 1): row(0.5, (0.0, 0.0))}
    pairs = {("S4", "joint", 0): {"free": {8: 1.0, 12: 0.3}, "streaming": {8: 0.2, 12: 0.1}},
             ("S4", "joint", 1): {"free": {8: 0.95, 12: 0.2}, "streaming": {8: 0.55, 12: 0.2}},
             ("S5", "operator_first", 0): {"free": {8: 0.5, 12: 0.1}, "streaming": {8: 0.0, 12: 0.0}}}
    fair = wall_reader.fair_wall_results
    r = fair(rows, pairs, (12, 16), 0.9, wall="S5", nc1="A5", solvable="S4")
    # S4 carries (mean >= 0.5) at 12 (0.8), not at 16 (0.3): compared at 12, A5's 0.5 against S4's 0.8
    assert r["nc1_compared_at_n"] == 12 and r["nc1_minus_solvable_ood"] == pytest.approx(-0.3)
    assert r["ood_by_group"]["S4"] == {"12": 0.8, "16": 0.3}
    assert r["wall_joint_deadlock_fraction"] == 0.5
    assert r["wall_learned_fraction"] == {"operator_first": 0.5, "joint": 0.0} and r["budgets"] == [20000]
    assert r["nc1_learned_fraction"] == {"operator_first": 1.0, "joint": 0.5}
    # the old absolute row beside it: the worst operator-first A5 seed in distribution or at n = 16
    assert r["a5_ood_acc"] == 0.0 and r["a5_learned_fraction"] == r["nc1_learned_fraction"]
    # S4 joint at n = 8: both free runs learned, gaps 0.8 and 0.4; at 12 free learned nowhere; S5's free
    # run never learned: no gap there
    assert r["streaming_gaps"] == {"S4 joint n=8": pytest.approx(0.6)} and r["streaming_gap"] == pytest.approx(0.6)
    assert fair(rows, {}, (12, 16), 0.9, "S5", "A5", "S4")["streaming_gap"] is None
    # where S4 scores but does not carry, A5 has nothing to be compared with: None, not a pass
    weak = {k: ({**v, "ood": {12: 0.3, 16: 0.06}} if k[0] == "S4" else v) for k, v in rows.items()}
    assert fair(weak, pairs, (12, 16), 0.9, "S5", "A5", "S4")["nc1_minus_solvable_ood"] is None
    with pytest.raises(ValueError, match="group 'S4' needs operator-first and joint runs"):
        fair({k: v for k, v in rows.items() if k[0] != "S4"}, pairs, (12, 16), 0.9, "S5", "A5", "S4")
    with pytest.raises(ValueError, match="the same seeds"):
        fair({k: v for k, v in rows.items() if k != ("A5", "joint", 1)}, pairs, (12, 16), 0.9, "S5", "A5", "S4")
    with pytest.raises(ValueError, match="step budgets"):
        fair({**rows, ("S5", "joint", 1): row(0.0, (0, 0), steps=8000)}, pairs, (12, 16), 0.9, "S5", "A5", "S4")
    for c in claims05.FAIR_WALL_CLAIMS:                            # the pre-registered bars read these numbers
        assert c.key in r and c.notebook == "05_operator_wall"
    assert claims05.FAIR_WALL_CLAIMS[0].holds(-0.05) and not claims05.FAIR_WALL_CLAIMS[0].holds(r["nc1_minus_solvable_ood"])


# --- C04-architecture's reader (paper/PREREGISTRATION.md; lib/sections/s04_architecture_prior/confirm.py) ---

from lib.sections.s04_architecture_prior import plan as c04_plan       # noqa: E402
from lib.sections.s04_architecture_prior import confirm as c04             # noqa: E402

C04_KEYS = [k for k, t in claims.CONFIRMATORY.items() if t.entry == "C04-architecture"]


class _Reads(dict):
    """A readings dict that records the keys a rule reads."""
    def __init__(self, *a):
        super().__init__(*a)
        self.read = set()

    def __getitem__(self, k):
        self.read.add(k)
        return super().__getitem__(k)


def _scaling(cls, validity=1.0):
    return {"class": cls, "validity": validity, "ns": list(range(2, 17)), "tau_last": [1.0] * 15, "r2_log_linear": None}


def _c04_row(family, seed, learned=True, cls="linear", validity=1.0, ext12=0.5, mlp="same", acc=None):
    """A run's row by hand: probed families get three decoders (the readout cannot see untied models)."""
    dec = {} if family not in c04.PROBED else {
        "linear": _scaling(cls, validity), "mlp": _scaling(cls if mlp == "same" else mlp, validity),
        "readout": _scaling("flat", 0.04)}
    return dict(family=family, seed=seed, steps=100, extrapolation={"12": ext12, "16": 0.0}, decoders=dec,
                learned_acc=(1.0 if learned else 0.2) if acc is None else acc, learned=learned)


def _c04_rows(untied=("log",) * 3, tied=("linear",) * 3, ext=None, a5=(0.0, 0.0, 0.0), untied_learned=(True,) * 3,
              validity=(1.0,) * 3, untied_mlp=("same",) * 3):
    ext = ext or {"untied": (0.1, 0.2, 0.1), "tied, untied recipe": (0.5, 0.6, 0.7), "tied, settled T = n": (0.8, 0.9, 0.8)}
    seeds = c04_plan.STUDY_SEEDS
    rows = [_c04_row("untied", s, lr, c, v, e, m) for s, c, lr, v, e, m in
            zip(seeds, untied, untied_learned, validity, ext["untied"], untied_mlp)]
    rows += [_c04_row("tied", s, cls=c) for s, c in zip(seeds, tied)]
    rows += [_c04_row("tied + scan", s, cls="linear") for s in seeds]
    rows += [_c04_row("untied A5", s, learned=a >= 0.9, acc=a) for s, a in zip(seeds, a5)]
    rows += [_c04_row(f, s, ext12=e) for f in c04.COMPARATORS for s, e in zip(seeds, ext[f])]
    return rows


def test_c04_readings_hold_every_key_the_confirmatory_rules_read():
    r = c04.study_readings(_c04_rows())
    assert len(C04_KEYS) == 4 and set(C04_KEYS) == set(c04.RULES)
    for key in C04_KEYS:
        test = claims.CONFIRMATORY[key]
        reads = _Reads(r)
        assert test.requires(reads) is True                        # raises KeyError on a missing key
        assert test.key in r and reads.read <= set(r)
    needed = {"untied_log_fraction", "tied_linear_fraction", "untied_worst_at_12", "untied_a5_seq_acc",
              "untied_valid_learned", "tied_valid_learned", "extrapolation_comparable", "untied_s4_learned"}
    assert needed <= set(r)
    assert json.loads(json.dumps(r)) == json.loads(json.dumps(r, sort_keys=True))    # plain JSON, as recorded
    fam = r["families"]["untied"]
    assert fam["learned"] == [3, 3, 0.439, 1.0] and fam["class_shares"]["linear"]["log"] == [3, 3, 0.439, 1.0]
    assert r["seeds"]["untied seed 110"]["decoders"]["readout"]["validity"] == 0.04


@pytest.mark.parametrize("rows, key, verdict", [
    (dict(), "untied_log_fraction", "reproduced"),
    (dict(untied=("log", "log", "linear")), "untied_log_fraction", "partly"),
    (dict(untied=("linear", "flat", None)), "untied_log_fraction", "not reproduced"),
    # two seeds whose linear probe fails validity: one valid learned seed, not measured (decoder invalid)
    (dict(validity=(1.0, 0.5, 0.89)), "untied_log_fraction", "not measured"),
    (dict(untied_learned=(True, True, False), untied=("log", "log", "linear")), "untied_log_fraction", "reproduced"),
    (dict(), "tied_linear_fraction", "reproduced"),
    (dict(tied=("linear", "log", "log")), "tied_linear_fraction", "partly"),
    (dict(tied=("log", "log", "flat")), "tied_linear_fraction", "not reproduced"),
    (dict(), "untied_minus_tied_ood", "reproduced"),                # complete separation at n = 12
    (dict(ext={"untied": (0.1, 0.6, 0.1), "tied, untied recipe": (0.5, 0.6, 0.7),
               "tied, settled T = n": (0.8, 0.9, 0.8)}), "untied_minus_tied_ood", "partly"),   # means only
    (dict(ext={"untied": (0.9, 0.9, 0.9), "tied, untied recipe": (0.5, 0.6, 0.7),
               "tied, settled T = n": (0.8, 0.9, 0.8)}), "untied_minus_tied_ood", "not reproduced"),
    (dict(ext={"untied": (0.01, 0.02, 0.0), "tied, untied recipe": (0.5, 0.6, 0.7),
               "tied, settled T = n": (0.8, 0.9, 0.8)}), "untied_minus_tied_ood", "not measured"),   # untied does not score
    (dict(untied_learned=(True, False, False)), "untied_minus_tied_ood", "not measured"),      # 1 learned untied seed
    (dict(a5=(0.0, 0.1, 0.05)), "untied_a5_seq_acc", "reproduced"),
    (dict(a5=(0.0, 0.4, 0.05)), "untied_a5_seq_acc", "partly"),
    (dict(a5=(0.0, 0.95, 0.05)), "untied_a5_seq_acc", "not reproduced"),
    (dict(a5=(0.0, 0.0, 0.0), untied_learned=(True, False, False)), "untied_a5_seq_acc", "not measured"),
])
def test_c04_decision_rules_on_constructed_readings(rows, key, verdict, store_root):
    r = c04.study_readings(_c04_rows(**rows))
    assert c04.rule_verdict(key, r) == verdict
    rules.record_confirmatory("C04-architecture", r)                  # the ledger's path gives the same verdict
    assert claims.confirmatory_verdict(claims.claim(key))[0] == verdict


def test_c04_rule_values_and_the_mlp_flag():
    r = c04.study_readings(_c04_rows(untied=("log", "log", "linear"), untied_mlp=("same", "same", "log")))
    assert r["untied_log_fraction"] == 0.667 and r["untied_log_fraction_mlp"] == 1.0 and r["untied_mlp_flag"]
    assert r["untied_log_fraction_readout"] == 0.0 and not r["tied_mlp_flag"]
    assert r["tied_scan_linear_fraction"] == 1.0 and r["tied_scan_valid_learned"] == 3
    assert r["untied_worst_at_12"] == 1.0 and r["extrapolation_comparable"]
    assert r["extrapolation_means_at_12"]["tied, untied recipe"] == 0.6
    assert r["extrapolation_means_at_16"] == {"untied": 0.0, "tied, untied recipe": 0.0, "tied, settled T = n": 0.0}
    # ties are not "below": an untied seed equal to a comparator's worst seed breaks complete separation
    tie = c04.study_readings(_c04_rows(ext={"untied": (0.5, 0.1, 0.1), "tied, untied recipe": (0.5, 0.6, 0.7),
                                             "tied, settled T = n": (0.8, 0.9, 0.8)}))
    assert tie["untied_worst_at_12"] == 0.5
    # a missing family reads None, never a pass
    partial = c04.study_readings([r_ for r_ in _c04_rows() if r_["family"] != "tied, settled T = n"])
    assert partial["untied_worst_at_12"] is None and not partial["extrapolation_comparable"]
    assert c04.study_readings([])["untied_a5_seq_acc"] is None
    linear_only = _c04_rows()                                 # a reading without the MLP probe (kinds=("linear",))
    for r_ in linear_only:
        r_["decoders"].pop("mlp", None)
    r = c04.study_readings(linear_only)
    assert r["untied_log_fraction_mlp"] is None and set(r["families"]["untied"]["class_shares"]) == {"linear", "readout"}


def test_the_c04_reader_reads_a_serial_stack_linear_and_a_hillis_steele_scan_log():
    """Through the reader's own path (probes fit on the run's probe-fit words, read on its tau_vs_n sets)."""
    serial_run = fake_run(SerialPropagator(5, 1), n_train=8, T_train=8)
    serial = c04.read_seed("tied", serial_run, ns=range(2, 11), kinds=("linear",), count=48, fit_count=32,
                           extrapolation_ns=(12,))
    lin, readout = serial["decoders"]["linear"], serial["decoders"]["readout"]
    assert serial["learned"] and lin["ns"] == list(range(2, 11)) and head.decoder_valid(lin["validity"])
    assert lin["class"] == "linear" and readout["class"] == "linear" and readout["tau_last"] == list(range(2, 11))
    scan_run = fake_run(ScanPropagator(), n_train=8, T_train=5, tied=False)
    scan = c04.read_seed("untied", scan_run, ns=range(2, 17), kinds=("linear",), count=48, fit_count=32)
    assert json.loads(json.dumps(scan)) == scan                           # plain JSON: kept beside the run as is
    lin, readout = scan["decoders"]["linear"], scan["decoders"]["readout"]
    assert scan["learned"] and head.decoder_valid(lin["validity"]) and lin["class"] == "log" and readout["class"] == "log"
    # the probe sees the answer once position i's window covers 1..i (BOS adds 0): ceil(log2 n), a block
    # before the readout, whose decoder waits for the window's BOS flag (floor(log2 n) + 1)
    assert np.allclose(lin["tau_last"], [math.ceil(math.log2(n)) for n in range(2, 17)], atol=0.4)
    assert readout["tau_last"] == [math.floor(math.log2(n)) + 1 for n in range(2, 17)]
    assert scan["extrapolation"] == {"12": 1.0, "16": 1.0}
    assert c04.blocks_read(scan_run.config, 16) == 5 and c04.blocks_read(serial_run.config, 12) == 24


def test_an_incomplete_c04_study_records_nothing(store_root, monkeypatch, tmp_path):
    empty = c04.read_study()
    assert empty.total == len(c04_plan.study()) == 18 and len(empty.missing) == 18
    assert empty.readings is None and empty.recorded is None and not rules.confirm_path("C04-architecture").exists()
    assert "not yet trained: 18 of 18 runs" in c04.describe(empty)
    # two of three runs stored: read, printed, not recorded
    cfgs = {"untied A5": tuple(RunConfig(task="Z5", n_train=4, T_train=4, seed=s, mode=c04_plan.STUDY_MODE)
                                 for s in c04_plan.STUDY_SEEDS)}
    stored = set(cfgs["untied A5"][:2])
    monkeypatch.setattr(c04.store, "is_done", lambda c: c in stored)
    def load(c):                                   # a stored run: its folder holds DONE (the weights' sha256)
        run = fake_run(SerialPropagator(5, 1), n_train=4, T_train=4, seed=c.seed, mode=c.mode)
        run.path = tmp_path / str(c.seed)
        run.path.mkdir(exist_ok=True)
        (run.path / "DONE").write_text(json.dumps({"model_sha256": "abc"}))
        return run
    monkeypatch.setattr(c04.store, "load_run", load)
    partial = c04.read_study(cfgs, count=16)
    assert (tmp_path / "110" / "readings" / "c04-architecture.json").exists()      # kept beside the run
    assert partial.readings["untied_a5_seq_acc"] == 1.0 and partial.recorded is None and not partial.complete
    assert not rules.confirm_path("C04-architecture").exists()
    text = c04.describe(partial)
    assert "not yet trained: 1 of 3 runs" in text and "verdicts: none until every run is stored" in text
    stored.add(cfgs["untied A5"][2])
    read_seed, calls = c04.read_seed, []
    monkeypatch.setattr(c04, "read_seed", lambda *a, **k: calls.append(a[1].config.seed) or read_seed(*a, **k))
    done = c04.read_study(cfgs, count=16)
    assert calls == [112]                          # the two read before come from their kept readings
    assert done.complete and done.recorded == rules.confirm_path("C04-architecture")
    assert json.loads(done.recorded.read_text())["untied_a5_seq_acc"] == 1.0
    # untied S4 never learned here: rule 4's precondition fails, so the recorded verdict is not measured
    assert claims.confirmatory_verdict(claims.claim("untied_a5_seq_acc"))[0] == "not measured"
    assert "verdict untied_a5_seq_acc: not measured (untied_a5_seq_acc = 1.000)" in c04.describe(done)


def test_c04_figure_and_the_notebooks_entry_point(store_root, capsys):
    import matplotlib
    matplotlib.use("Agg")
    rows = _c04_rows(untied=("log", "linear", None))
    fig = figures04.probe_tau(rows, c04.PROBED)
    assert [ax.get_title() for ax in fig.axes] == list(c04.PROBED)
    assert len(fig.axes[2].lines) == 9                                 # three seeds x three decoders
    assert figures04.probe_tau([r for r in rows if r["family"] not in c04.PROBED], c04.PROBED) is None
    assert c04.show("smoke") is None and "not read under profile smoke" in capsys.readouterr().out
    study = c04.show("quick")                                          # an empty store: the table, no figure
    assert study.readings is None and "nothing to draw" in capsys.readouterr().out
