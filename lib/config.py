"""`RunConfig`: the whole recipe of one run, and its name in the store.

A run is fixed by its task, its contract `(n_train, T_train)` (the longest words it is trained on
and the fewest loops a batch gets), its loop schedule, model, optimiser, curriculum and seed. The
store names a run by `config_hash` (its non-default fields and `CODE_VERSION`); `warm_start`
derives a child run whose recipe names its parent.
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass, fields, replace

from . import tasks as tasks_mod
from .curriculum import LENGTH_DISTRIBUTIONS
from .model import INJECTIONS, POSITIONAL, LoopConfig

# Bump when a change alters what training produces for an unchanged config: it enters every
# run's hash, so stale cached runs are never read as current ones.
CODE_VERSION = "1"
SCHEDULES = ("fixed", "log", "streaming", "proportional")
LOSS_LOOPS = ("final", "tail", "progressive")
LR_DECAYS = ("constant", "step")
# Execution modes a recipe can fix (RunConfig.mode): device, eager or compiled, dtype. "" leaves them to
# the caller (exploratory runs); a confirmatory run names its mode, so it enters the hash and a run
# trained another way is never read as this recipe's run. CPU modes train on one thread: the replay
# of a run is bit-identical on the same machine only then.
MODES = ("", "cpu-eager-fp32", "cpu-compiled-fp32", "cuda-eager-bf16", "cuda-compiled-bf16")
# Run seeds kept for pre-registered (confirmatory) studies: no search, pilot or exploratory plan uses
# them, and a run on one must declare its execution mode.
RESERVED_SEEDS = range(100, 200)


@dataclass(frozen=True)
class RunConfig:
    experiment: str = "scratch"
    task: str = "S4"
    n_train: int = 8
    T_train: int = 8
    schedule: str = "fixed"          # "fixed": T_train every step; "log": ceil(log2 n) + 3 + U{-1,0,1};
                                     # "streaming": token i revealed at loop i-1, T = n + 2 (T_train = n_train + 2);
                                     # "proportional": ceil(n T_train / n_train) loops for a batch of length n
                                     # (the contract's demand at every curriculum length)
    T_jitter: float = 1.0            # > 1: the loops of a batch are drawn uniformly in [T_min, ceil(T_jitter T_min)],
                                     # T_min the schedule's count (the contract stays the fewest loops a batch gets)
    loss_loops: str = "final"        # "final": loss after the drawn T only; "tail": mean loss over every loop
                                     # T_min..T (asks the loop to hold its answer past the budget);
                                     # "progressive": deep-thinking's progressive loss (Bansal et al. 2022, as
                                     # Paper B's code): s ~ U{0..T-1} loops without gradient, then k ~ U{1..T-s}
                                     # loops with it from that state; loss (1 - a) CE(T loops) + a CE(s + k loops)
    progressive_alpha: float = 1.0   # a above (Paper B's default 1: the progressive term alone)
    # model
    n_layers: int = 1
    d_model: int = 64
    n_heads: int = 4
    injection: str = "adapter"
    tied: bool = True                # False: the untied control, T_train distinct blocks applied once each
    pos: str = "none"                # positional encoding (model.POSITIONAL); NoPE by default
    norm: str = "pre"                # normalisation placement (model.NORMS; Paper B)
    outer_norm: bool = False         # LayerNorm on the state after every loop (Paper B)
    causal: bool = True              # False: bidirectional attention (sudoku; Paper B)
    recall_op: str = "add"           # how recall combines state and input: "add", "linear", "concat" (model.RECALL_OPS)
    norm_kind: str = "layer"         # "layer" (LayerNorm) or "rms" (RMSNorm) everywhere (model.NORM_KINDS; Paper B)
    residual_init: str = "block"     # "depth": the residual writes' init shrinks with the whole stack's depth
                                     # (the untied control's n_layers * T_train layers; model.RESIDUAL_INITS)
    attn_window: int = 0             # > 0: each position attends to the last attn_window positions only
                                     # (local attention; Paper B's prefix sums use a window of 5)
    batch: int = 128
    lr: float = 1e-3
    lr_decay: str = "constant"       # "step": x0.1 at 40 % and again at 67 % of max_steps (Paper B's
                                     # epochs 60 and 100 of 150); polishing decays from there
    warmup: int = 100
    weight_decay: float = 0.01
    clip: float = 1.0
    max_steps: int = 6000
    polish_steps: int = 300
    final_acc: float = 0.99
    plateau_stop: int = 0            # > 0: stop early once a deadlock is measured (see RunProgress); 0: never
    # curriculum
    curriculum_start: int = 2
    curriculum_step: int = 1
    promote_acc: float = 0.95
    first_acc: float = 0.98
    lengths: str = "max"
    # warm start: "experiment/hash" of a finished run whose weights initialise this one (fresh
    # optimiser and schedule; see store.warm_start); "" = from scratch
    init_from: str = ""
    # evaluation and bookkeeping
    eval_count: int = 512
    checkpoint_every: int = 250
    seed: int = 0
    mode: str = ""                   # execution mode (MODES); "" = chosen at train time (device, compile arguments)

    def __post_init__(self):
        def need_int(name, lo):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < lo:
                raise ValueError(f"{name}: must be an integer >= {lo}, got {v!r}")
        for name in ("n_train", "T_train", "n_layers", "d_model", "n_heads", "batch",
                     "max_steps", "curriculum_start", "curriculum_step", "eval_count", "checkpoint_every"):
            need_int(name, 1)
        for name in ("warmup", "polish_steps", "seed"):
            need_int(name, 0)
        tasks_mod.make_task(self.task)    # raises with the allowed names
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule: unknown {self.schedule!r}; allowed: {SCHEDULES}")
        if (not isinstance(self.T_jitter, (int, float)) or isinstance(self.T_jitter, bool)
                or not math.isfinite(self.T_jitter) or self.T_jitter < 1):
            raise ValueError(f"T_jitter: must be a number >= 1 (1 = no jitter), got {self.T_jitter!r}")
        if self.loss_loops not in LOSS_LOOPS:
            raise ValueError(f"loss_loops: unknown {self.loss_loops!r}; allowed: {LOSS_LOOPS}")
        if self.lr_decay not in LR_DECAYS:
            raise ValueError(f"lr_decay: unknown {self.lr_decay!r}; allowed: {LR_DECAYS}")
        if (not isinstance(self.progressive_alpha, (int, float)) or isinstance(self.progressive_alpha, bool)
                or not 0.0 <= self.progressive_alpha <= 1.0):
            raise ValueError(f"progressive_alpha: the weight of the progressive term, in [0, 1], got {self.progressive_alpha!r}")
        if self.progressive_alpha != 1.0 and self.loss_loops != "progressive":
            raise ValueError(f"progressive_alpha: weighs the progressive loss only; allowed with loss_loops="
                             f"{self.loss_loops!r}: 1.0 (the default), got {self.progressive_alpha!r}")
        if self.residual_init == "depth" and self.tied:
            raise ValueError("residual_init: 'depth' scales by the untied stack's depth; a tied block has one block, "
                             "allowed with tied=True: 'block'")
        if self.streaming and (self.T_jitter != 1 or self.loss_loops != "final"):
            raise ValueError("T_jitter / loss_loops: the streaming schedule fixes its loops (T = n + 2); "
                             "allowed with schedule='streaming': T_jitter=1, loss_loops='final'")
        if self.lengths not in LENGTH_DISTRIBUTIONS:
            raise ValueError(f"lengths: unknown {self.lengths!r}; allowed: {LENGTH_DISTRIBUTIONS}")
        if self.injection not in INJECTIONS:
            raise ValueError(f"injection: unknown {self.injection!r}; allowed: {INJECTIONS}")
        if self.schedule == "streaming" and self.T_train != self.n_train + 2:
            raise ValueError(f"T_train: the streaming schedule needs T_train = n_train + 2 = {self.n_train + 2}, "
                             f"got {self.T_train}")
        if not isinstance(self.tied, bool):
            raise ValueError(f"tied: must be True or False, got {self.tied!r}")
        if not isinstance(self.causal, bool):
            raise ValueError(f"causal: must be True or False, got {self.causal!r}")
        if self.schedule == "streaming" and not self.causal:
            raise ValueError("schedule: 'streaming' needs causal attention (causal=True)")
        cells = {"sudoku": 81, "chess": 64}.get(self.task)
        if cells and (self.causal or self.n_train != cells or self.curriculum_start != cells):
            raise ValueError(f"task: {self.task!r} needs causal=False (a square depends on the whole board) and "
                             f"n_train = curriculum_start = {cells} (one token per square), got causal={self.causal}, "
                             f"n_train={self.n_train}, curriculum_start={self.curriculum_start}")
        if self.pos == "grid" and self.task != "sudoku":
            raise ValueError(f"pos: 'grid' encodes a sudoku board's rows, columns and boxes; allowed only with "
                             f"task 'sudoku', got task {self.task!r}")
        if not self.tied and self.loss_loops == "progressive":
            raise ValueError("loss_loops: 'progressive' restarts the loop from a detached state; the untied control "
                             "has one block per loop; allowed with tied=False: 'final', 'tail'")
        if not self.tied and self.schedule != "fixed":
            raise ValueError(f"schedule: the untied control runs a fixed depth; allowed with tied=False: 'fixed', "
                             f"got {self.schedule!r}")
        self.model_config()               # the model's own checks (norm, outer_norm, ...) name the parameter
        if self.pos not in POSITIONAL:
            raise ValueError(f"pos: unknown positional encoding {self.pos!r}; allowed: {POSITIONAL}")
        if not isinstance(self.plateau_stop, int) or isinstance(self.plateau_stop, bool) or self.plateau_stop < 0:
            raise ValueError(f"plateau_stop: must be an integer >= 0 (steps; 0 = off), got {self.plateau_stop!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model: {self.d_model} is not divisible by n_heads={self.n_heads}")
        for name, lo in (("lr", "positive"), ("clip", "positive"), ("weight_decay", "non-negative")):
            v = getattr(self, name)
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and (
                v > 0 if lo == "positive" else v >= 0)
            if not ok:
                raise ValueError(f"{name}: must be a {lo} number, got {v!r}")
        for name in ("final_acc", "promote_acc", "first_acc"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not 0 < v <= 1:
                raise ValueError(f"{name}: must be in (0, 1], got {v!r}")
        if not isinstance(self.init_from, str) or (self.init_from and not _is_run_id(self.init_from)):
            raise ValueError(f"init_from: must be '' or a stored run's 'experiment/hash' (16 hex digits), "
                             f"got {self.init_from!r}")
        if self.mode not in MODES:
            raise ValueError(f"mode: unknown execution mode {self.mode!r}; allowed: {MODES}")
        if self.seed in RESERVED_SEEDS and not self.mode:
            raise ValueError(f"seed: {self.seed} is reserved for confirmatory runs ({RESERVED_SEEDS.start}-"
                             f"{RESERVED_SEEDS.stop - 1}), which declare an execution mode; allowed: a mode from "
                             f"{MODES[1:]}, or a seed outside the reserved range")
        if not self.experiment or not all(c.isalnum() or c in "-_" for c in self.experiment):
            raise ValueError(f"experiment: must be a non-empty name of letters, digits, '-' or '_', got {self.experiment!r}")

    @property
    def streaming(self) -> bool:
        return self.schedule == "streaming"

    def loops_at(self, n: int) -> int:
        """The loops this run gets at length n: what its training schedule gave a batch of length n,
        held at the contract's demand beyond n_train. The one rule every instrument uses to scale
        loops with length. Fixed (and log) schedules trained every length with T_train loops, so
        T_train up to n_train and ceil(n T_train / n_train) beyond; the proportional schedule
        ceil(n T_train / n_train) at every n; streaming n + 2; the untied control its depth."""
        if not self.tied:
            return self.T_train
        if self.schedule == "streaming":
            return n + 2
        if self.schedule == "proportional":
            return loops_at_length(n, self.n_train, self.T_train)
        return max(self.T_train, loops_at_length(n, self.n_train, self.T_train))

    @property
    def contract(self) -> str:
        """The contract in words, e.g. 'n=8 T=4 (demand 2)'."""
        return f"n={self.n_train} T={self.T_train} (demand {self.demand:g})"

    @property
    def demand(self) -> float:
        """Positions the contract asks per loop: n_train / T_train."""
        return self.n_train / self.T_train

    def task_obj(self) -> tasks_mod.Task:
        return tasks_mod.make_task(self.task)

    def model_config(self) -> LoopConfig:
        t = self.task_obj()
        return LoopConfig(vocab_size=t.vocab_size, n_classes=t.n_classes, n_layers=self.n_layers,
                          d_model=self.d_model, n_heads=self.n_heads, injection=self.injection,
                          n_blocks=1 if self.tied else self.T_train, pos=self.pos, norm=self.norm,
                          outer_norm=self.outer_norm, causal=self.causal, recall_op=self.recall_op,
                          norm_kind=self.norm_kind, attn_window=self.attn_window, residual_init=self.residual_init)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "RunConfig":
        known = {f.name for f in fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"config: unknown fields {sorted(unknown)}; allowed: {sorted(known)}")
        return cls(**d)


def execution(cfg: RunConfig, device: str | None = None, compile: bool | None = None) -> tuple[str, bool]:
    """The (device, compile) a run trains with. A run with a mode trains in it, and an explicit request
    for another device or compile setting is refused (before any work); a run without one takes the
    caller's (CPU, eager when not given)."""
    if not cfg.mode:
        return device or "cpu", bool(compile)
    where, how, _dtype = cfg.mode.split("-")
    if device not in (None, where):
        raise ValueError(f"device: this run's recipe fixes mode {cfg.mode!r}; allowed: {where!r} (or none), got {device!r}")
    if compile not in (None, how == "compiled"):
        raise ValueError(f"compile: this run's recipe fixes mode {cfg.mode!r}; allowed: {how == 'compiled'} (or none), "
                         f"got {compile!r}")
    return where, how == "compiled"


def _is_run_id(text: str) -> bool:
    exp, _, h = text.partition("/")
    return (bool(exp) and all(c.isalnum() or c in "-_" for c in exp) and len(h) == 16
            and all(c in "0123456789abcdef" for c in h))


def loops_at_length(n: int, n_train: int, T_train: int) -> int:
    """The one rule that scales loops with length: the contract's demand n_train / T_train held at
    length n, T(n) = ceil(n T_train / n_train) (at n = n_train, T_train itself)."""
    return max(1, math.ceil(n * T_train / n_train - 1e-9))


def config_hash(cfg: RunConfig) -> str:
    """sha256 of the config's NON-DEFAULT fields and the code version.

    Leaving default-valued fields out lets a later feature add a field (whose default keeps the old
    behaviour) without orphaning every cached run. The price is a rule: a field's default never
    changes (tests/test_train_store.py pins one hash to catch it)."""
    defaults = RunConfig()
    changed = {k: v for k, v in cfg.to_dict().items() if v != getattr(defaults, k)}
    blob = json.dumps({"config": changed, "code_version": CODE_VERSION}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def run_id(cfg: RunConfig) -> str:
    """'experiment/hash': how a child run names its parent (RunConfig.init_from)."""
    return f"{cfg.experiment}/{config_hash(cfg)}"


def warm_start(parent: RunConfig, **changes) -> RunConfig:
    """A run initialised from `parent`'s stored weights and trained under `changes` (e.g. a new
    T_train: budget annealing). The child starts at the full length (curriculum_start = n_train, the
    parent already knows the task) unless `changes` says otherwise; its hash includes the parent's id,
    so the lineage is part of the recipe."""
    changes.setdefault("curriculum_start", changes.get("n_train", parent.n_train))
    return replace(parent, init_from=run_id(parent), **changes)


