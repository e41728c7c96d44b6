"""Training under a contract (n_train, T_train).

`RunConfig` (lib/config.py) is the whole recipe of one run; `train(cfg, workdir)` returns the trained model and its
metrics, checkpointing into `workdir` so an interrupted run resumes where it stopped.

Recipe (shared/notes/cpu-measurements.md): AdamW (betas 0.9/0.98, weight decay off embeddings,
biases and norms), linear warmup then constant learning rate; loss = cross-entropy after the
loops the schedule gives the batch (`loops_for`: the contract's T, or a count drawn above it) or
averaged over the loops past the budget (`loss_loops="tail"`); gradient clipping;
a length curriculum with promotion on accuracy. When the curriculum has reached n_train and the
windowed last-position accuracy reaches `final_acc`, the run "polishes": the learning rate decays
linearly to 0 over `polish_steps` and training stops. `max_steps` bounds everything.
"""
from __future__ import annotations

import contextlib
import math
from pathlib import Path

import torch
import torch.nn.functional as F

from . import tasks as tasks_mod
from .config import RunConfig, loops_at_length
from .curriculum import LengthCurriculum, draw_length
from .model import LoopedTransformer
from .paths import atomic_write

class Diverged(FloatingPointError):
    """The loss became NaN or inf: training stops at once and says where it can restart from."""

    def __init__(self, step: int, loss: float, last_finite_loss: float, checkpoint: Path | None):
        self.step, self.loss, self.last_finite_loss, self.checkpoint = step, loss, last_finite_loss, checkpoint
        where = f"last good checkpoint: {checkpoint}" if checkpoint else "no checkpoint written yet"
        super().__init__(f"training diverged: loss {loss} at step {step} (last finite loss {last_finite_loss:.4g}); "
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


def decays(name: str, p: torch.Tensor) -> bool:
    """Weight decay applies to weight matrices, not to embeddings, biases or norms."""
    return p.dim() == 2 and not name.startswith("embed")


def _param_groups(model: torch.nn.Module, weight_decay: float):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (decay if decays(name, p) else no_decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def _lr_at(cfg: RunConfig, step: int, polish_start: int | None) -> float:
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    if polish_start is None:
        return cfg.lr
    return cfg.lr * max(0.0, 1.0 - (step - polish_start) / max(1, cfg.polish_steps))


@torch.no_grad()
def evaluate(model: LoopedTransformer, task: tasks_mod.Task, n: int, T: int, count: int, seed: int,
             streaming: bool = False) -> dict:
    """Accuracy at length n after T loops on a fixed seeded test set."""
    device = next(model.parameters()).device
    tokens, labels = (x.to(device) for x in tasks_mod.test_set(task, n, count, seed))
    with autocast(device):
        pred = model(tokens, T, streaming=streaming).argmax(-1)[:, 1:]
    correct = pred == labels[:, 1:]
    return {"n": n, "T": T, "token_acc": correct.float().mean().item(),
            "seq_acc": correct.all(1).float().mean().item(),
            "position_acc": correct.float().mean(0).tolist()}


def _progress(total: int, enabled: bool, desc: str):
    if not enabled:
        return None
    from tqdm.auto import tqdm
    return tqdm(total=total, desc=desc, leave=False, mininterval=2.0)


class RunProgress:
    """Everything one run's training loop tracks besides weights, optimiser and data stream: step,
    curriculum, polish start, the log and its loss window. Shared by `train` and population training,
    so both follow exactly the same curriculum, polishing and stopping rules."""

    def __init__(self, cfg: RunConfig):
        self.cfg = cfg
        self.curriculum = LengthCurriculum(cfg.n_train, cfg.curriculum_start, cfg.curriculum_step,
                                                     cfg.promote_acc, cfg.first_acc)
        self.step, self.polish_start, self.log, self.window_loss = 0, None, [], []
        self.plateau_at = None           # step at which a deadlock plateau stopped the run (plateau_stop > 0)

    @property
    def finished(self) -> bool:
        return self.step >= self.cfg.max_steps or self.plateau_at is not None or (
            self.polish_start is not None and self.step >= self.polish_start + self.cfg.polish_steps)

    def lr(self) -> float:
        return _lr_at(self.cfg, self.step, self.polish_start)

    def after_step(self, loss: float, last_position_acc: float, n: int) -> None:
        """Book one optimiser step on a batch of length n."""
        self.step += 1
        c = self.curriculum
        promoted = c.update(self.step, last_position_acc) if n == c.length else False
        self.window_loss.append(loss)
        if (self.polish_start is None and c.done and len(c.history) == c.window
                and c.windowed_acc() >= self.cfg.final_acc):
            self.polish_start = self.step        # reached n_train and final_acc: decay lr to 0 and stop
        if self.step % 50 == 0 or promoted:
            self.log.append({"step": self.step, "length": c.length,
                             "loss": sum(self.window_loss) / len(self.window_loss), "last_acc": c.windowed_acc()})
            self.window_loss = []
            if (self.cfg.plateau_stop and self.polish_start is None
                    and plateaued(self.log, self.cfg.plateau_stop, c.promotions)):
                self.plateau_at = self.step

    def state_dict(self) -> dict:
        return {"curriculum": self.curriculum.state_dict(), "step": self.step, "polish_start": self.polish_start,
                "log": self.log, "window_loss": list(self.window_loss), "plateau_at": self.plateau_at}

    def load_state_dict(self, state: dict) -> None:
        self.curriculum.load_state_dict(state["curriculum"])
        self.step, self.polish_start, self.log = state["step"], state["polish_start"], state["log"]
        self.window_loss = list(state.get("window_loss", []))
        self.plateau_at = state.get("plateau_at")

    def metrics(self, model, final_eval: dict) -> dict:
        c = self.curriculum
        out = {"steps": self.step, "reached_length": c.length, "curriculum_done": c.done,
               "polished": self.polish_start is not None, "promotions": c.promotions,
               "final_eval": final_eval, "log": self.log, "n_params": model.n_params()}
        if self.cfg.plateau_stop:       # only runs that can stop on a plateau report it (old runs' metrics stay as they were)
            out["plateau_at"] = self.plateau_at
        return out


def plateaued(log: list[dict], window: int, promotions: list[int], min_gain: float = 0.02) -> bool:
    """A training plateau, measured on the run's log: the curriculum has stood still for at least
    2 x `window` steps, and over the last `window` steps the logged loss never went more than
    `min_gain` (relative) below its best value in the steps before the window since that last
    promotion (losses at an earlier, shorter length are not comparable). Used to stop deadlocked runs
    (the operator wall, Paper A §6.3) early; the verdict on a deadlock is read from accuracies
    afterwards (`instruments.deadlock`)."""
    if not log:
        return False
    step = log[-1]["step"]
    since = promotions[-1] if promotions else 0
    if step - since < 2 * window:
        return False
    before = [r["loss"] for r in log if since < r["step"] <= step - window]
    inside = [r["loss"] for r in log if r["step"] > step - window]
    return bool(before and inside) and min(inside) > (1.0 - min_gain) * min(before)


def autocast(device: torch.device):
    """bf16 autocast on a GPU (matmuls and attention in bf16, reductions in fp32); plain fp32 on CPU."""
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def train(cfg: RunConfig, workdir: Path | None = None, progress: bool = False, device: str = "cpu",
          compile: bool = False, init_state: dict | None = None):
    """Train one run. Returns (model, metrics). Resumes from `workdir/checkpoint.pt` if present.

    device "cuda": the same program on the GPU under bf16 autocast (data are still drawn on the CPU
    from the seeded generator, so the data stream does not depend on the device); compile: wrap the loop
    step in `torch.compile` (it unrolls the loops; worth it only for long GPU runs). The device is
    not part of the config: a run's hash names its recipe, and the store keeps one run per recipe.

    init_state: the weights of `cfg.init_from` (the store loads and verifies them); training starts
    from them with a fresh optimiser, warmup and curriculum. A checkpoint, if present, wins."""
    device = torch.device(device)
    torch.manual_seed(cfg.seed)
    task = cfg.task_obj()
    model = LoopedTransformer(cfg.model_config()).to(device)
    ckpt_path = Path(workdir) / "checkpoint.pt" if workdir is not None else None
    if cfg.init_from and not (ckpt_path is not None and ckpt_path.exists()):
        if init_state is None:
            raise ValueError(f"init_from: {cfg.init_from!r} needs the parent's weights as init_state "
                             "(store.get_or_train passes them)")
        model.load_state_dict({k: v.to(device) for k, v in init_state.items()})
    forward = torch.compile(model) if compile else model
    opt = torch.optim.AdamW(_param_groups(model, cfg.weight_decay), lr=cfg.lr, betas=(0.9, 0.98))
    data_gen = torch.Generator().manual_seed(cfg.seed)
    run = RunProgress(cfg)
    last_finite_loss = float("nan")
    if ckpt_path is not None and ckpt_path.exists():
        state = torch.load(ckpt_path, weights_only=True, map_location="cpu")   # RNG states must stay on the CPU
        try:
            model.load_state_dict(state["model"])
        except RuntimeError as err:
            raise ValueError(f"checkpoint: {ckpt_path} does not match this config's model; "
                             f"delete it to start over ({str(err).splitlines()[0]})") from None
        opt.load_state_dict(state["optimizer"])
        data_gen.set_state(state["data_rng"])
        torch.set_rng_state(state["torch_rng"])
        run.load_state_dict(state)

    bar = _progress(cfg.max_steps, progress, f"{cfg.task} n={cfg.n_train} T={cfg.T_train} seed={cfg.seed}")
    if bar is not None:
        bar.update(run.step)
    model.train()
    while not run.finished:
        n = draw_length(cfg.lengths, run.curriculum.length, data_gen, min_len=cfg.curriculum_start)
        tokens, labels = (x.to(device, non_blocking=True) for x in task.sample(cfg.batch, n, data_gen))
        T_min, T = loops_for(cfg, n, data_gen)
        for g in opt.param_groups:
            g["lr"] = run.lr()
        with autocast(device):
            logits = forward(tokens, T, streaming=cfg.streaming, all_loops=cfg.loss_loops == "tail")
            loss = loop_loss(logits, labels, T_min, cfg.loss_loops)
        if cfg.loss_loops == "tail":
            logits = logits[-1]
        if not torch.isfinite(loss):
            raise Diverged(run.step, loss.item(), last_finite_loss,
                           ckpt_path if ckpt_path is not None and ckpt_path.exists() else None)
        last_finite_loss = loss.item()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
        opt.step()
        with torch.no_grad():
            last_acc = (logits[:, -1].argmax(-1) == labels[:, -1]).float().mean().item()
        run.after_step(loss.item(), last_acc, n)
        if bar is not None:
            bar.update(1)
            bar.set_postfix(length=run.curriculum.length, loss=f"{loss.item():.3f}")
        if ckpt_path is not None and run.step % cfg.checkpoint_every == 0:
            _save_checkpoint(ckpt_path, model, opt, data_gen, run)
    if bar is not None:
        bar.close()
    model.eval()
    return model, run.metrics(model, evaluate(model, task, cfg.n_train, cfg.T_train, cfg.eval_count, cfg.seed,
                                              cfg.streaming))


def _save_checkpoint(path, model, opt, data_gen, run: RunProgress):
    state = {"model": model.state_dict(), "optimizer": opt.state_dict(), "data_rng": data_gen.get_state(),
             "torch_rng": torch.get_rng_state(), **run.state_dict()}
    atomic_write(path, lambda tmp: torch.save(state, tmp))
