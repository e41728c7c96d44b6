"""Activation patching at (position, loop) and damage cones (Paper A §5, causal validation of tau).

Patch: after loop t, the state of position j is replaced by a donor input's state at the same
(position, loop), or mixed with strength alpha: h <- (1 - alpha) h + alpha h_donor. The run then
continues. The damage map of a patch records, at every later (loop t', position i):
- flip: the fraction of inputs whose decoded output differs from the clean run's, and
- dprob: the mean change of the probability the model gives the correct token (negative = damage).

Damage cone: for a patch at (j, t), the damage ARRIVES at position i >= j at the first loop t' >= t
where flip >= `threshold`. On a serial frontier moving v positions per loop, arrival delay grows
like (i - j) / v. The cone slope is fitted like tau: least squares of the delay (t' - t) against the
offset (i - j) pooled over patches and positions, v_cone = 1 / slope.

Every patch of a grid runs in ONE batched forward pass: the clean inputs are repeated once per
(position, loop) of the grid and a hook swaps in the donor state where each copy's patch is due.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from scipy import stats


@dataclass
class DamageCones:
    grid: list                   # [(j, t)]: patched word position (1-indexed) and loop (1-indexed)
    flip: np.ndarray             # (P, T, n) fraction of inputs whose argmax changed
    dprob: np.ndarray            # (P, T, n) mean change of p(correct token)
    threshold: float
    alpha: float
    v_cone: float                # positions per loop from the pooled arrival fit
    slope: float                 # loops per position
    r2: float
    n_points: int                # (patch, position) pairs where damage arrived

    def arrival(self, p: int) -> np.ndarray:
        """(n,) first loop (1-indexed) at which damage from patch p reaches each position; nan if never."""
        j, t = self.grid[p]
        hit = self.flip[p] >= self.threshold
        out = np.full(hit.shape[1], np.nan)
        for i in range(j - 1, hit.shape[1]):
            loops = np.nonzero(hit[t - 1:, i])[0]
            if len(loops):
                out[i] = t + loops[0]
        return out


@torch.no_grad()
def damage_cones(model, tokens: torch.Tensor, labels: torch.Tensor, donor_tokens: torch.Tensor, T: int,
                 positions=None, loops=None, alpha: float = 1.0, threshold: float = 0.5,
                 streaming: bool = False) -> DamageCones:
    """Patch every (position j, loop t) of the grid and measure the damage; see module docstring.

    tokens, donor_tokens: (B, N) with BOS at 0; labels (B, N) with IGNORE at 0.
    """
    if not 0 < alpha <= 1:
        raise ValueError(f"alpha: patch strength must be in (0, 1], got {alpha}")
    if tokens.shape != donor_tokens.shape:
        raise ValueError(f"donor_tokens: shape {tuple(donor_tokens.shape)} must equal tokens' {tuple(tokens.shape)}")
    B, N = tokens.shape
    n = N - 1
    positions = list(range(1, n + 1)) if positions is None else list(positions)
    loops = list(range(1, T + 1)) if loops is None else list(loops)
    grid = [(j, t) for j in positions for t in loops]
    P = len(grid)

    clean_logits = model(tokens, T, all_loops=True, streaming=streaming)        # (T, B, N, C)
    _, donor_states = model(donor_tokens, T, return_states=True, streaming=streaming)

    # masks[t-1]: (P*B, N) where copy (p, b) is patched after loop t
    masks = torch.zeros(T, P, B, N, dtype=torch.bool)
    for p, (j, t) in enumerate(grid):
        masks[t - 1, p, :, j] = True
    masks = masks.reshape(T, P * B, N, 1)

    def hook(t, h):
        if not masks[t - 1].any():
            return h
        donor = donor_states[t - 1].repeat(P, 1, 1)
        return torch.where(masks[t - 1], (1 - alpha) * h + alpha * donor, h)

    patched = model(tokens.repeat(P, 1), T, all_loops=True, streaming=streaming, hook=hook)   # (T, P*B, N, C)
    patched = patched.reshape(T, P, B, N, -1)[..., 1:, :]
    clean = clean_logits[:, None, :, 1:, :]
    flip = (patched.argmax(-1) != clean.argmax(-1)).float().mean(2)               # (T, P, n)
    y = labels[:, 1:]
    idx = y[None, None, :, :, None].expand(T, P, B, n, 1)
    p_patched = patched.softmax(-1).gather(-1, idx)[..., 0]
    p_clean = clean.softmax(-1).expand_as(patched).gather(-1, idx)[..., 0]
    dprob = (p_patched - p_clean).mean(2)
    flip, dprob = flip.permute(1, 0, 2).numpy(), dprob.permute(1, 0, 2).numpy()

    cones = DamageCones(grid, flip, dprob, threshold, alpha, float("nan"), float("nan"), float("nan"), 0)
    offsets, delays = [], []
    for p, (j, t) in enumerate(grid):
        arr = cones.arrival(p)
        for i in range(j - 1, n):
            if np.isfinite(arr[i]):
                offsets.append(i + 1 - j)
                delays.append(arr[i] - t)
    cones.n_points = len(offsets)
    if len(set(offsets)) >= 2 and np.ptp(delays) > 0:
        fit = stats.linregress(offsets, delays)
        cones.slope, cones.r2 = float(fit.slope), float(fit.rvalue ** 2)
        cones.v_cone = 1.0 / fit.slope if fit.slope > 0 else float("inf")
    elif len(set(offsets)) >= 2:
        cones.slope, cones.v_cone = 0.0, float("inf")     # damage everywhere at once: no frontier
    return cones
