"""04, the architecture prior (Paper A §6.2, App. D): untied controls, positional encodings, the readers and
figures on constructed runs, and C04-architecture's reader."""
import json
import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from lib import claims, plots, profiles, rules, tasks
from lib.config import RunConfig
from lib.instruments import contract, head
from lib.sections.s04_architecture_prior import figures as figures04, read as architecture
from lib.layers import rotary
from lib.model import LoopConfig, LoopedTransformer, scan_address, scan_shift
from lib.profiles import architecture_prior, matched_untied
from tests.constructed import SerialPropagator, fake_run


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


# --- the readers behind notebook 04, on constructed runs ---------------------------------------------


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
    assert ("verdict untied_a5_seq_acc: not measured (untied_a5_seq_acc = 1.000; needs ≥ 2 of 3 untied S4 seeds learn)"
            in c04.describe(done))                  # a not-measured verdict names its failed precondition


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


def _picked(search, pick) -> tuple[str, dict] | None:
    """The search's logged pick checked against the profile's constant `pick`: None or (name, changes)."""
    import json
    rows = [json.loads(x) for x in search.LOG.read_text().splitlines()] if search.LOG.exists() else []
    logged = search.decide(rows)["pick"]
    if pick is None:
        assert logged is None
        return None
    assert logged == pick[0] and pick[1] == search.RECIPES[pick[0]]
    return pick


def test_04s_quick_untied_control_is_the_untied_search_pick_by_its_log():
    """04's untied control (and its A5 run) trains what searches/untied_search.py's logged rule picked, and
    the search's runs are 04's own."""
    from searches import untied_search as search
    from lib.config import run_id
    if (pick := _picked(search, profiles.UNTIED_PICK)) is not None:
        plan = profiles.architecture_prior("quick", search.SEEDS)
        assert [run_id(c) for c in plan.untied] == [run_id(search.config(pick[0], s)) for s in search.SEEDS]
        assert all(getattr(c, k) == v for c in plan.untied_a5 for k, v in pick[1].items())


def test_c04_judges_decoder_validity_unrounded():
    """6,225 of 6,917 solved inputs (0.89996) fail the 0.9 bar; at 4 places they would read 0.9000 and pass."""
    s = c04.DecoderScaling(list(range(2, 6)), [1.0, 2.0, 3.0, 4.0], 6225 / 6917, None)
    kept = c04._decoder_json(s)["validity"]
    assert kept == 6225 / 6917 and not head.decoder_valid(kept)
    rows = _c04_rows(validity=(1.0, 1.0, 6225 / 6917))
    assert c04.study_readings(rows)["untied_valid_learned"] == 2


def test_c04_ceiling_sensitivity_finds_lengths_at_the_last_block_read_and_classes_the_rest():
    """tau cannot pass the last block read (untied: its 8 blocks): a serial curve capped there is counted
    at the ceiling and classed on the lengths below it; the tied rows' 2 * loops never cap."""
    rows = _c04_rows()
    serial_capped = [float(min(n, 8)) for n in range(2, 17)]            # 2..7 below, 8 at the ceiling from n = 8
    rows[0]["decoders"]["linear"]["tau_last"] = serial_capped
    rows[1]["decoders"]["linear"]["tau_last"] = [5.0, 6.0] + [8.0] * 13   # 2 lengths below: no class
    out = c04.below_ceiling(rows)
    assert out["untied"]["linear"][110] == {"at_ceiling": 9, "lengths": 15, "cls": "linear"}
    assert out["untied"]["linear"][111] == {"at_ceiling": 13, "lengths": 15, "cls": None}
    assert all(v["at_ceiling"] == 0 for k in out["tied"].values() for v in k.values())
    assert "untied A5" not in out and not any(f in out for f in c04.COMPARATORS)      # probed families only
    lines = c04._ceiling_lines(rows)
    assert "none in tied, tied + scan" in lines[0] and "seed 111 no class (13 of 15 at it)" in lines[1]
