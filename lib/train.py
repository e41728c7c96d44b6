"""Training under a contract (n_train, T_train).

`RunConfig` (lib/config.py) is the whole recipe of one run; `train(cfg, workdir)` returns the trained model and its
metrics, checkpointing into `workdir` so an interrupted run resumes where it stopped.

Recipe (shared/notes/cpu-measurements.md): AdamW (betas 0.9/0.98, weight decay off embeddings,
biases and norms), linear warmup then a constant learning rate (or Paper B's step decay,
`lr_decay="step"`); loss = cross-entropy after the loops the schedule gives the batch (`loops_for`:
the contract's T, or a count drawn above it), averaged over the loops past the budget
(`loss_loops="tail"`), or deep-thinking's progressive loss (`loss_loops="progressive"`); gradient clipping;
a length curriculum with promotion on accuracy. When the curriculum has reached n_train and the
windowed last-position accuracy reaches `final_acc`, the run "polishes": the learning rate decays
linearly to 0 over `polish_steps` and training stops. `max_steps` bounds everything.

`train_step` is the one training step: `train` takes it for one run, population training
(`population.py`) for P seeds at once on the model's population axis.
"""
from __future__ import annotations

import contextlib
import math
import time
from pathlib import Path
from typing import NamedTuple

import torch
import torch.nn.functional as F

from . import tasks as tasks_mod
from .config import RunConfig, execution, loops_at_length
from .curriculum import LengthCurriculum, draw_length
from .model import LoopedTransformer
from .paths import atomic_write


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


def decays(name: str, p: torch.Tensor) -> bool:
    """Weight decay applies to weight matrices, not to embeddings, biases or norms."""
    return p.dim() == 2 and not name.startswith("embed")


def _param_groups(model: torch.nn.Module, weight_decay: float):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (decay if decays(name, p) else no_decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


STEP_DECAY = ((0.4, 0.1), (2 / 3, 0.1))     # lr_decay="step": (fraction of max_steps, factor) milestones


def _lr_at(cfg: RunConfig, step: int, polish_start: int | None) -> float:
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    base = cfg.lr
    if cfg.lr_decay == "step":
        for at, factor in STEP_DECAY:
            base *= factor if step >= math.ceil(at * cfg.max_steps) else 1.0
    if polish_start is None:
        return base
    return base * max(0.0, 1.0 - (step - polish_start) / max(1, cfg.polish_steps))


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


def resource(device) -> str:
    """What a stretch of training ran on, as its cost is counted: "cuda", or "cpu x<threads>"."""
    return "cuda" if torch.device(device).type == "cuda" else f"cpu x{torch.get_num_threads()}"


def add_spent(spent: dict[str, float], resource: str, seconds: float) -> dict[str, float]:
    """`spent` with `seconds` more on `resource` (a new dict)."""
    return {**spent, resource: spent.get(resource, 0.0) + seconds}


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
        self.compiled = False            # some of its steps ran compiled (then not a bit-identical replay)
        self.last_finite_loss = float("nan")   # for `Diverged`'s message; not checkpointed
        # Training seconds by resource ("cpu x<threads>" or "cuda", `resource`) before this process took the
        # run over: checkpointed, so a resumed run's cost is all its checkpointed training, not its last
        # stretch (steps after the last checkpoint of a killed process are lost, and so is their time);
        # None when resumed from a checkpoint that did not record it. The trainer sets `resource`.
        self.spent_before: dict[str, float] | None = {}
        self.resource = "cpu x1"
        self.started = time.time()

    def spent(self) -> dict[str, float] | None:
        """Training seconds so far by resource, across resumptions (None: a resumed checkpoint did not
        record the time before it)."""
        if self.spent_before is None:
            return None
        return add_spent(self.spent_before, self.resource, time.time() - self.started)

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
                "log": self.log, "window_loss": list(self.window_loss), "plateau_at": self.plateau_at,
                "compiled": self.compiled, "spent": self.spent()}

    def load_state_dict(self, state: dict) -> None:
        self.curriculum.load_state_dict(state["curriculum"])
        self.step, self.polish_start, self.log = state["step"], state["polish_start"], state["log"]
        self.window_loss = list(state.get("window_loss", []))
        self.plateau_at = state.get("plateau_at")
        self.compiled = state.get("compiled", False)
        self.spent_before, self.started = state.get("spent"), time.time()

    def metrics(self, model, final_eval: dict) -> dict:
        c = self.curriculum
        out = {"steps": self.step, "reached_length": c.length, "curriculum_done": c.done,
               "polished": self.polish_start is not None, "promotions": c.promotions,
               "final_eval": final_eval, "log": self.log, "n_params": model.n_params()}
        if self.cfg.plateau_stop:       # only runs that can stop on a plateau report it (old runs' metrics stay as they were)
            out["plateau_at"] = self.plateau_at
        if self.compiled:               # likewise: eager runs' metrics are unchanged
            out["compiled"] = True
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


def draw_batch(cfg: RunConfig, run: RunProgress, task: tasks_mod.Task, generator: torch.Generator) -> Batch:
    """The next batch of a run's data stream: its length, words and loop counts, drawn from `generator`
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


def _inputs(batches: list[Batch], population: int | None, causal: bool, device: torch.device):
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


def train_step(model: LoopedTransformer, opt, runs: list[RunProgress], batches: list[Batch], forward=None,
               checkpoint: Path | None = None) -> list[float | None]:
    """THE training step, of a single run or of a population of seeds of one config.

    Single run: `model` without population axis, `opt` a torch optimiser, one run and one batch.
    Population: `model` from `LoopedTransformer.stack` (P seeds), `opt` a per-seed optimiser
    (`population.StackedAdamW`: step(lr) with one learning rate per seed), one RunProgress and one
    batch per seed; a finished seed is frozen (learning rate 0, no check, no bookkeeping).

    forward (`forward`, e.g. the compiled model, else `model`) -> each seed's loss (`loop_loss`) ->
    finite check (`Diverged`, naming the seed in a population and `checkpoint` if written) ->
    backward -> gradient clipping per seed (`clip_grad_norm_` for a single run) -> optimiser step at
    each seed's learning rate -> each run's bookkeeping (`RunProgress.after_step`).
    Returns each seed's loss (None for a finished seed)."""
    forward = model if forward is None else forward
    P = model.population
    cfg = runs[0].cfg
    active = [not r.finished for r in runs]
    lrs = [r.lr() if a else 0.0 for r, a in zip(runs, active)]
    device = next(model.parameters()).device
    tokens, labels = _inputs(batches, P, cfg.causal, device)
    tail = cfg.loss_loops == "tail"
    seed_T = [b.T for b in batches]

    def seed(x: torch.Tensor, i: int) -> torch.Tensor:
        return x if P is None else x[i]

    progressive = cfg.loss_loops == "progressive"
    if progressive and P is not None:
        raise ValueError("loss_loops: 'progressive' draws its loops per seed and step; train its seeds one by one")
    with autocast(device):
        if progressive:
            b, a = batches[0], cfg.progressive_alpha
            logits, h = progressive_logits(forward, tokens, b)
            losses = [a * loop_loss(logits, labels, b.T_min, "final")]
            if a < 1:
                full = forward(tokens, b.T)
                losses[0] = losses[0] + (1 - a) * loop_loss(full, labels, b.T_min, "final")
            elif b.free + b.k < b.T:     # the curriculum reads the batch's full T loops, before the update
                with torch.no_grad():
                    full = forward(tokens, b.T - b.free - b.k, h0=h.detach())
            else:
                full = logits
        else:
            logits = forward(tokens, seed_T[0] if P is None else seed_T, streaming=cfg.streaming, all_loops=tail)
            # a population's tail logits run to the largest T; seed i's own loops are the first T_i
            losses = [loop_loss(seed(logits, i) if P is None or not tail else logits[i, :b.T], seed(labels, i),
                                b.T_min, cfg.loss_loops) for i, b in enumerate(batches)]
    for run, loss, a in zip(runs, losses, active):
        if not a:
            continue
        if not torch.isfinite(loss):
            raise Diverged(run.step, loss.item(), run.last_finite_loss,
                           checkpoint if checkpoint is not None and checkpoint.exists() else None,
                           seed=None if P is None else run.cfg.seed)
        run.last_finite_loss = loss.item()
    model.zero_grad(set_to_none=True)
    (losses[0] if P is None else torch.stack(losses).sum()).backward()   # seeds own disjoint slices
    if P is None:
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
        for g in opt.param_groups:
            g["lr"] = lrs[0]
        opt.step()
    else:
        clip_per_seed(model.parameters(), cfg.clip)
        opt.step(torch.tensor(lrs, device=device))
    out = []
    with torch.no_grad():
        for i, (run, b, loss, a) in enumerate(zip(runs, batches, losses, active)):
            if not a:
                out.append(None)
                continue
            final = seed(logits, i)
            if tail:
                final = final[b.T - 1]                  # the logits after the batch's own last loop
            if progressive:                             # the curriculum reads the batch's full T loops
                final = full
            last = b.tokens.shape[1] - 1                # the batch's last position (padding lies beyond)
            acc = (final[:, last].argmax(-1) == seed(labels, i)[:, last]).float().mean().item()
            out.append(loss.item())
            run.after_step(out[-1], acc, b.n)
    return out


def autocast(device: torch.device):
    """bf16 autocast on a GPU (matmuls and attention in bf16, reductions in fp32); plain fp32 on CPU."""
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def train(cfg: RunConfig, workdir: Path | None = None, progress: bool = False, device: str = "cpu",
          compile: bool = False, init_state: dict | None = None):
    """Train one run. Returns (model, metrics). Resumes from `workdir/checkpoint.pt` if present.

    device "cuda": the same program on the GPU under bf16 autocast (data are still drawn on the CPU
    from the seeded generator, so the data stream does not depend on the device). compile: on the CPU,
    one loop (`model.step`) is compiled with dynamic shapes, so a run makes two graphs whatever
    lengths and loop counts its schedule draws (1.3x a quick S4 step, bench/cpu_step_speed.py; pays
    after about 1,000 steps); on a GPU the whole forward pass is compiled (it unrolls the loops;
    worth it only for long runs). Compiled kernels round differently: a compiled run is another
    sample of its recipe, not a bit-identical replay (the store records that it was compiled). The
    device is not part of the config: a run's hash names its recipe, and the store keeps one run per
    recipe.

    init_state: the weights of `cfg.init_from` (the store loads and verifies them); training starts
    from them with a fresh optimiser, warmup and curriculum. A checkpoint, if present, wins.

    A run whose recipe fixes an execution mode (`cfg.mode`) must be asked for in it (`config.execution`
    refuses another device or compile setting); a CPU mode trains on one thread."""
    if cfg.mode:
        execution(cfg, device, compile)
        if cfg.mode.startswith("cpu"):
            threads = torch.get_num_threads()
            torch.set_num_threads(1)
            try:
                return _train(cfg, workdir, progress, device, compile, init_state)
            finally:
                torch.set_num_threads(threads)
    return _train(cfg, workdir, progress, device, compile, init_state)


def _train(cfg: RunConfig, workdir, progress: bool, device: str, compile: bool, init_state: dict | None):
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
    forward = model
    if compile and device.type == "cpu":      # one loop compiled; T stays a Python loop
        model.step = torch.compile(model.step, dynamic=True)
    elif compile:
        forward = torch.compile(model)
    opt = torch.optim.AdamW(_param_groups(model, cfg.weight_decay), lr=cfg.lr, betas=(0.9, 0.98))
    data_gen = torch.Generator().manual_seed(cfg.seed)
    run = RunProgress(cfg)
    run.resource = resource(device)
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
    run.compiled = run.compiled or compile

    bar = _progress(cfg.max_steps, progress, f"{cfg.task} n={cfg.n_train} T={cfg.T_train} seed={cfg.seed}")
    if bar is not None:
        bar.update(run.step)
    model.train()
    while not run.finished:
        (loss,) = train_step(model, opt, [run], [draw_batch(cfg, run, task, data_gen)], forward, ckpt_path)
        if bar is not None:
            bar.update(1)
            bar.set_postfix(length=run.curriculum.length, loss=f"{loss:.3f}")
        if ckpt_path is not None and run.step % cfg.checkpoint_every == 0:
            _save_checkpoint(ckpt_path, model, opt, data_gen, run)
    if bar is not None:
        bar.close()
    if "step" in vars(model):
        del model.step                        # back to the plain method: eager evaluation from here on
    model.eval()
    return model, run.metrics(model, evaluate(model, task, cfg.n_train, cfg.T_train, cfg.eval_count, cfg.seed,
                                              cfg.streaming))


def _save_checkpoint(path, model, opt, data_gen, run: RunProgress):
    state = {"model": model.state_dict(), "optimizer": opt.state_dict(), "data_rng": data_gen.get_state(),
             "torch_rng": torch.get_rng_state(), **run.state_dict()}
    atomic_write(path, lambda tmp: torch.save(state, tmp))
