"""One training step, and the data it reads.

A run's data stream is `draw_batch` on the run's own generator: a length (from the curriculum), words of
that length, and the loops the schedule gives them (`loops_for`). `train_step` is the one training
step: `train.train` takes it for one run, population training (`population.py`) for P seeds at once on
the model's population axis. It reads, in order: the loss of each seed (`_forward_losses`), a finite
check (`_check_finite`), the update (`_update`: backward, gradient clipping, optimiser step at each
seed's learning rate), and each run's bookkeeping on the batch's last position (`_book`).
"""
from __future__ import annotations

import contextlib
import math
from pathlib import Path
from typing import NamedTuple

import torch
import torch.nn.functional as F

from . import tasks as tasks_mod
from .config import RunConfig, loops_at_length
from .curriculum import draw_length
from .model import LoopedTransformer


class Diverged(FloatingPointError):
    """The loss became NaN or inf: training stops at once and says where it can restart from.
    seed: in population training, the seed whose loss it was (None for a single run)."""

    def __init__(self, step: int, loss: float, last_finite_loss: float, checkpoint: Path | None,
                 seed: int | None = None):
        self.step, self.loss, self.last_finite_loss, self.checkpoint = step, loss, last_finite_loss, checkpoint
        self.seed = seed
        where = f"last good checkpoint: {checkpoint}" if checkpoint else "no checkpoint written yet"
        who = "" if seed is None else f"seed {seed}: "
        super().__init__(f"training diverged: {who}loss {loss} at step {step} (last finite loss {last_finite_loss:.4g}); "
                         f"{where}")


def loops_for(cfg: RunConfig, n: int, generator: torch.Generator) -> tuple[int, int]:
    """The loop schedule for a batch of length n: (T_min, T). T_min is the schedule's count (the
    contract's budget at this length); T is what the batch runs, drawn in [T_min, ceil(T_jitter T_min)]
    when the budget jitters, else T_min. Configs without jitter draw nothing from `generator`, so
    the data stream of every run trained before the jitter existed is unchanged."""
    if cfg.schedule == "fixed":
        T_min = cfg.T_train
    elif cfg.schedule == "streaming":
        T_min = n + 2
    elif cfg.schedule == "proportional":
        T_min = loops_at_length(n, cfg.n_train, cfg.T_train)
    else:
        base = math.ceil(math.log2(max(n, 2))) + 3
        T_min = max(1, base + int(torch.randint(-1, 2, (1,), generator=generator)))
    if cfg.T_jitter == 1:
        return T_min, T_min
    T_max = math.ceil(cfg.T_jitter * T_min - 1e-9)
    return T_min, T_min + int(torch.randint(0, T_max - T_min + 1, (1,), generator=generator))


def loop_loss(logits: torch.Tensor, labels: torch.Tensor, T_min: int, loss_loops: str) -> torch.Tensor:
    """Cross-entropy of the logits after the final loop ((B, N, C)), or, for loss_loops="tail", the mean
    over the loops T_min..T of logits stacked over every loop ((T, B, N, C))."""
    if loss_loops == "tail":
        logits = logits[T_min - 1:]
        labels = labels.expand(logits.shape[0], *labels.shape)
    return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=tasks_mod.IGNORE)


def autocast(device: torch.device):
    """bf16 autocast on a GPU (matmuls and attention in bf16, reductions in fp32); plain fp32 on CPU."""
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


class Batch(NamedTuple):
    """One run's training batch: words of length n (tokens and labels (B, n + 1), BOS included) and
    the loops the schedule gives them (T_min the schedule's count, T what the batch runs). Progressive
    loss only: `free` loops run without gradient, then `k` with it (free + k <= T)."""
    n: int
    tokens: torch.Tensor
    labels: torch.Tensor
    T_min: int
    T: int
    free: int = 0
    k: int = 0


def draw_batch(cfg: RunConfig, run, task: tasks_mod.Task, generator: torch.Generator) -> Batch:
    """The next batch of a run's data stream (run: its `train.RunProgress`): its length, words and loop counts, drawn from `generator`
    in this order (the order every stored run was trained with)."""
    n = draw_length(cfg.lengths, run.curriculum.length, generator, min_len=cfg.curriculum_start)
    tokens, labels = task.sample(cfg.batch, n, generator)
    T_min, T = loops_for(cfg, n, generator)
    if cfg.loss_loops != "progressive":          # nothing more drawn: every other run's stream is unchanged
        return Batch(n, tokens, labels, T_min, T)
    free = int(torch.randint(0, T, (1,), generator=generator))
    k = int(torch.randint(1, T - free + 1, (1,), generator=generator))
    return Batch(n, tokens, labels, T_min, T, free, k)


def progressive_logits(forward, tokens: torch.Tensor, b: Batch):
    """deep-thinking's progressive step: b.free loops without gradient (the state detached), then b.k
    loops with gradient from there. Returns (logits after free + k loops, the state there)."""
    h0 = None
    if b.free:
        with torch.no_grad():
            h0 = forward(tokens, b.free, return_states=True)[1][-1]
    logits, states = forward(tokens, b.k, return_states=True, h0=h0)
    return logits, states[-1]


def stack_inputs(batches: list[Batch], population: int | None, causal: bool, device: torch.device):
    """The model's input: one batch as it is, or P batches stacked (P, B, N) with shorter words padded
    at the end (token 0, ignored labels); causal attention keeps the padding invisible to real positions."""
    if population is None:
        (b,) = batches
        return b.tokens.to(device, non_blocking=True), b.labels.to(device, non_blocking=True)
    N = max(b.tokens.shape[1] for b in batches)
    if not causal and any(b.tokens.shape[1] != N for b in batches):
        raise ValueError("lengths: bidirectional attention would see the padding; a population with causal=False "
                         "needs one length for all seeds")
    tokens = torch.stack([F.pad(b.tokens, (0, N - b.tokens.shape[1]), value=0) for b in batches])
    labels = torch.stack([F.pad(b.labels, (0, N - b.labels.shape[1]), value=tasks_mod.IGNORE) for b in batches])
    return tokens.to(device, non_blocking=True), labels.to(device, non_blocking=True)


def clip_per_seed(params, max_norm: float) -> None:
    """clip_grad_norm_ for each seed of stacked parameters (leading population axis) on its own."""
    params = [p for p in params if p.grad is not None]
    norms = torch.sqrt(sum(p.grad.pow(2).flatten(1).sum(1) for p in params))
    scale = (max_norm / (norms + 1e-6)).clamp(max=1.0)
    for p in params:
        p.grad.mul_(scale.view((-1,) + (1,) * (p.dim() - 1)))


def train_step(model: LoopedTransformer, opt, runs: list, batches: list[Batch], forward=None,
               checkpoint: Path | None = None) -> list[float | None]:
    """THE training step, of a single run or of a population of seeds of one config.

    Single run: `model` without population axis, `opt` a torch optimiser, one run (`train.RunProgress`)
    and one batch. Population: `model` from `LoopedTransformer.stack` (P seeds), `opt` a per-seed
    optimiser (`population.StackedAdamW`: step(lr) with one learning rate per seed), one RunProgress and
    one batch per seed; a finished seed is frozen (learning rate 0, no check, no bookkeeping).
    forward: e.g. the compiled model (default `model`). Returns each seed's loss (None for a finished seed)."""
    forward = model if forward is None else forward
    P = model.population
    cfg = runs[0].cfg
    active = [not r.finished for r in runs]
    lrs = [r.lr() if is_active else 0.0 for r, is_active in zip(runs, active)]
    device = next(model.parameters()).device
    tokens, labels = stack_inputs(batches, P, cfg.causal, device)
    with autocast(device):
        losses, finals = _forward_losses(forward, tokens, labels, batches, cfg, P)
    _check_finite(runs, losses, active, checkpoint, P)
    _update(model, opt, losses, lrs, cfg.clip, P, device)
    return _book(runs, batches, losses, finals, labels, active, P)


def _seed(x: torch.Tensor, i: int, population: int | None) -> torch.Tensor:
    return x if population is None else x[i]


def _forward_losses(forward, tokens, labels, batches: list[Batch], cfg: RunConfig, P: int | None):
    """Each seed's loss (`loop_loss`) and the logits its bookkeeping reads (after the batch's own last
    loop; for the progressive loss, the batch's full T loops, run before the update)."""
    tail = cfg.loss_loops == "tail"
    if cfg.loss_loops == "progressive":
        if P is not None:
            raise ValueError("loss_loops: 'progressive' draws its loops per seed and step; train its seeds one by one")
        batch, alpha = batches[0], cfg.progressive_alpha
        logits, h = progressive_logits(forward, tokens, batch)
        loss = alpha * loop_loss(logits, labels, batch.T_min, "final")
        if alpha < 1:
            full = forward(tokens, batch.T)
            loss = loss + (1 - alpha) * loop_loss(full, labels, batch.T_min, "final")
        elif batch.free + batch.k < batch.T:
            with torch.no_grad():
                full = forward(tokens, batch.T - batch.free - batch.k, h0=h.detach())
        else:
            full = logits
        return [loss], [full]
    seed_T = [b.T for b in batches]
    logits = forward(tokens, seed_T[0] if P is None else seed_T, streaming=cfg.streaming, all_loops=tail)
    # a population's tail logits run to the largest T; seed i's own loops are the first T_i
    own = [_seed(logits, i, P) if P is None or not tail else logits[i, :b.T] for i, b in enumerate(batches)]
    losses = [loop_loss(own[i], _seed(labels, i, P), b.T_min, cfg.loss_loops) for i, b in enumerate(batches)]
    finals = [_seed(logits, i, P)[b.T - 1] if tail else _seed(logits, i, P) for i, b in enumerate(batches)]
    return losses, finals


def _check_finite(runs: list, losses: list, active: list[bool], checkpoint: Path | None, P: int | None) -> None:
    """A non-finite loss of an active seed stops training (`Diverged`, naming the seed in a population)."""
    for run, loss, is_active in zip(runs, losses, active):
        if not is_active:
            continue
        if not torch.isfinite(loss):
            raise Diverged(run.step, loss.item(), run.last_finite_loss,
                           checkpoint if checkpoint is not None and checkpoint.exists() else None,
                           seed=None if P is None else run.cfg.seed)
        run.last_finite_loss = loss.item()


def _update(model: LoopedTransformer, opt, losses: list, lrs: list[float], clip: float, P: int | None, device) -> None:
    """Backward (a population's seeds own disjoint slices: the sum's gradient is each seed's own),
    gradient clipping (per seed in a population), the optimiser step at each seed's learning rate."""
    model.zero_grad(set_to_none=True)
    (losses[0] if P is None else torch.stack(losses).sum()).backward()
    if P is None:
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for g in opt.param_groups:
            g["lr"] = lrs[0]
        opt.step()
    else:
        clip_per_seed(model.parameters(), clip)
        opt.step(torch.tensor(lrs, device=device))


@torch.no_grad()
def _book(runs: list, batches: list[Batch], losses: list, finals: list, labels, active: list[bool],
          P: int | None) -> list[float | None]:
    """Each active run books its step (`RunProgress.after_step`) with its loss and its accuracy at the
    batch's last position (padding lies beyond it)."""
    out = []
    for i, (run, batch, loss, final, is_active) in enumerate(zip(runs, batches, losses, finals, active)):
        if not is_active:
            out.append(None)
            continue
        last = batch.tokens.shape[1] - 1
        acc = (final[:, last].argmax(-1) == _seed(labels, i, P)[:, last]).float().mean().item()
        out.append(loss.item())
        run.after_step(out[-1], acc, batch.n)
    return out
