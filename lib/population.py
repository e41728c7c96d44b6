"""Population training: P seeds of one configuration trained as one batched program.

Small models leave a CPU (or GPU) mostly idle between kernel launches; stacking P seeds' weights
along a leading dimension turns P small matrix products into one batched product (`baddbmm`) and
P attention calls into one. Each seed keeps everything of its own: initial weights (built by
`LoopedTransformer` under its seed, then stacked), data stream, curriculum, gradient clipping,
AdamW moments and step count, learning-rate schedule and stopping point. A seed that has finished
is frozen (no update at all) while the others go on. Per seed the result equals training it alone
up to floating-point reassociation (tests/test_population.py checks the closeness).

Seeds whose curricula are at different lengths share a batch: shorter words are padded at the end
with ignored labels; causal attention keeps padding invisible to the real positions.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import torch
import torch.nn.functional as F

from . import tasks as tasks_mod
from .model import LoopedTransformer, reveal_loops
from .config import RunConfig
from .paths import atomic_write
from .train import RunProgress, autocast, decays, evaluate, loops_for


class StackedLoopedTransformer(torch.nn.Module):
    """P LoopedTransformers of one config with parameters stacked on a leading dimension."""

    def __init__(self, models: list[LoopedTransformer]):
        super().__init__()
        self.cfg = models[0].cfg
        self.P = len(models)
        self.names = [n for n, _ in models[0].named_parameters()]
        self.params = torch.nn.ParameterList(
            torch.nn.Parameter(torch.stack([dict(m.named_parameters())[n].detach() for m in models]).clone())
            for n in self.names)

    def p(self, name: str) -> torch.Tensor:
        return self.params[self.names.index(name)]

    def _linear(self, x, name, bias=True):          # x (P, M, in) -> (P, M, out)
        w = self.p(f"{name}.weight")
        if bias:
            return torch.baddbmm(self.p(f"{name}.bias").unsqueeze(1), x, w.transpose(1, 2))
        return torch.bmm(x, w.transpose(1, 2))

    def _norm(self, x, name):
        y = F.layer_norm(x, x.shape[-1:])
        return y * self.p(f"{name}.weight").unsqueeze(1) + self.p(f"{name}.bias").unsqueeze(1)

    def _layer(self, i, x, B, N):                   # x (P, B*N, d)
        P, d, H = self.P, self.cfg.d_model, self.cfg.n_heads
        q, k, v = self._linear(self._norm(x, f"block.{i}.ln_attn"), f"block.{i}.qkv") \
            .view(P * B, N, 3, H, d // H).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(P, B * N, d)
        x = x + self._linear(a, f"block.{i}.attn_out")
        h = F.gelu(self._linear(self._norm(x, f"block.{i}.ln_mlp"), f"block.{i}.mlp_in"))
        return x + self._linear(h, f"block.{i}.mlp_out")

    def forward(self, tokens: torch.Tensor, T: int, streaming: bool = False) -> torch.Tensor:
        """tokens (P, B, N) -> final-loop logits (P, B, N, C)."""
        P, B, N = tokens.shape
        e = self.p("embed.weight")[torch.arange(P, device=tokens.device)[:, None, None], tokens].reshape(P, B * N, -1)
        h = e
        start = reveal_loops(N, tokens.device).repeat(B)[None, :, None] if streaming else None
        for t in range(T):
            x = h
            if self.cfg.injection == "add":
                x = h + e
            elif self.cfg.injection == "adapter":
                x = self._linear(torch.cat([h, e], dim=-1), "adapter", bias=False)
            for i in range(self.cfg.n_layers):
                x = self._layer(i, x, B, N)
            h = torch.where(start > t, e, x) if streaming else x
        logits = self._linear(self._norm(h, "ln_out"), "readout")
        return logits.view(P, B, N, -1)

    def unstack(self, p: int) -> dict:
        return {n: w[p].detach().clone() for n, w in zip(self.names, self.params)}


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
    state = {"iteration": it, "seeds": seeds, "params": [w.detach() for w in model.params], "m": opt.m, "v": opt.v,
             "opt_steps": opt.steps, "data_rng": [g.get_state() for g in gens], "runs": [r.state_dict() for r in runs],
             "torch_rng": torch.get_rng_state()}
    atomic_write(path, lambda tmp: torch.save(state, tmp))


def supports(cfg: RunConfig) -> bool:
    """Population training covers the tied NoPE model with one loop count and one length per step;
    other configs (jittered schedule, uniform lengths, untied or positional controls, warm starts)
    train one by one."""
    return (cfg.schedule in ("fixed", "streaming") and cfg.T_jitter == 1 and cfg.loss_loops == "final"
            and cfg.lengths == "max" and cfg.tied and cfg.pos == "none" and cfg.causal
            and not cfg.init_from and cfg.norm == "pre" and not cfg.outer_norm and cfg.injection != "internal")


def train_population(cfgs: list[RunConfig], progress: bool = False, device: str = "cpu", workdir=None):
    """Train configs that differ only in `seed` as one program. Returns [(model, metrics)] per seed.

    workdir: where `population.pt` is checkpointed every `checkpoint_every` steps; a population
    interrupted at any moment resumes from it to the same weights (the file names its seeds, and a
    checkpoint of another seed list is ignored)."""
    base = replace(cfgs[0], seed=0)
    if any(replace(c, seed=0) != base for c in cfgs):
        raise ValueError("cfgs: a population must share every field but `seed`")
    if not supports(base):
        raise ValueError("schedule/lengths/tied/pos/init_from: population training needs one loop count and one length rule "
                         "per step for all seeds and the tied NoPE model from scratch; allowed: schedule 'fixed' or "
                         "'streaming', lengths 'max', tied=True, pos='none', init_from=''")
    P = len(cfgs)
    device = torch.device(device)
    task = base.task_obj()
    singles = []
    for c in cfgs:                                   # initial weights exactly as a single run makes them
        torch.manual_seed(c.seed)
        singles.append(LoopedTransformer(c.model_config()))
    model = StackedLoopedTransformer(singles).to(device)
    decay = [decays(n, p) for n, p in singles[0].named_parameters()]
    opt = StackedAdamW(model.params, decay, weight_decay=base.weight_decay)
    gens = [torch.Generator().manual_seed(c.seed) for c in cfgs]
    runs = [RunProgress(c) for c in cfgs]           # per-seed curriculum, polishing, stopping and log
    seeds = [c.seed for c in cfgs]
    ckpt = Path(workdir) / "population.pt" if workdir is not None else None
    it = 0
    if ckpt is not None and ckpt.exists():
        state = torch.load(ckpt, weights_only=True, map_location="cpu")   # RNG states must stay on the CPU
        if state["seeds"] == seeds:
            it = state["iteration"]
            with torch.no_grad():
                for w, saved in zip(model.params, state["params"]):
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
        batches = [task.sample(base.batch, r.curriculum.length, g) for r, g in zip(runs, gens)]
        N = max(t.shape[1] for t, _ in batches)
        tokens = torch.full((P, base.batch, N), task.bos, dtype=torch.long)
        labels = torch.full((P, base.batch, N), tasks_mod.IGNORE, dtype=torch.long)
        for p, (t, y) in enumerate(batches):
            tokens[p, :, : t.shape[1]], labels[p, :, : y.shape[1]] = t, y
        T = loops_for(base, N - 1, gens[0])[1]      # fixed or streaming: no random draw (others are refused above)
        if base.schedule == "streaming" and len({t.shape[1] for t, _ in batches}) > 1:
            raise ValueError("schedule: streaming populations need equal lengths across seeds")
        tokens, labels = tokens.to(device, non_blocking=True), labels.to(device, non_blocking=True)
        with autocast(device):
            logits = model(tokens, T, streaming=base.streaming).float()
        losses = torch.stack([F.cross_entropy(logits[p].reshape(-1, logits.shape[-1]), labels[p].reshape(-1),
                                              ignore_index=tasks_mod.IGNORE) for p in range(P)])
        for p in range(P):
            if not torch.isfinite(losses[p]) and not runs[p].finished:
                raise FloatingPointError(f"seed {cfgs[p].seed}: loss became {losses[p].item()} at step {runs[p].step}")
        for w in model.params:
            w.grad = None
        losses.sum().backward()                      # seeds own disjoint slices: per-seed gradients
        norms = torch.sqrt(sum(w.grad.pow(2).flatten(1).sum(1) for w in model.params))
        scale = (base.clip / (norms + 1e-6)).clamp(max=1.0)        # per-seed clipping, as clip_grad_norm_
        for w in model.params:
            w.grad.mul_(scale.view((-1,) + (1,) * (w.dim() - 1)))
        lr = torch.tensor([0.0 if r.finished else r.lr() for r in runs], device=device)
        opt.step(lr)
        with torch.no_grad():
            for p, ((t, _), r) in enumerate(zip(batches, runs)):
                if not r.finished:
                    n = t.shape[1] - 1
                    r.after_step(losses[p].item(), (logits[p, :, n].argmax(-1) == labels[p, :, n]).float().mean().item(), n)
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
