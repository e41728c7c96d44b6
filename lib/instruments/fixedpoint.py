"""Fixed-point stability along Paper B's three axes: reachability, input-dependence, geometry.

A looped model iterates G_e(h) = F(inject(h, e)) from h^0 = e. A fixed point is h* = G_e(h*).
- Reachability: does the iteration get there? The relative step r_t = ||h^{t+1} - h^t|| / ||h^t||
  per input; the loop from which r_t <= tol for good (None if never within the loops run).
- Input-dependence: do different inputs reach different fixed points? Distances between the final
  states of different inputs (relative to their norms), of nearby inputs (one token changed), and
  the number of distinct fixed points (final states that agree within `tol_distinct` are one).
  Without recall the input enters only as h^0, so many inputs can fall into the same few attractors.
- Geometry: the spectral radius rho of the Jacobian dG/dh at the final state, from Jacobian-vector
  products only (Gelfand's formula rho = lim ||J^k u||^(1/k), which also converges when the top
  eigenvalues are a complex pair), and the gradient norm of the loss through T loops.
  rho < 1: a locally attracting fixed point, stable backpropagation through many loops; rho > 1:
  repelling, and gradients through long unrolls grow.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from ..tasks import IGNORE, test_set
from .head import accuracy_by_loops, settled_from
from .tail import jvp


@torch.no_grad()
def states(model, tokens: torch.Tensor, T: int) -> torch.Tensor:
    """(T, B, N, d): h^1..h^T."""
    return model(tokens, T, return_states=True)[1]


@dataclass
class Reachability:
    rel_step: np.ndarray          # (T-1,) median over inputs of ||h^{t+1} - h^t|| / ||h^t||
    reached_fraction: float       # inputs whose step falls below tol for good within T loops
    reach_loop: float             # median loop (1-indexed) from which they stay below tol (nan if none)


def reachability(hs: torch.Tensor, tol: float = 1e-3) -> Reachability:
    """hs: (T, B, N, d) states. Per input, the relative step of its whole state."""
    step = (hs[1:] - hs[:-1]).flatten(2).norm(dim=2) / hs[:-1].flatten(2).norm(dim=2).clamp(min=1e-12)   # (T-1, B)
    ok = (step <= tol).T.numpy()                                       # (B, T-1)
    first = np.array([settled_from(row) for row in ok])                # 1-indexed; len+1 = never
    reached = first <= ok.shape[1]
    return Reachability(np.median(step.numpy(), axis=1), float(reached.mean()),
                        float(np.median(first[reached])) if reached.any() else float("nan"))


# Three readings of "the loop has converged", each per input on its whole state (all positions):
# - "raw":        ||h^{t+1} - h^t|| / ||h^t|| <= 1e-3, on the state G itself maps: Proposition 1's premise
#                 is a fixed point of G(h) = F(h, e), so this is the criterion its verdicts use;
# - "normalised": the same on LayerNorm(h) without its affine part (the direction, per position, that the
#                 readout's norm sees): a state that only grows along a settled direction passes here;
# - "cosine":     1 - cos(h^{t+1}, h^t) <= 1e-2, Paper B's diagnostic (consecutive cosine > 0.99).
CRITERIA = {"raw": 1e-3, "normalised": 1e-3, "cosine": 1e-2}


@dataclass
class Convergence:
    criterion: str
    tol: float
    step: np.ndarray              # (T-1,) median over inputs of the criterion's per-loop value
    reached_fraction: float       # inputs whose value falls below tol for good within the loops run
    tau_star: float               # median over those inputs of the loop from which it stays below (nan if none)


def consecutive_change(hs: torch.Tensor, criterion: str) -> torch.Tensor:
    """hs (T, B, N, d) -> (T-1, B): the criterion's value between consecutive states of each input."""
    if criterion not in CRITERIA:
        raise ValueError(f"criterion: unknown {criterion!r}; allowed: {tuple(CRITERIA)}")
    if criterion == "normalised":
        hs = F.layer_norm(hs, hs.shape[-1:])
    a, b = hs[:-1].flatten(2), hs[1:].flatten(2)
    if criterion == "cosine":
        return 1 - F.cosine_similarity(a, b, dim=2)
    return (b - a).norm(dim=2) / a.norm(dim=2).clamp(min=1e-12)


def convergence(hs: torch.Tensor, criterion: str = "raw", tol: float | None = None) -> Convergence:
    """Whether, and from which loop, the states hs (T, B, N, d) settle under `criterion` (CRITERIA)."""
    tol = CRITERIA[criterion] if tol is None and criterion in CRITERIA else tol
    change = consecutive_change(hs, criterion)
    first = settled_from((change <= tol).numpy())                    # (B,), 1-indexed; T = never
    reached = first <= change.shape[0]
    return Convergence(criterion, tol, np.median(change.numpy(), axis=1), float(reached.mean()),
                       float(np.median(first[reached])) if reached.any() else float("nan"))


def convergence_all(hs: torch.Tensor) -> dict[str, Convergence]:
    """Every criterion of CRITERIA side by side."""
    return {c: convergence(hs, c) for c in CRITERIA}


@dataclass
class InputDependence:
    mean_distance: float          # mean relative distance between the final states of different inputs
    nearby_distance: float        # same, for pairs that differ in one token
    distinct_fixed_points: int    # final states that differ by more than tol_distinct (relative)
    n_inputs: int


def _relative_distance(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    a, b = a.flatten(1), b.flatten(1)
    return (a - b).norm(dim=1) / (0.5 * (a.norm(dim=1) + b.norm(dim=1))).clamp(min=1e-12)


@torch.no_grad()
def input_dependence(model, tokens: torch.Tensor, T: int, vocab: int, tol_distinct: float = 1e-2,
                     seed: int = 0) -> InputDependence:
    """Final states after T loops for `tokens`, for a shuffled pairing of them, and for a copy with one
    random non-BOS token changed per input. `vocab`: the number of input SYMBOLS (task.n_symbols, BOS
    excluded), so a changed token is always another symbol."""
    g = torch.Generator().manual_seed(seed)
    h = states(model, tokens, T)[-1]
    perm = torch.randperm(len(tokens), generator=g)
    mean_d = float(_relative_distance(h, h[perm])[perm != torch.arange(len(tokens))].mean())
    near = tokens.clone()
    pos = torch.randint(1, tokens.shape[1], (len(tokens),), generator=g)
    shift = torch.randint(1, vocab, (len(tokens),), generator=g)
    near[torch.arange(len(tokens)), pos] = (near[torch.arange(len(tokens)), pos] + shift) % vocab
    h_near = states(model, near, T)[-1]
    near_d = float(_relative_distance(h, h_near).mean())
    # greedy clustering of final states: a new fixed point when farther than tol from every kept one
    kept = []
    for x in h.flatten(1):
        if not any(float((x - k).norm() / k.norm().clamp(min=1e-12)) <= tol_distinct for k in kept):
            kept.append(x)
    return InputDependence(mean_d, near_d, len(kept), len(tokens))


def spectral_radius(f, h: torch.Tensor, iters: int = 60, seed: int = 0) -> float:
    """rho(J) of J = df/dh at h by Gelfand's formula on Jacobian-vector products: with u_0 random,
    u_{k+1} = J u_k / ||J u_k||, rho ~ exp(mean of log ||J u_k|| over the second half of the iterations)."""
    g = torch.Generator().manual_seed(seed)
    u = torch.randn(h.shape, generator=g, dtype=h.dtype)
    u = u / u.norm()
    logs = []
    for _ in range(iters):
        ju = jvp(f, (h,), (u,))[1].detach()
        norm = ju.norm()
        if not torch.isfinite(norm) or norm == 0:
            return float(norm)
        logs.append(math.log(float(norm)))
        u = ju / norm
    tail = logs[len(logs) // 2:]
    return float(math.exp(sum(tail) / len(tail)))


def step_map(model, e: torch.Tensor):
    """G_e(h) = one loop of the tied `model` with input embedding e."""
    if not getattr(model, "tied", True):
        raise ValueError("model: fixed points are of the tied step map G(h) = F(h, e); got an untied model")
    return lambda h: model.step(h, e)


def jacobian_spectral_radius(model, tokens: torch.Tensor, T: int, iters: int = 60, seed: int = 0) -> np.ndarray:
    """Per input: rho of dG/dh at the state after T loops (each input's state is its own map)."""
    hs = states(model, tokens, T)[-1]
    with torch.no_grad():
        e = model.embed_tokens(tokens)
    return np.array([spectral_radius(step_map(model, e[b:b + 1]), hs[b:b + 1], iters, seed + b)
                     for b in range(len(tokens))])


def gradient_norms(model, tokens: torch.Tensor, labels: torch.Tensor, Ts) -> dict:
    """||dL/dtheta|| for the loss after T loops, for each T in Ts (stable backprop: no blow-up with T)."""
    out = {}
    for T in Ts:
        model.zero_grad(set_to_none=True)
        logits = model(tokens, T)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=IGNORE)
        loss.backward()
        out[T] = float(torch.sqrt(sum((p.grad ** 2).sum() for p in model.parameters() if p.grad is not None)))
    model.zero_grad(set_to_none=True)
    return out


def summary(run, test_ns, long_factor: int = 4, eval_count: int = 512) -> dict:
    """All three axes for one trained run, read on its own test inputs (length n_train), with the
    loops run long (long_factor * T_train): reachability and input-dependence over 128 inputs, the
    median Jacobian spectral radius over 8, gradient norms through T, 2T and 4T loops over 64, and
    extrapolation (best whole-word accuracy over up to 1.5 * max(n, T_train) loops at each test n)."""
    c = run.config
    task = c.task_obj()
    tokens, labels = test_set(task, c.n_train, eval_count, seed=7000 + c.seed)
    T_long = long_factor * c.T_train
    hs = states(run.model, tokens[:128], T_long)
    return dict(
        seed=c.seed, in_acc=run.metrics["final_eval"]["seq_acc"], reach=reachability(hs),
        dep=input_dependence(run.model, tokens[:128], T_long, vocab=task.n_symbols),
        rho=float(np.median(jacobian_spectral_radius(run.model, tokens[:8], T_long, iters=40))),
        grads=gradient_norms(run.model, tokens[:64], labels[:64], (c.T_train, 2 * c.T_train, 4 * c.T_train)),
        extrap={n: float(accuracy_by_loops(run.model, task, n, int(1.5 * max(n, c.T_train)), count=eval_count,
                                           seed=4000 + n).seq_acc.max()) for n in test_ns})
