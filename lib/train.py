"""Training under a contract (n_train, T_train).

`RunConfig` (lib/config.py) is the whole recipe of one run; `train(cfg, workdir)` returns the trained model and its
metrics, checkpointing into `workdir` so an interrupted run resumes where it stopped.

Recipe: AdamW (betas 0.9/0.98, weight decay off embeddings,
biases and norms), linear warmup then a constant learning rate (or Paper B's step decay,
`lr_decay="step"`); loss = cross-entropy after the loops the schedule gives the batch (`step.loops_for`:
the contract's T, or a count drawn above it), averaged over the loops past the budget
(`loss_loops="tail"`), or deep-thinking's progressive loss (`loss_loops="progressive"`); gradient clipping;
a length curriculum with promotion on accuracy. When the curriculum has reached n_train and the
windowed last-position accuracy reaches `final_acc`, the run "polishes": the learning rate decays
linearly to 0 over `polish_steps` and training stops. `max_steps` bounds everything.

The step itself (`step.train_step`) is shared with population training (`population.py`); this module
holds what a run tracks around it (`RunProgress`), its learning rate, evaluation and the loop that
checkpoints and resumes.
"""
from __future__ import annotations

import math
import time
from pathlib import Path

import torch

from . import tasks as tasks_mod
from .config import RunConfig, execution
from .curriculum import LengthCurriculum
from .model import LoopedTransformer
from .paths import atomic_write
from .step import autocast, draw_batch, train_step


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
    afterwards, by the operator wall's reader."""
    if not log:
        return False
    step = log[-1]["step"]
    since = promotions[-1] if promotions else 0
    if step - since < 2 * window:
        return False
    before = [r["loss"] for r in log if since < r["step"] <= step - window]
    inside = [r["loss"] for r in log if r["step"] > step - window]
    return bool(before and inside) and min(inside) > (1.0 - min_gain) * min(before)


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
