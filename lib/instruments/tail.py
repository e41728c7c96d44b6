"""Tail instruments (Paper A §4, App. C): what standard instruments read at the END of the loop.

Paper A's point (Proposition 1): a trained loop converges to a fixed point h* of G(h) = F(h, e);
after it is reached every tail instrument saturates, so none can see how the computation got there.

Definitions used here (the paper leaves the exact forms open):
- skip-k output preservation: the fraction of inputs whose decoded output after T - k loops equals
  the output after T loops (dropping k loops after the fixed point; with tied weights "dropping
  loops" and "running fewer" are the same program).
- Jacobian alignment of J_t = dh^{t+1}/dh^t: for m random unit probe directions u (over a whole
  input's state, N x d), the mean cosine similarity between J_t u and J_{t+1} u, computed with
  Jacobian-vector products (`torch.func.jvp`: one forward-mode pass per probe, no full Jacobian).
- cross-step representation similarity: mean cosine between h^t and h^{t+1} per (input, position),
  and linear CKA (Kornblith et al. 2019) between the (inputs x positions, d) matrices of h^t and h^{t+1}.
- asymptotic alignment (path independence; Anil et al. 2022, "Path Independent Equilibrium Models
  Can Better Exploit Test-Time Computation", their AA score): run the loop for `T_long` loops from
  the usual start h^0 = e and from a random start (Gaussian of the same per-position norm), and take
  the mean cosine similarity of the two final states per (input, position). Near 1: the end state
  does not depend on the path. Anil et al. compare a zero and a random initialisation; our model
  starts from the embedding, so the embedding start stands in for their zero start.
- Proposition 1, numerically: on the inputs whose state settles (moves by less than `tol`, relative,
  from some loop on), after the loop tau* from which all of them have, check (i) skip-k preservation,
  (ii) ||J_t u - J_{t'} u|| / ||J_t u|| for t, t' >= tau*,
  (iii) features of a fixed dictionary (PCA of states, fitted once) at t and t'.
"""
from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass

import numpy as np
import torch
from torch.func import jvp as _jvp
from torch.nn.attention import SDPBackend, sdpa_kernel

from .head import settled_from

# Tail metrics are read to 3 decimals. Past a fixed point they sit within float noise of 1, and the
# digits below that belong to the CPU, not the model: the same committed runs read on two machines
# differed there and flipped the rank correlations of notebooks 01 and 07. Two readings equal at this
# resolution are a tie (a rank correlation over ties only is undefined), whatever machine reads them.
DECIMALS = 3


def at_resolution(x: float) -> float:
    return round(float(x), DECIMALS) if np.isfinite(x) else float("nan")


def jvp(f, primals, tangents):
    # The fused CPU attention kernel has no forward-mode derivative; the math kernel computes the
    # same attention and has one. torch's first forward-mode call loads decompositions through
    # torch.jit.script, which warns about its own deprecation: not ours to act on.
    with sdpa_kernel([SDPBackend.MATH]), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*torch.jit.script.*", category=DeprecationWarning)
        return _jvp(f, primals, tangents)


def jacobian_products(model, e: torch.Tensor, hs: torch.Tensor, us: torch.Tensor, max_elements: int = 2 ** 19):
    """J(h_t) u_p for every loop state h_t of hs (L, B, N, d) and every probe u_p of us (P, B, N, d),
    J = dG/dh of the tied step map G(h) = F(h, e): yields (l, P, B, N, d) chunks, loops in order.
    Each input's state is its own map (inputs never mix), so a chunk's (loop, probe) pairs are stacked
    along the batch and differentiated in one forward-mode pass, not one pass per pair (the same
    products, far fewer passes through torch's decompositions); a chunk holds at most `max_elements`
    state entries (at least one loop), so memory stays bounded at any size. The default, 2**19, was the
    fastest measured on one CPU thread (`bench/jacobian_chunks.py`: about 1.4x faster than 2**23 on a
    quick model's tail, identical products)."""
    L, P = len(hs), len(us)
    per_chunk = max(1, max_elements // max(1, P * hs[0].numel()))           # loops per forward-mode pass
    for a in range(0, L, per_chunk):
        h = hs[a:a + per_chunk]
        rows = len(h) * P
        stacked = lambda x: x.reshape(rows * x.shape[-3], *x.shape[-2:])   # noqa: E731  (l, P, B, ...) -> rows
        ju = jvp(_step_fn(model, stacked(e.expand(len(h), P, *e.shape))),
                 (stacked(h.unsqueeze(1).expand(len(h), P, *h.shape[1:])),),
                 (stacked(us.expand(len(h), *us.shape)),))[1]
        yield ju.detach().reshape(len(h), P, *hs.shape[1:])


def given_states(states: torch.Tensor | None, tokens: torch.Tensor, T: int) -> torch.Tensor | None:
    """The first T loops of `states` (the model's states h^1.. on `tokens`, from the usual start and
    with the same streaming setting, when a caller has them already), checked; None passes through.
    A loop is deterministic, so the first T of a longer run are the T-loop run itself."""
    if states is not None and (states.dim() != 4 or len(states) < T or states.shape[1:3] != tokens.shape):
        raise ValueError(f"states: expected at least {T} loops' states (T, B, N, d) of the {tuple(tokens.shape)} "
                         f"tokens, got shape {tuple(states.shape)}")
    return None if states is None else states[:T].detach()


@torch.no_grad()
def skip_k_preservation(model, tokens: torch.Tensor, T: int, k: int = 1, streaming: bool = False,
                        only: torch.Tensor | None = None, states: torch.Tensor | None = None) -> float:
    """Fraction of inputs (optionally only those in the bool mask `only`) whose decoded outputs
    after T - k loops equal those after T loops, at every position (`states`: see `given_states`)."""
    if not 1 <= k < T:
        raise ValueError(f"k: must satisfy 1 <= k < T={T}, got {k}")
    states = given_states(states, tokens, T)
    if states is None:
        preds = model(tokens, T, all_loops=True, streaming=streaming).argmax(-1)[:, :, 1:]
    else:
        preds = dict(                                                   # only the two loops compared are decoded
            zip((T - 1 - k, T - 1), model.decode(states[[T - 1 - k, T - 1]]).argmax(-1)[:, :, 1:]))
    same = (preds[T - 1 - k] == preds[T - 1]).all(-1)
    if only is not None:
        same = same[only]
    return float(same.float().mean()) if len(same) else float("nan")


def _step_fn(model, e):
    if not getattr(model, "tied", True):      # an untied model has no single step map G to differentiate
        raise ValueError("model: tail instruments read the tied step map G(h) = F(h, e); got an untied model")
    return lambda h: model.step(h, e)


def jacobian_alignment(model, tokens: torch.Tensor, T: int, probes: int = 4, seed: int = 0,
                       from_loop: int = 1, states: torch.Tensor | None = None) -> np.ndarray:
    """(T - from_loop,) mean cosine between J_t u and J_{t+1} u over probes u, for t = from_loop..T-1
    (J_t at h^t); the loops before from_loop are not differentiated at all (`states`: `given_states`)."""
    if isinstance(from_loop, bool) or not isinstance(from_loop, numbers.Integral) or from_loop < 1:
        raise ValueError(f"from_loop: the first loop read, an integer >= 1, got {from_loop!r}")
    states = given_states(states, tokens, T)
    if from_loop >= T:                                          # no loop pair (t, t+1) to compare
        return np.array([])
    if states is None:
        states = _states(model, tokens, T)                      # h^1..h^T
    e = model.embed_tokens(tokens).detach()
    g = torch.Generator().manual_seed(seed)
    us = torch.stack([torch.randn(states[0].shape, generator=g) for _ in range(probes)])
    us = us / us.flatten(2).norm(dim=2)[:, :, None, None]                     # (probes, B, N, d), unit per input
    out, last = [], None
    for ju in jacobian_products(model, e, states[from_loop - 1:T], us):
        ju = ju.flatten(3)                                                    # (loops, probes, B, N*d)
        both = ju if last is None else torch.cat([last, ju])                  # the pair across chunks too
        out.append(torch.nn.functional.cosine_similarity(both[:-1], both[1:], dim=3).mean(2).mean(1))
        last = ju[-1:]
    return torch.cat(out).double().numpy()


@torch.no_grad()
def _states(model, tokens, T, streaming=False, h0=None) -> torch.Tensor:
    return model(tokens, T, return_states=True, streaming=streaming, h0=h0)[1]


def linear_cka(X: torch.Tensor, Y: torch.Tensor) -> float:
    """Linear CKA between two (samples, features) matrices (Kornblith et al. 2019)."""
    X = X - X.mean(0)
    Y = Y - Y.mean(0)
    hsic = (Y.T @ X).norm() ** 2
    return float(hsic / ((X.T @ X).norm() * (Y.T @ Y).norm()))


def cross_step_similarity(model, tokens: torch.Tensor, T: int, streaming: bool = False,
                          states: torch.Tensor | None = None) -> dict:
    """cosine and CKA between h^t and h^{t+1}, for t = 1..T-1: arrays of length T - 1 (`states`:
    see `given_states`)."""
    states = given_states(states, tokens, T)
    s = (_states(model, tokens, T, streaming) if states is None else states)[:, :, 1:]    # drop BOS
    cos = torch.nn.functional.cosine_similarity(s[:-1], s[1:], dim=-1).mean((1, 2))
    flat = s.reshape(T, -1, s.shape[-1])
    cka = [linear_cka(flat[t], flat[t + 1]) for t in range(T - 1)]
    return {"cosine": cos.numpy(), "cka": np.array(cka)}


def asymptotic_alignment(model, tokens: torch.Tensor, T_long: int, seed: int = 0,
                         states: torch.Tensor | None = None) -> float:
    """Anil et al.'s AA score: cos(h^T from h^0 = e, h^T from a random h^0), averaged (`states`: the
    run from e, see `given_states`)."""
    e = model.embed_tokens(tokens).detach()
    g = torch.Generator().manual_seed(seed)
    r = torch.randn(e.shape, generator=g)
    r = r / r.norm(dim=-1, keepdim=True) * e.norm(dim=-1, keepdim=True)
    states = given_states(states, tokens, T_long)
    a = (_states(model, tokens, T_long) if states is None else states)[-1]
    b = _states(model, tokens, T_long, h0=r)[-1]
    return float(torch.nn.functional.cosine_similarity(a[:, 1:], b[:, 1:], dim=-1).mean())


def relative_step(states: torch.Tensor) -> torch.Tensor:
    """states (T, B, N, d) -> (T-1, B): ||h^{t+1} - h^t|| / ||h^t|| per input, on its whole state (every
    position): the raw step of the loop map G whose fixed point Proposition 1 speaks of."""
    a, b = states[:-1].flatten(2), states[1:].flatten(2)
    return (b - a).norm(dim=2) / a.norm(dim=2).clamp(min=1e-12)


def fixed_point_loops(states: torch.Tensor, tol: float = 1e-3) -> np.ndarray:
    """(B,) per input: the first loop t (1-indexed) with relative step <= tol at every t' >= t;
    T = len(states) where it never settles within the loops run."""
    return settled_from((relative_step(states) <= tol).numpy())


def settled_inputs(states: torch.Tensor, tol: float = 1e-3, quantile: float = 0.9) -> tuple[np.ndarray, int | None]:
    """(mask of the inputs read past the fixed point, tau*: the loop from which every one of them rests).

    tau* is the `quantile` (nearest rank) of the settling loops of the inputs that settle within the
    loops run, and the mask keeps the inputs settled by tau*: a few inputs that settle only in the last
    loops do not push tau* to the end and leave no tail to read. tau* None when no input settles, or
    when tau* is the last loop (no tail)."""
    loops = fixed_point_loops(states, tol)
    settling = np.sort(loops[loops < len(states)])
    if not len(settling):
        return np.zeros(len(loops), bool), None
    tau_star = int(settling[max(0, int(np.ceil(quantile * len(settling))) - 1)])
    return loops <= tau_star, (tau_star if tau_star < len(states) - 1 else None)


@dataclass
class Prop1Check:
    tau_star: int | None      # loop from which the state is fixed (relative step <= tol) on every input that settles
    T: int
    last_step: float          # relative step ||h^T - h^{T-1}|| / ||h^{T-1}|| (why no fixed point, if none)
    norm_growth: float        # ||h^T|| / ||h^1||
    skip_preservation: float  # skip-k preservation, k = T - tau_star (the largest skip the proposition allows)
    jacobian_change: float    # max over t, t' >= tau_star of ||J_t u - J_t' u|| / ||J_t u||
    feature_change: float     # max over t >= tau_star of ||z_t - z_tau*|| / ||z_tau*|| for PCA features z
    holds: bool
    fixed_fraction: float = 0.0   # share of the inputs checked: those settled by tau* (`settled_inputs`)


def proposition1(model, tokens: torch.Tensor, T: int, tol: float = 1e-3, probes: int = 2,
                 n_features: int = 8, seed: int = 0) -> Prop1Check:
    """Check Proposition 1's three statements numerically on the inputs of one batch whose loop reaches
    a fixed point within T loops (tau*: the loop from which all of them have); the premise is absent
    (tau_star None) when none does."""
    states = _states(model, tokens, T)
    last_step = float((states[-1] - states[-2]).norm() / states[-2].norm())
    growth = float(states[-1].norm() / states[0].norm())
    fixed, tau_star = settled_inputs(states, tol)
    if tau_star is None:
        return Prop1Check(None, T, last_step, growth, float("nan"), float("nan"), float("nan"), False, float(fixed.mean()))
    tokens, states = tokens[torch.from_numpy(fixed)], states[:, torch.from_numpy(fixed)]
    k = T - tau_star
    preserved = skip_k_preservation(model, tokens, T, k)
    e = model.embed_tokens(tokens).detach()
    g = torch.Generator().manual_seed(seed)
    us = torch.stack([torch.randn(states[0].shape, generator=g) for _ in range(probes)])
    jac_change, ref = 0.0, None
    for ju in jacobian_products(model, e, states[tau_star - 1:T], us):  # the reference loop tau*-1, then tau*..T-1
        ju = ju.flatten(2)                                        # (loops, probes, B*N*d)
        if ref is None:
            ref, ju = ju[0], ju[1:]
        if len(ju):
            jac_change = max(jac_change, float(((ju - ref).norm(dim=-1) / ref.norm(dim=-1)).max()))
    X = states[tau_star - 1].reshape(-1, states.shape[-1])
    mean = X.mean(0)
    V = torch.linalg.svd(X - mean, full_matrices=False).Vh[:n_features].T     # PCA directions, fixed once
    z_ref = (X - mean) @ V
    feat_change = max(float(((states[t].reshape(-1, X.shape[1]) - mean) @ V - z_ref).norm() / z_ref.norm())
                      for t in range(tau_star - 1, T))
    holds = preserved == 1.0 and jac_change <= 10 * tol and feat_change <= 10 * tol
    return Prop1Check(tau_star, T, last_step, growth, preserved, jac_change, feat_change, holds, float(fixed.mean()))


def metrics_row(model, tokens: torch.Tensor, T: int, solved: torch.Tensor, probes: int = 4,
                T_long: int | None = None, streaming: bool = False, from_loop: int = 1,
                states: torch.Tensor | None = None, decimals: int | None = DECIMALS) -> dict:
    """Every tail metric of one model read at loop T on `tokens` (skip-one on the `solved` inputs
    only): skip1, jac_align (mean over 32 inputs and over the loop pairs (t, t+1) with t >= from_loop:
    from a fixed point tau* on, the tail the paper speaks of), cosine and cka between the last two
    loops, and the asymptotic alignment after T_long loops (default 4 T), each to `decimals` places
    (None: full precision, for a rule that judges a band edge; ranks are read at DECIMALS).
    Loop-comparing metrics are nan at T = 1. `states`: the model's states on `tokens` over at least T
    loops (see `given_states`), so the readings share one run instead of each running the loop again;
    the asymptotic alignment reads them too when they reach T_long."""
    nan = float("nan")
    T_long = T_long or 4 * T
    looped = T > 1                       # tail metrics compare loops: undefined for one loop
    if streaming and states is not None:  # the Jacobian and path readings run the plain loop: one state set
        raise ValueError("states: not with streaming=True (the Jacobian and asymptotic alignment read the "
                         "non-streaming loop; pass states=None)")
    given_states(states, tokens, T)      # checked once, before any reading
    at_T = None if states is None else states[:T]
    long = None if states is None or len(states) < T_long else states[:T_long, :64]
    sim = cross_step_similarity(model, tokens, T, streaming=streaming, states=at_T) if looped else None
    readings = dict(
        skip1=skip_k_preservation(model, tokens, T, 1, streaming=streaming, only=solved, states=at_T)
        if looped else nan,
        jac_align=float(np.mean(jacobian_alignment(model, tokens[:32], T, probes=probes, from_loop=from_loop,
                                                   states=None if at_T is None else at_T[:, :32])))
        if looped else nan,
        cosine=float(sim["cosine"][-1]) if looped else nan, cka=float(sim["cka"][-1]) if looped else nan,
        aa=asymptotic_alignment(model, tokens[:64], T_long, states=long))
    if decimals is None:
        return {m: float(x) if np.isfinite(x) else float("nan") for m, x in readings.items()}
    return {m: round(float(x), decimals) if np.isfinite(x) else float("nan") for m, x in readings.items()}


def metrics_after_fixed_point(model, tokens: torch.Tensor, T_train: int, solved: torch.Tensor, probes: int = 4,
                              conv_factor: int = 8, tol: float = 1e-3, states: torch.Tensor | None = None) -> dict:
    """The tail metrics past the loop's fixed point (Proposition 1's regime), not past T_train: run
    conv_factor x T_train loops, keep the inputs whose loop settles (raw relative step <= tol for good,
    `settled_inputs`), and read `metrics_row` on them at the last of those loops, with the Jacobian
    alignment over the loop pairs from tau* on. fixed_fraction: the share of inputs kept. Without a
    fixed point the tail after it does not exist: every metric nan, tau_star None. `states`: the
    model's conv_factor x T_train states on `tokens`, when the caller has them already."""
    T_end = conv_factor * T_train
    if states is None:
        states = _states(model, tokens, T_end)
    if states.shape[:2] != (T_end, len(tokens)):
        raise ValueError(f"states: expected the {T_end} loops' states of the {len(tokens)} tokens, got shape {tuple(states.shape)}")
    fixed, tau_star = settled_inputs(states, tol)
    if tau_star is None:
        return dict(tau_star=None, fixed_fraction=float(fixed.mean()),
                    **{m: float("nan") for m in ("skip1", "jac_align", "cosine", "cka", "aa")})
    keep = torch.from_numpy(fixed)
    return dict(tau_star=tau_star, fixed_fraction=float(fixed.mean()),
                **metrics_row(model, tokens[keep], T_end, solved[keep], probes, T_end, from_loop=tau_star,
                              states=states[:, keep]))
