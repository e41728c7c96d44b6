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
from .model import INJECTIONS, LoopConfig

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


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


# RunConfig's checks as tables (`RunConfig.__post_init__` applies them in this order). Integers: (field,
# least value, note in the message).
_INTEGERS = tuple((name, 1, "") for name in ("n_train", "T_train", "n_layers", "d_model", "n_heads", "batch", "max_steps",
                                              "curriculum_start", "curriculum_step", "eval_count", "checkpoint_every")) \
    + tuple((name, 0, "") for name in ("warmup", "polish_steps", "seed")) + (("plateau_stop", 0, " (steps; 0 = off)"),)
_CHOICES = (("schedule", SCHEDULES, ""), ("loss_loops", LOSS_LOOPS, ""), ("lr_decay", LR_DECAYS, ""),
            ("lengths", LENGTH_DISTRIBUTIONS, ""), ("injection", INJECTIONS, ""), ("mode", MODES, "execution mode "))
_FLAGS = ("tied", "causal")
# (field, test, what is allowed)
_VALUES = (
    ("T_jitter", lambda v: _number(v) and v >= 1, "must be a number >= 1 (1 = no jitter)"),
    ("progressive_alpha", lambda v: _number(v) and 0.0 <= v <= 1.0, "the weight of the progressive term, in [0, 1]"),
    ("lr", lambda v: _number(v) and v > 0, "must be a positive number"),
    ("clip", lambda v: _number(v) and v > 0, "must be a positive number"),
    ("weight_decay", lambda v: _number(v) and v >= 0, "must be a non-negative number"),
    *((name, lambda v: isinstance(v, (int, float)) and 0 < v <= 1, "must be in (0, 1]")
      for name in ("final_acc", "promote_acc", "first_acc")),
    ("init_from", lambda v: isinstance(v, str) and (not v or _is_run_id(v)),
     "must be '' or a stored run's 'experiment/hash' (16 hex digits)"),
    ("experiment", lambda v: bool(v) and all(c.isalnum() or c in "-_" for c in v),
     "must be a non-empty name of letters, digits, '-' or '_'"),
)
# The rules between fields: (broken, message), each read on a config whose fields passed the tables.
_RULES = (
    (lambda c: c.progressive_alpha != 1.0 and c.loss_loops != "progressive",
     lambda c: f"progressive_alpha: weighs the progressive loss only; allowed with loss_loops={c.loss_loops!r}: "
               f"1.0 (the default), got {c.progressive_alpha!r}"),
    (lambda c: c.residual_init == "depth" and c.tied,
     lambda c: "residual_init: 'depth' scales by the untied stack's depth; a tied block has one block, "
               "allowed with tied=True: 'block'"),
    (lambda c: c.streaming and (c.T_jitter != 1 or c.loss_loops != "final"),
     lambda c: "T_jitter / loss_loops: the streaming schedule fixes its loops (T = n + 2); "
               "allowed with schedule='streaming': T_jitter=1, loss_loops='final'"),
    (lambda c: c.streaming and c.T_train != c.n_train + 2,
     lambda c: f"T_train: the streaming schedule needs T_train = n_train + 2 = {c.n_train + 2}, got {c.T_train}"),
    (lambda c: c.streaming and not c.causal,
     lambda c: "schedule: 'streaming' needs causal attention (causal=True)"),
    (lambda c: (cells := tasks_mod.board_cells(c.task)) is not None
        and (c.causal or c.n_train != cells or c.curriculum_start != cells),
     lambda c: f"task: {c.task!r} needs causal=False (a square depends on the whole board) and n_train = curriculum_start = "
               f"{tasks_mod.board_cells(c.task)} (one token per square), got causal={c.causal}, n_train={c.n_train}, "
               f"curriculum_start={c.curriculum_start}"),
    (lambda c: c.pos == "grid" and c.task != "sudoku",
     lambda c: f"pos: 'grid' encodes a sudoku board's rows, columns and boxes; allowed only with task 'sudoku', "
               f"got task {c.task!r}"),
    (lambda c: not c.tied and c.loss_loops == "progressive",
     lambda c: "loss_loops: 'progressive' restarts the loop from a detached state; the untied control has one block "
               "per loop; allowed with tied=False: 'final', 'tail'"),
    (lambda c: not c.tied and c.schedule != "fixed",
     lambda c: f"schedule: the untied control runs a fixed depth; allowed with tied=False: 'fixed', got {c.schedule!r}"),
    (lambda c: c.seed in RESERVED_SEEDS and not c.mode,
     lambda c: f"seed: {c.seed} is reserved for confirmatory runs ({RESERVED_SEEDS.start}-{RESERVED_SEEDS.stop - 1}), "
               f"which declare an execution mode; allowed: a mode from {MODES[1:]}, or a seed outside the reserved range"),
)


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
    # optimiser and schedule; see `warm_start` below); "" = from scratch
    init_from: str = ""
    # evaluation and bookkeeping
    eval_count: int = 512
    checkpoint_every: int = 250
    seed: int = 0
    mode: str = ""                   # execution mode (MODES); "" = chosen at train time (device, compile arguments)

    def __post_init__(self):
        """Every field against its table, then the rules between fields, then the model's own checks: the
        first broken one raises, naming the parameter and what is allowed, before any work."""
        for name, lo, note in _INTEGERS:
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < lo:
                raise ValueError(f"{name}: must be an integer >= {lo}{note}, got {v!r}")
        for name, allowed, what in _CHOICES:
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name}: unknown {what}{getattr(self, name)!r}; allowed: {allowed}")
        for name in _FLAGS:
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name}: must be True or False, got {getattr(self, name)!r}")
        for name, ok, wanted in _VALUES:
            if not ok(getattr(self, name)):
                raise ValueError(f"{name}: {wanted}, got {getattr(self, name)!r}")
        tasks_mod.make_task(self.task)    # raises with the allowed names
        for broken, message in _RULES:
            if broken(self):
                raise ValueError(message(self))
        self.model_config()               # the model's own checks (norm, outer_norm, pos, d_model, ...) name the parameter

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


