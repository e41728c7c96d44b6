"""Fixed-point stability along Paper B's three axes: reachability, input-dependence, geometry.

A looped model iterates G_e(h) = F(inject(h, e)) from h^0 = e. A fixed point is h* = G_e(h*).
- Reachability: does the iteration get there? The relative step r_t = ||h^{t+1} - h^t|| / ||h^t||
  per input (`tail.relative_step`); the loop from which r_t <= tol for good, `convergence(hs, "raw")`.
- Input-dependence: do different inputs reach different fixed points? Distances between the final
  states of different inputs (relative to their norms), of nearby inputs (one token changed), and
  the number of distinct fixed points (final states that agree within `tol_distinct` are one).
  Without recall the input enters only as h^0, so many inputs can fall into the same few attractors.
- Geometry: the spectral radius rho of the Jacobian dG/dh at the final state, from Jacobian-vector
  products only (Gelfand's formula rho = lim ||J^k u||^(1/k), which also converges when the top
  eigenvalues are a complex pair), and the gradient norm of the loss through T loops.
  rho < 1: a locally attracting fixed point, stable backpropagation through many loops; rho > 1:
  repelling, and gradients through long unrolls grow.

A grid of configurations reads these per run (Paper B's, notebook 09). Its longest scan,
extrapolation, is read by `best_accuracy_by_length`: exactly the best loop of
`extrapolation.accuracy_by_length`, by exact shortcuts (see "the long scan, read faster" below).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from ..probes import probe_seed
from ..tasks import IGNORE, test_set
from .extrapolation import scan_loops
from .head import accuracy_by_loops, loop_predictions, settled_from
from .tail import jvp, relative_step
from . import chunks


@torch.no_grad()
def states(model, tokens: torch.Tensor, T: int) -> torch.Tensor:
    """(T, B, N, d): h^1..h^T."""
    return model(tokens, T, return_states=True)[1]


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
    if criterion == "cosine":
        return 1 - F.cosine_similarity(hs[:-1].flatten(2), hs[1:].flatten(2), dim=2)
    return relative_step(hs)


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


def distinct_states(h: torch.Tensor, tol_distinct: float = 1e-2) -> int:
    """Greedy clustering of the states h (B, ...), in order: a state starts a new fixed point when its
    distance to every kept one, relative to the kept one's norm, exceeds tol_distinct. The distances
    come from one vectorised pass; the few within a hair of tol_distinct are recomputed as the scalar
    definition has them (`_distinct_states_by_definition`), so the count is that definition's."""
    x = h.flatten(1)
    norm = x.norm(dim=1).clamp(min=1e-12)
    d = torch.stack([(x - x[j]).norm(dim=1) / norm[j] for j in range(len(x))], 1).double()   # d[i, j]: i to j
    close = (d <= tol_distinct).numpy()
    for i, j in torch.nonzero((d - tol_distinct).abs() <= 1e-3 * tol_distinct).tolist():     # at the threshold
        close[i, j] = float((x[i] - x[j]).norm() / x[j].norm().clamp(min=1e-12)) <= tol_distinct
    kept: list[int] = []
    for i in range(len(x)):
        if not close[i, kept].any():
            kept.append(i)
    return len(kept)


def _distinct_states_by_definition(h: torch.Tensor, tol_distinct: float = 1e-2) -> int:
    """The scalar definition `distinct_states` reproduces (its test's reference)."""
    kept = []
    for x in h.flatten(1):
        if not any(float((x - k).norm() / k.norm().clamp(min=1e-12)) <= tol_distinct for k in kept):
            kept.append(x)
    return len(kept)


@torch.no_grad()
def input_dependence(model, tokens: torch.Tensor, T: int, vocab: int, tol_distinct: float = 1e-2,
                     seed: int = 0, final: torch.Tensor | None = None) -> InputDependence:
    """Final states after T loops for `tokens`, for a shuffled pairing of them, and for a copy with one
    random non-BOS token changed per input. `vocab`: the number of input SYMBOLS (task.n_symbols, BOS
    excluded), so a changed token is always another symbol. `final`: the states after T loops for
    `tokens` when the caller already has them (`states(model, tokens, T)[-1]`), not run again."""
    g = torch.Generator().manual_seed(seed)
    h = states(model, tokens, T)[-1] if final is None else final
    perm = torch.randperm(len(tokens), generator=g)
    mean_d = float(_relative_distance(h, h[perm])[perm != torch.arange(len(tokens))].mean())
    near = tokens.clone()
    pos = torch.randint(1, tokens.shape[1], (len(tokens),), generator=g)
    shift = torch.randint(1, vocab, (len(tokens),), generator=g)
    near[torch.arange(len(tokens)), pos] = (near[torch.arange(len(tokens)), pos] + shift) % vocab
    h_near = states(model, near, T)[-1]
    near_d = float(_relative_distance(h, h_near).mean())
    # greedy clustering of final states: a new fixed point when farther than tol from every kept one
    return InputDependence(mean_d, near_d, distinct_states(h, tol_distinct), len(tokens))


def spectral_radii(f, h: torch.Tensor, iters: int = 60, seeds=None) -> np.ndarray:
    """(B,) rho(J_b) of J_b = d f(h)_b / d h_b for each input b of h (B, ...), for an f that maps every
    input on its own (inputs never mix), by Gelfand's formula on Jacobian-vector products, all inputs
    in one pass per iteration: u_0 random (input b's drawn from seed seeds[b], default b),
    u_{k+1} = J u_k / ||J u_k||, rho ~ exp(mean of log ||J u_k|| over the second half of the
    iterations). An input whose ||J u_k|| is 0 or not finite reads that value."""
    seeds = range(len(h)) if seeds is None else list(seeds)
    if len(seeds) != len(h):
        raise ValueError(f"seeds: one per input, {len(h)}, got {len(seeds)}")
    u = torch.cat([torch.randn((1, *h.shape[1:]), generator=torch.Generator().manual_seed(s), dtype=h.dtype)
                   for s in seeds])
    per_input = (-1,) + (1,) * (h.dim() - 1)
    u = u / u.flatten(1).norm(dim=1).view(per_input)
    logs = torch.zeros(iters, len(h), dtype=torch.float64)
    stopped: dict[int, float] = {}
    for k in range(iters):
        ju = jvp(f, (h,), (u,))[1].detach()
        norm = ju.flatten(1).norm(dim=1)
        ok = torch.isfinite(norm) & (norm > 0)
        for b in torch.nonzero(~ok).flatten().tolist():
            stopped.setdefault(b, float(norm[b]))
        logs[k] = torch.where(ok, norm, 1.0).double().log()
        u = torch.where(ok.view(per_input), ju / torch.where(ok, norm, 1.0).view(per_input), u)
    rho = logs[iters // 2:].mean(0).exp().numpy()
    for b, value in stopped.items():
        rho[b] = value
    return rho


def spectral_radius(f, h: torch.Tensor, iters: int = 60, seed: int = 0) -> float:
    """rho(J) of J = df/dh at h, all of h one vector (`spectral_radii` for a batch of one)."""
    return float(spectral_radii(lambda x: f(x.reshape(h.shape)).reshape(1, -1), h.reshape(1, -1), iters, [seed])[0])


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
    return spectral_radii(step_map(model, e), hs, iters, [seed + b for b in range(len(tokens))])


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


# --- the long scan, read faster ---------------------------------------------------------------------
# Most of 09's time is the extrapolation scan (512 words, up to 1.5 x 128 loops at n = 128, for every
# run). `best_accuracy_by_length` returns exactly the best loop of `extrapolation.accuracy_by_length`,
# by three exact shortcuts:
# - inputs run in chunks of about chunks.CHUNK_TOKENS positions, one loop at a time, each loop decoded as it
#   comes (no stack of every loop's states and logits): the same products on a working set that fits
#   the cache (about 1.5x faster on one CPU thread at n = 128). Each input is its own map, and the kernels give an input's rows the same bits in any
#   batch; `chunks.batch_independent` checks that on the run itself (one loop, whole batch against chunks
#   and a few inputs alone) and the reader falls back to the plain one where it does not hold;
# - causal models, whole-word accuracy: position i's state depends on positions <= i only, and a word
#   is right only if every prefix of it is. A cheap first pass on a prefix of every word finds the words
#   whose prefix is right at some loop, and the last such loop; the full words run only for those, only
#   that far (a word wrong at a loop adds nothing to that loop's accuracy). The prefix pass must give
#   the full run's bits on its positions: on this CPU the fused attention kernel gives them for
#   prefixes of a multiple of PREFIX_BLOCK tokens (it reduces a row in vector-width blocks; other
#   lengths differ in the last bits), and `_prefix_exact` checks it on the run itself (else no prefix pass);
# - the best loop needs only the loops that can beat the best so far: a loop where fewer prefixes are
#   right than the best loop's whole words cannot, and a word stops once none of its remaining loops can.
# Which prefixes to try (`_first_prefix`, `_next_prefix`) decides only the time, never the numbers.
PREFIX_BLOCK = 16


@torch.no_grad()
def _prefix_exact(model, tokens: torch.Tensor, length: int, loops: int = 2) -> bool:
    """Whether running the first `length` positions alone gives the full words' states there."""
    full = model(tokens[:2], loops, return_states=True)[1]
    return torch.equal(model(tokens[:2, :length], loops, return_states=True)[1], full[:, :, :length])


def _last_loop(ok: np.ndarray) -> np.ndarray:
    """ok (T, B) -> (B,) per input the number of loops up to its last True (0 where none)."""
    return np.where(ok.any(0), len(ok) - np.argmax(ok[::-1], 0), 0)


@torch.no_grad()
def _words_right(model, tokens: torch.Tensor, targets: torch.Tensor, loops: np.ndarray, T: int, per_chunk: int,
                 bound: np.ndarray | None = None) -> np.ndarray:
    """(T, B) bool: every target of input b right after loop t (targets (B, N-1): positions 1..N-1),
    input b run for loops[b] loops (False after). bound (T, B): inputs whose prefix is right at each
    loop (a word can be right only there); with it, the words stop once no remaining loop can beat
    the best loop so far (those loops may read low: they never hold the best)."""
    B = len(tokens)
    right = np.zeros((T, B), dtype=bool)
    loops = loops.copy()
    active = np.nonzero(loops > 0)[0]
    e = model.embed_tokens(tokens[active]) if len(active) else None
    h, tg, best = e, targets[active], -1
    U = None if bound is None else bound.sum(1)
    for t in range(T):
        keep = loops[active] > t
        if not keep.all():
            idx = torch.from_numpy(np.nonzero(keep)[0])
            active, h, e, tg = active[keep], h[idx], e[idx], tg[idx]
        if len(active) == 0:
            break
        h, logits = chunks.chunked(model, h, e, t, per_chunk)
        right[t, active] = (logits.argmax(-1)[:, 1:] == tg).all(1).numpy()
        if bound is not None and right[t].sum() > best:
            best = right[t].sum()
            can_beat = (U > best) & (np.arange(T) > t)
            loops = np.minimum(loops, np.maximum(_last_loop(bound & can_beat[:, None]), t + 1))
    return right


def _first_prefix(N: int, previous_best: float | None) -> int | None:
    """The prefix (tokens, BOS included) of the first pass for words of N tokens: about 3/8 of the word,
    a multiple of PREFIX_BLOCK; none for short words, or where the run solved half the words of the
    previous (shorter) test length (most prefixes would survive: the pass would cost, not save)."""
    if previous_best is not None and previous_best >= 0.5:
        return None
    length = PREFIX_BLOCK * round(3 * N / 8 / PREFIX_BLOCK)
    return length if PREFIX_BLOCK <= length <= N // 2 else None


def _next_prefix(length: int, N: int, surviving: float) -> int | None:
    """After a prefix pass whose survivors need `surviving` of the loop-inputs: a 1.5x longer prefix
    while few survive, else the full words."""
    if surviving >= 0.5:
        return None
    longer = PREFIX_BLOCK * math.ceil(1.5 * length / PREFIX_BLOCK)
    return longer if longer < N - PREFIX_BLOCK else None


@torch.no_grad()
def best_accuracy(model, tokens: torch.Tensor, labels: torch.Tensor, T: int, causal: bool,
                  previous_best: float | None = None) -> float:
    """The best whole-word accuracy over loops 1..T on (tokens, labels): exactly
    `head.accuracy_by_loops(...).seq_acc.max()` on the same set (see the section's comment)."""
    B, N = tokens.shape
    per_chunk = max(1, chunks.CHUNK_TOKENS // N)
    if not (chunks.fast_path(model) and chunks.batch_independent(model, tokens, per_chunk)):      # the plain reader
        return float((loop_predictions(model, tokens, T).numpy() == labels[:, 1:].numpy()[None]).all(2).mean(1).max())
    loops, bound = np.full(B, T), np.ones((T, B), dtype=bool)
    length = _first_prefix(N, previous_best) if causal else None
    while length is not None and _prefix_exact(model, tokens, length):
        bound = _words_right(model, tokens[:, :length], labels[:, 1:length], loops, T, max(1, chunks.CHUNK_TOKENS // length))
        loops = _last_loop(bound)
        if not loops.any():
            return 0.0
        length = _next_prefix(length, N, loops.sum() / (T * B))
    return float(_words_right(model, tokens, labels[:, 1:], loops, T, per_chunk, bound).mean(1).max())


def best_accuracy_by_length(run, test_ns, loops_factor: float, count: int) -> dict:
    """n -> best whole-word accuracy over loops 1..scan_loops(n) on the `extrapolation` probe set of
    length n: exactly `{n: float(acc.seq_acc.max()) for n, acc in accuracy_by_length(run, test_ns,
    loops_factor, count).items()}`, faster (`best_accuracy`)."""
    c = run.config
    out: dict = {}
    for n in test_ns:
        T = scan_loops(c, n, loops_factor)
        seed = probe_seed("extrapolation", n)
        if c.streaming:
            out[n] = float(accuracy_by_loops(run.model, c.task_obj(), n, T, count=count, seed=seed,
                                             streaming=True).seq_acc.max())
            continue
        tokens, labels = test_set(c.task_obj(), n, count, seed)
        shorter = [m for m in out if m < n]
        out[n] = best_accuracy(run.model, tokens, labels, T, c.causal, out[max(shorter)] if shorter else None)
    return out
