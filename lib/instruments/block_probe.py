"""A decoder for every block: probes fit on frozen states, and tau read through them.

The head instrument decodes every loop with the model's own final readout. That is right for a
weight-tied loop, whose readout is trained on a state the same block produced, but an untied stack's
intermediate blocks are never decoded in training: its readout may read them at chance even where
they hold the answer. So each block t gets its own decoder, a probe fit on frozen states:

    p_t = argmax_c  W_t h^t_i + b_t          (linear, primary)
    p_t = argmax_c  MLP_t(h^t_i)             (one hidden layer of 128, GELU: the stated alternative)

one probe per block shared by every position i, fit by cross-entropy on held-out words of every
length 2..n_train (the `probe_fit` set, apart from every test set).

- validity: the share of solved inputs whose position 1 (a function of the first token alone) the
  block-1 probe reads right; below `head.DECODER_VALID` the probe cannot see the model.
- probe tau(b, i): the first block t from which the probe's answer at position i is right at every
  t' >= t up to the last block read; tau(n, i) its mean over the inputs the model itself solves.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from ..probes import probe_set
from . import head

KINDS = ("linear", "mlp")
# the fits C04-architecture pre-registered: full-batch AdamW, weight decay 1e-4; the MLP slower and longer
# (at lr 1e-2 it memorises the unreadable positions of a constructed serial stack: tests/test_block_probe.py)
FITS = {"linear": dict(steps=500, lr=1e-2), "mlp": dict(steps=1000, lr=1e-3)}


@dataclass
class BlockProbes:
    kind: str
    probes: list                 # one torch module per block
    fit_accuracy: np.ndarray     # (T,) accuracy of each block's probe on its own fitting states


def _make(kind: str, d: int, classes: int, seed: int) -> torch.nn.Module:
    """PyTorch's default init, seeded without touching the caller's global generator."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        if kind == "linear":
            return torch.nn.Linear(d, classes)
        return torch.nn.Sequential(torch.nn.Linear(d, 128), torch.nn.GELU(), torch.nn.Linear(128, classes))


def fit(states: torch.Tensor, labels: torch.Tensor, classes: int, kind: str = "linear", steps: int | None = None,
        lr: float | None = None, weight_decay: float = 1e-4, seed: int = 0) -> BlockProbes:
    """states (T, M, d) frozen, labels (M,): one probe per block t, full-batch AdamW for `steps` at `lr`
    (None: the kind's pre-registered `FITS`)."""
    if states.dim() != 3 or labels.shape != states.shape[1:2]:
        raise ValueError(f"states: (T, M, d) with labels (M,), got {tuple(states.shape)} and {tuple(labels.shape)}")
    if kind not in KINDS:
        raise ValueError(f"kind: unknown probe {kind!r}; allowed: {KINDS}")
    steps = FITS[kind]["steps"] if steps is None else steps
    lr = FITS[kind]["lr"] if lr is None else lr
    probes, acc = [], []
    with torch.enable_grad():
        for t in range(states.shape[0]):
            x = states[t].detach().float()
            m = _make(kind, x.shape[-1], classes, seed * 1000 + t)
            opt = torch.optim.AdamW(m.parameters(), lr=lr, weight_decay=weight_decay)
            for _ in range(steps):
                opt.zero_grad()
                F.cross_entropy(m(x), labels).backward()
                opt.step()
            with torch.no_grad():
                acc.append(float((m(x).argmax(-1) == labels).float().mean()))
            probes.append(m.eval())
    return BlockProbes(kind, probes, np.array(acc))


@torch.no_grad()
def predict(bp: BlockProbes, states: torch.Tensor) -> np.ndarray:
    """states (T, B, n, d) -> (T, B, n) the probes' answers (block t read by probe t)."""
    if states.shape[0] > len(bp.probes):
        raise ValueError(f"states: {states.shape[0]} blocks but probes for {len(bp.probes)}")
    return np.stack([bp.probes[t](states[t].float()).argmax(-1).numpy() for t in range(states.shape[0])])


@dataclass
class ProbeTau:
    n: int
    tau_curve: np.ndarray        # (n,) mean probe tau over the solved inputs, per position
    validity: float              # solved inputs whose position 1 the block-1 probe reads right
    n_solved: int


def probe_tau(preds: np.ndarray, labels: np.ndarray, solved: np.ndarray) -> ProbeTau:
    """preds (T, B, n) probe answers, labels (B, n), solved (B,) bool (the model's own answer right
    at every position after the last block read)."""
    preds, labels, solved = np.asarray(preds), np.asarray(labels), np.asarray(solved, bool)
    correct = preds == labels[None]
    n = labels.shape[1]
    if not solved.any():
        return ProbeTau(n, np.full(n, np.nan), float("nan"), 0)
    tau = head.settled_from(correct[:, solved])                   # (solved, n): first block right for good
    return ProbeTau(n, tau.mean(0), float(correct[0, solved, 0].mean()), int(solved.sum()))


@torch.no_grad()
def model_states(model, tokens: torch.Tensor, T: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(states (T, B, n, d) after every block/loop with BOS dropped, the model's own answers (T, B, n))."""
    logits, hs = model(tokens, T, all_loops=True, return_states=True)
    return hs[:, :, 1:], logits.argmax(-1)[:, :, 1:]


def fit_for_run(run, T: int, kind: str = "linear", count: int = 256, key: int = 0, **fit_kw) -> BlockProbes:
    """Probes for blocks 1..T of a stored run, fit on the `probe_fit` words of every length 2..n_train
    (`count` a length), every position pooled."""
    c = run.config
    task = c.task_obj()
    xs, ys = [], []
    for n in range(2, c.n_train + 1):
        tokens, labels = probe_set(task, "probe_fit", key * 100 + n, n, count)
        hs, _ = model_states(run.model, tokens, T)
        xs.append(hs.reshape(T, -1, hs.shape[-1]))
        ys.append(labels[:, 1:].reshape(-1))
    return fit(torch.cat(xs, 1), torch.cat(ys), task.n_classes, kind, **fit_kw)


def read_run(run, bp: BlockProbes, n: int, T: int, count: int = 512, purpose: str = "tau_vs_n") -> ProbeTau:
    """Probe tau of a stored run at length n over T blocks/loops, on the named probe set; solved by the
    model's own readout after block T."""
    tokens, labels = probe_set(run.config.task_obj(), purpose, n, n, count)
    hs, own = model_states(run.model, tokens, T)
    y = labels[:, 1:].numpy()
    solved = (own[-1].numpy() == y).all(1)
    return probe_tau(predict(bp, hs), y, solved)
