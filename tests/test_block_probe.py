"""The block probes on constructed stacks whose computation is known: a serial stack (position i right
from block i on) reads linear, a Hillis-Steele scan (position i right from block ceil(log2 i) + 1 on)
reads log, and a stack whose first block carries nothing fails the validity check."""
import numpy as np
import torch

from lib import groups
from lib.instruments import block_probe, head

G = groups.by_name("S4")
ORDER = G.table.shape[0]


def window_products(words: np.ndarray, width: int) -> np.ndarray:
    """(B, n): g_{i-width+1} ∘ ... ∘ g_i (from g_1 where the window would start before it)."""
    B, n = words.shape
    out = np.empty_like(words)
    for i in range(n):
        acc = words[:, max(0, i - width + 1)]
        for j in range(max(0, i - width + 1) + 1, i + 1):
            acc = G.table[acc, words[:, j]]
        out[:, i] = acc
    return out


def stack_states(words: np.ndarray, T: int, kind: str, rng) -> torch.Tensor:
    """(T, B, n, d): a one-hot of what each position holds after block t, plus noise dimensions."""
    B, n = words.shape
    prefix = window_products(words, n)
    blocks = []
    for t in range(1, T + 1):
        if kind == "serial":        # position i is right from block i on; before, an unrelated element
            held = np.where(np.arange(1, n + 1)[None] <= t, prefix, rng.integers(0, ORDER, (B, n)))
        elif kind == "scan":        # Hillis-Steele: after block t each position holds a window of 2^(t-1)
            held = window_products(words, 2 ** (t - 1))
        else:                       # "blind": block 1 carries nothing readable, later blocks the answer
            held = rng.integers(0, ORDER, (B, n)) if t == 1 else prefix
        x = np.eye(ORDER)[held] + 0.05 * rng.standard_normal((B, n, ORDER))
        blocks.append(np.concatenate([x, 0.05 * rng.standard_normal((B, n, 8))], -1))
    return torch.tensor(np.stack(blocks), dtype=torch.float32)


def read(kind: str, T: int, ns, probe: str = "linear"):
    rng = np.random.default_rng(0)
    fit_words = [rng.integers(0, ORDER, (256, n)) for n in range(2, 9)]    # the entry's 256 words a length
    states = torch.cat([stack_states(w, T, kind, rng).reshape(T, -1, ORDER + 8) for w in fit_words], 1)
    labels = torch.tensor(np.concatenate([window_products(w, w.shape[1]).reshape(-1) for w in fit_words]))
    bp = block_probe.fit(states, labels, ORDER, probe)          # the pre-registered fit (500 steps, lr 1e-2)
    taus, validity = [], []
    for n in ns:
        words = rng.integers(0, ORDER, (64, n))
        r = block_probe.probe_tau(block_probe.predict(bp, stack_states(words, T, kind, rng)),
                                  window_products(words, n), np.ones(64, bool))
        taus.append(r.tau_curve[-1])
        validity.append(r.validity)
    return list(ns), taus, min(validity)


def test_a_serial_stack_reads_linear():
    ns, taus, validity = read("serial", T=12, ns=range(2, 13))
    assert np.allclose(taus, ns, atol=0.2)                      # tau(last) = n
    assert head.scaling_class(ns, taus).cls == "linear"
    assert head.decoder_valid(validity)


def test_a_hillis_steele_scan_reads_log():
    ns, taus, validity = read("scan", T=6, ns=range(2, 17))
    assert np.allclose(taus, [np.ceil(np.log2(n)) + 1 for n in ns], atol=0.2)
    assert head.scaling_class(ns, taus).cls == "log"
    assert head.decoder_valid(validity)


def test_a_stack_whose_first_block_carries_nothing_is_not_a_valid_read():
    _, _, validity = read("blind", T=4, ns=range(2, 6))
    assert validity < 0.2 and not head.decoder_valid(validity)


def test_the_mlp_probe_reads_the_same_serial_stack():
    ns, taus, _ = read("serial", T=5, ns=range(2, 6), probe="mlp")    # validity is judged on the linear probe
    assert np.allclose(taus, ns, atol=0.2)
