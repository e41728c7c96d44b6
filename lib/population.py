"""Population training: P seeds of one configuration trained as one batched program.

Small models leave a CPU (or GPU) mostly idle between kernel launches; stacking P seeds' weights
along a leading axis turns P small matrix products into one batched product (`baddbmm`) and P
attention calls into one. There is no second model and no second training loop here: the
population is a `LoopedTransformer` with a population axis (`LoopedTransformer.stack`), run by the
model's own forward pass, and every step is `step.train_step`, the step a single run takes. What
is population-specific lives in this file: the per-seed optimiser (`StackedAdamW`), the loop over
steps with its checkpoint, and `supports`.

Each seed keeps everything of its own: initial weights (built by `LoopedTransformer` under its
seed, then stacked), data stream (`step.draw_batch` on its own generator), curriculum, gradient
clipping, AdamW moments and step count, learning-rate schedule, loop count and stopping point. A
seed that has finished is frozen (no update at all) while the others go on. Per seed the result
equals training it alone up to floating-point reassociation (tests/test_population.py checks the
closeness).

Seeds whose curricula are at different lengths share a batch: shorter words are padded at the end
with ignored labels (causal attention keeps padding invisible to the real positions), and a seed
whose schedule gives it fewer loops keeps its state after its own last loop (`forward` with one T
per seed).
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import torch

from .model import LoopedTransformer
from .config import RunConfig
from .paths import atomic_write
from .step import draw_batch, train_step
from .train import RunProgress, decays, evaluate, resource


class StackedAdamW:
    """AdamW over stacked parameters with a per-seed learning rate, step count and weight decay
    mask; a seed whose learning rate is 0 is not touched at all (frozen, no decay, no moments)."""

    def __init__(self, params, decay_mask: list[bool], betas=(0.9, 0.98), eps=1e-8, weight_decay=0.01):
        self.params, self.decay_mask = list(params), decay_mask
        self.b1, self.b2, self.eps, self.wd = betas[0], betas[1], eps, weight_decay
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]
        self.steps = torch.zeros(self.params[0].shape[0], device=self.params[0].device)

    @torch.no_grad()
    def step(self, lr: torch.Tensor) -> None:
        active = lr > 0
        self.steps += active.float()
        bc1 = 1 - self.b1 ** self.steps.clamp(min=1)
        bc2 = 1 - self.b2 ** self.steps.clamp(min=1)
        for p, m, v, decay in zip(self.params, self.m, self.v, self.decay_mask):
            shape = (-1,) + (1,) * (p.dim() - 1)
            a = active.view(shape)
            g = p.grad
            m.copy_(torch.where(a, self.b1 * m + (1 - self.b1) * g, m))
            v.copy_(torch.where(a, self.b2 * v + (1 - self.b2) * g * g, v))
            if decay:
                p.mul_(1 - (lr * self.wd).view(shape))
            denom = (v / bc2.view(shape)).sqrt() + self.eps
            p.sub_((lr / bc1).view(shape) * m / denom)


def _save_population(path: Path, it: int, seeds, model, opt, gens, runs) -> None:
    state = {"iteration": it, "seeds": seeds, "params": [w.detach() for w in model.parameters()], "m": opt.m,
             "v": opt.v, "opt_steps": opt.steps, "data_rng": [g.get_state() for g in gens],
             "runs": [r.state_dict() for r in runs], "torch_rng": torch.get_rng_state()}
    atomic_write(path, lambda tmp: torch.save(state, tmp))


def batchable(cfg: RunConfig) -> bool:
    """Whether seeds of `cfg` can share a step. Every model (untied, positional encodings, norm
    placements, outer norm, every injection, bidirectional attention) and every deterministic
    schedule can; not batched are
      - progressive loss, whose loops without and with gradient each seed draws every step (train_step
        refuses it for a population);
      - loop counts each seed draws at random every step ("log", T_jitter > 1): they would batch
        exactly (one T per seed), but every seed would run the largest draw of the step, which
        costs more than the population gains (the CPU speed-up is about 1x at one thread);
      - bidirectional attention with lengths that can differ between seeds (a curriculum below
        n_train, or uniform lengths): every position would see the padding."""
    return (cfg.schedule != "log" and cfg.T_jitter == 1 and cfg.loss_loops != "progressive"
            and (cfg.causal or (cfg.lengths == "max" and cfg.curriculum_start >= cfg.n_train)))


def supports(cfg: RunConfig) -> bool:
    """Whether the store trains missing seeds of `cfg` as one population: `batchable`, and not a warm
    start (the store does not hand a group the parent's weights; `train_population` takes them as
    `init_state`)."""
    return batchable(cfg) and not cfg.init_from


def train_population(cfgs: list[RunConfig], progress: bool = False, device: str = "cpu", workdir=None,
                     init_state: dict | None = None):
    """Train configs that differ only in `seed` as one program. Returns [(model, metrics)] per seed.

    workdir: where `population.pt` is checkpointed every `checkpoint_every` steps; a population
    interrupted at any moment resumes from it to the same weights (the file names its seeds, and a
    checkpoint of another seed list is ignored). init_state: the parent's weights of a warm start
    (every seed starts from them, as `train` does). A non-finite loss raises `step.Diverged`
    naming the seed."""
    base = replace(cfgs[0], seed=0)
    if any(replace(c, seed=0) != base for c in cfgs):
        raise ValueError("cfgs: a population must share every field but `seed`")
    if not batchable(base):
        raise ValueError("schedule/T_jitter/causal: population training needs loop counts that are not drawn at "
                         "random per seed and one length for all seeds under bidirectional attention; allowed: "
                         "schedule 'fixed', 'streaming' or 'proportional' with T_jitter=1, and causal=True or "
                         "lengths 'max' with curriculum_start >= n_train")
    if bool(base.init_from) != (init_state is not None):
        raise ValueError(f"init_state: given exactly for a warm start (init_from={base.init_from!r})")
    P = len(cfgs)
    device = torch.device(device)
    task = base.task_obj()
    singles = []
    for c in cfgs:                                   # initial weights exactly as a single run makes them
        torch.manual_seed(c.seed)
        singles.append(LoopedTransformer(c.model_config()))
        if init_state is not None:
            singles[-1].load_state_dict(init_state)
    model = LoopedTransformer.stack(singles).to(device)
    model.train()
    decay = [decays(n, p) for n, p in singles[0].named_parameters()]
    opt = StackedAdamW(model.parameters(), decay, weight_decay=base.weight_decay)
    gens = [torch.Generator().manual_seed(c.seed) for c in cfgs]
    runs = [RunProgress(c) for c in cfgs]           # per-seed curriculum, polishing, stopping and log
    for r in runs:                                   # each seed's clock reads the whole program's time
        r.resource = resource(device)
    seeds = [c.seed for c in cfgs]
    ckpt = Path(workdir) / "population.pt" if workdir is not None else None
    it = 0
    if ckpt is not None and ckpt.exists():
        state = torch.load(ckpt, weights_only=True, map_location="cpu")   # RNG states must stay on the CPU
        if state["seeds"] == seeds:
            it = state["iteration"]
            with torch.no_grad():
                for w, saved in zip(model.parameters(), state["params"]):
                    w.copy_(saved)
            for mine, saved in zip(opt.m + opt.v, state["m"] + state["v"]):
                mine.copy_(saved)
            opt.steps.copy_(state["opt_steps"])
            for g, gs in zip(gens, state["data_rng"]):
                g.set_state(gs)
            for r, rs in zip(runs, state["runs"]):
                r.load_state_dict(rs)
            torch.set_rng_state(state["torch_rng"])
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=base.max_steps, desc=f"population of {P}", leave=False, mininterval=2.0)
        bar.update(it)
    while not all(r.finished for r in runs):
        batches = [draw_batch(c, r, task, g) for c, r, g in zip(cfgs, runs, gens)]
        train_step(model, opt, runs, batches, checkpoint=ckpt)
        it += 1
        if bar is not None:
            bar.update(1)
        if ckpt is not None and it % base.checkpoint_every == 0:
            _save_population(ckpt, it, seeds, model, opt, gens, runs)
    if bar is not None:
        bar.close()
    out = []
    for p, (c, r) in enumerate(zip(cfgs, runs)):
        m = LoopedTransformer(c.model_config())
        m.load_state_dict({k: v.cpu() for k, v in model.unstack(p).items()})
        m.eval()
        metrics = r.metrics(m, evaluate(m, task, c.n_train, c.T_train, c.eval_count, c.seed, c.streaming))
        out.append((m, {**metrics, "population": P}))
    return out
