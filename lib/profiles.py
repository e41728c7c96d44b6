"""Profiles: the numbers each section notebook runs with, in one place per section.

`quick` is sized for a 2-core CPU (minutes, from an empty cache); `paper` holds the paper's grid
(sizes s/m/l, several seeds, test lengths to 4x n_train) for a GPU; `smoke` is a seconds-long,
meaningless-by-design run of the same code path, for pipeline tests. All run the same code.
Notebooks call `check_params` first: a bad parameter fails there, before any work, naming the
parameter, the value and what is allowed.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import NamedTuple

from .model import NORM_KINDS, NORMS, PRESETS
from .config import RunConfig, warm_start

PROFILES = ("quick", "paper", "smoke")
DEVICES = ("auto", "cpu", "cuda")


def check_params(profile: str, seeds=None, device: str = "auto", **lengths) -> None:
    """Validate a notebook's parameter cell. `lengths` are named positive integers (n, T, ...)."""
    if profile not in PROFILES:
        raise ValueError(f"PROFILE: unknown profile {profile!r}; allowed: {PROFILES}")
    if device not in DEVICES:
        raise ValueError(f"DEVICE: unknown device {device!r}; allowed: {DEVICES}")
    if seeds is not None:
        if (not isinstance(seeds, (list, tuple)) or not seeds
                or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds)):
            raise ValueError(f"SEEDS: must be a non-empty list of integers >= 0, got {seeds!r}")
    for name, v in lengths.items():
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{name}: must be an integer >= 1, got {v!r}")


def resolve_device(device: str) -> str:
    """'auto' -> 'cuda' when a GPU is visible, else 'cpu'."""
    import torch
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("DEVICE: 'cuda' requested but no GPU is visible; allowed here: 'auto', 'cpu'")
    return device


# ---------------------------------------------------------------------------------------------
# 03 budget law

@dataclass(frozen=True)
class BudgetLawPlan:
    runs: tuple[RunConfig, ...]    # one per (contract, seed, size), the settled-loops recipe
    fixed: tuple[RunConfig, ...]   # contrast: the same contracts at one fixed T, loss at the last loop
    n_long: int                    # longer test length for rescue and the halting rule
    loops_factor: int              # test-time loops at n_long up to loops_factor x the contract's loops there
    learned_acc: float             # in-distribution sequence accuracy for a run to count as learned
    eval_count: int

    def configs(self) -> tuple[RunConfig, ...]:
        """Every run this plan trains, parents before children, each once."""
        return tuple(dict.fromkeys(self.runs + self.fixed))


# The quick profile was settled by measurement (searches/quick_profile_search.py, results in
# searches/results/quick_profile_search.jsonl and the closing note).
_QUICK_BASE = RunConfig(experiment="budget_law", task="S4", n_train=8, n_layers=2, d_model=64, n_heads=4,
                        injection="adapter", batch=128, lr=1e-3, warmup=100, max_steps=12000, polish_steps=300)
_QUICK_T = (16, 8, 4, 2)           # demand n_train / T_train = 0.5, 1, 2, 4

# The settled-loops recipe, picked by searches/settle_search.py under the rule written in its docstring
# before any candidate trained (results in searches/results/settle_search.jsonl): the budget at each
# curriculum length holds the contract's demand (T = ceil(n T_train / n_train)), each batch draws its
# loops in [T, 2T], an outer norm keeps the state bounded, and the loss is the mean over every loop
# from T on, so a loop is asked to keep its answer past the budget. The contract stays
# (n_train, T_train): the fewest loops a batch of length n_train is given.
# (By that rule this recipe settles but does not keep the law: seed 2 at demand 0.5 did not learn, and the
# learned seeds agree so closely that the exponent's 95 % interval, [1.04, 1.07], excludes exactly 1, though
# it lies inside the paper's 0.98 ± 0.10. No candidate does both: the fixed-budget variant
# (fixed_jit2_outer_tail) learns every demand in both seeds and settles, but its interval, [1.008, 1.074],
# excludes 1 too; the lr 5e-4 variant learns every demand in both seeds but neither settles (seed 0 at
# demand 1: a raw fixed point on 2 % of inputs) nor keeps the law (interval [0.871, 0.965]). So no
# candidate keeps the law by the rule, and by its fallback every section takes the best settler, this
# recipe (mean best whole-word accuracy at 2 n_train 0.65 against 0.61). Over their learned runs the three
# recipes with every demand learned in some seed read exponents 1.05, 1.04 and 0.92: the recipe moves the
# exponent more than the seeds' intervals are wide.)
SETTLED = dict(schedule="proportional", T_jitter=2.0, outer_norm=True, loss_loops="tail")
_QUICK_SETTLED_T = (16, 8, 4)      # demand 4 (T = 2) is not learned by this model size under the fixed
                                   # recipe (03's contrast rows); not trained under the settled one

# The paper profile trains sizes s and m by default; size l (4 layers, d = 512) is optional
# (`sizes=PAPER_SIZES_WITH_L`). The profile's upper-bound cost on one H200 without it is in bench/README.md's
# paper-plan table (`python -m bench.paper_plan --no-train --update`: 5.6 h with the S4 contests); size l
# added about 3 h when last planned (8 h against 5 h, before the contests moved to S4): over the 6 h one
# GPU session is given.
PAPER_SIZES = ("s", "m")
PAPER_SIZES_WITH_L = ("s", "m", "l")

_PAPER_BASE = replace(_QUICK_BASE, n_train=16, batch=256, lr=3e-4, max_steps=40000, polish_steps=2000)
_PAPER_T = (32, 16, 8, 4)
_SMOKE_BASE = replace(_QUICK_BASE, experiment="smoke", task="S3", n_train=4, d_model=16, n_heads=2, batch=16,
                      max_steps=30, warmup=5, eval_count=64)


def check_sizes(sizes) -> tuple[str, ...]:
    """The paper profile's model sizes: None means `PAPER_SIZES`."""
    if sizes is None:
        return PAPER_SIZES
    if not isinstance(sizes, (list, tuple)) or not sizes or not all(z in PRESETS for z in sizes):
        raise ValueError(f"SIZES: must be a non-empty list of model sizes from {sorted(PRESETS)}, got {sizes!r}")
    return tuple(sizes)


# the exponent's interval needs >= 2 seeds at every demand; three seeds a demand, as the issue asks
BUDGET_SEEDS = {"smoke": (0,), "quick": (0, 1, 2), "paper": (0, 1, 2)}


def budget_law(profile: str, seeds=None, sizes=None, contrast_seeds=None) -> BudgetLawPlan:
    """seeds None: the profile's (`BUDGET_SEEDS`); sizes: the paper profile's model sizes (None:
    `PAPER_SIZES`; the quick and smoke profiles have one size each); contrast_seeds: the seeds of the
    fixed-T contrast (None: the first seed only: the contrast is read beside the law, not fitted;
    annealing asks for its own seeds' fixed-T runs)."""
    check_params(profile, None if seeds is None else list(seeds))
    seeds = BUDGET_SEEDS[profile] if seeds is None else tuple(seeds)
    contrast_seeds = seeds[:1] if contrast_seeds is None else tuple(contrast_seeds)
    sizes = check_sizes(sizes)
    if profile == "quick":
        runs = tuple(replace(_QUICK_BASE, T_train=T, seed=s, **SETTLED) for T in _QUICK_SETTLED_T for s in seeds)
        fixed = tuple(replace(_QUICK_BASE, T_train=T, seed=s) for T in _QUICK_T for s in contrast_seeds)
        return BudgetLawPlan(runs, fixed, n_long=2 * _QUICK_BASE.n_train, loops_factor=4, learned_acc=0.9,
                             eval_count=512)
    if profile == "smoke":
        runs = tuple(replace(_SMOKE_BASE, T_train=T, seed=s, **SETTLED) for T in (8, 4, 2) for s in seeds)
        fixed = tuple(replace(_SMOKE_BASE, T_train=T, seed=s) for T in (8, 4, 2, 1) for s in contrast_seeds)
        return BudgetLawPlan(runs, fixed, n_long=8, loops_factor=2, learned_acc=0.0, eval_count=64)
    runs = tuple(replace(_PAPER_BASE, T_train=T, seed=s, **SETTLED, **PRESETS[size])
                 for size in sizes for T in _PAPER_T for s in seeds)
    # the contrast at the first size only: it is read beside the law, not fitted
    fixed = tuple(replace(_PAPER_BASE, T_train=T, seed=s, **PRESETS[sizes[0]]) for T in _PAPER_T for s in contrast_seeds)
    return BudgetLawPlan(runs, fixed, n_long=4 * _PAPER_BASE.n_train, loops_factor=4, learned_acc=0.9,
                         eval_count=1024)


# ---------------------------------------------------------------------------------------------
# 01 tail saturation and 02 tau calibration

@dataclass(frozen=True)
class CalibrationPlan:
    streaming: tuple[RunConfig, ...]   # positive control: serial computation forced by the input schedule
    shortcut: tuple[RunConfig, ...]    # shortcut control: a task with a constant-depth solution
    free: tuple[RunConfig, ...]        # free-trained models (the budget-law runs)
    test_ns: tuple[int, ...]           # lengths for tau against n; loops max(T_train, ceil(T_train n / n_train))
    eval_count: int
    patch_inputs: int                  # clean inputs per damage-cone grid
    threshold: float                   # damage arrives where >= threshold of inputs flip
    alpha: float                       # patch strength

    def configs(self) -> tuple[RunConfig, ...]:
        """Every run this plan trains, parents before children, each once."""
        return tuple(dict.fromkeys(self.streaming + self.shortcut))


def calibration(profile: str, seeds=(0,)) -> CalibrationPlan:
    check_params(profile, list(seeds))
    free = budget_law(profile, seeds).runs
    if profile == "smoke":
        base = _SMOKE_BASE
        return CalibrationPlan(
            tuple(replace(base, experiment="smoke", schedule="streaming", T_train=base.n_train + 2, seed=s) for s in seeds),
            tuple(replace(base, experiment="smoke", task="increment", T_train=4, seed=s) for s in seeds),
            free, (2, 3, 4), 64, 4, 0.5, 1.0)
    base = _QUICK_BASE if profile == "quick" else _PAPER_BASE
    n = base.n_train
    streaming = tuple(replace(base, experiment="calibration", schedule="streaming", T_train=n + 2, seed=s)
                      for s in seeds)
    # LSB-first increment: y_i = x_i xor (x_1 = ... = x_{i-1} = 1). One attention read ("are all
    # earlier bits 1?") computes every position at once, so a model that finds it settles every
    # position in the same loop: tau flat in position and in n.
    shortcut = tuple(replace(base, experiment="calibration", task="increment", n_train=2 * n, T_train=4, seed=s)
                     for s in seeds)
    # tau against n is read inside the training range here (the calibration is in distribution); beyond it: 04
    test_ns = tuple(range(2, n + 1)) if profile == "quick" else (8, 12, 16, 24, 32, 48, 64)
    return CalibrationPlan(streaming, shortcut, free, test_ns, 512 if profile == "quick" else 1024, 32, 0.5, 1.0)


@dataclass(frozen=True)
class TailPlan:
    settled: tuple[RunConfig, ...]      # the population: S4 models of the settled recipe, seeds x contracts
    fixed: tuple[RunConfig, ...]        # contrast: the fixed-T recipe at the same contracts (no fixed points)
    ood_factor: int                     # OOD length = ood_factor * n_train, loops scaled alike
    long_factor: int                    # loops scanned at the OOD length = long_factor x the run's loops there
    conv_factor: int                    # loops run to find a fixed point (tail past tau*, Prop. 1) = conv_factor * T_train
    eval_count: int
    probes: int                         # random directions for the Jacobian alignment

    def configs(self) -> tuple[RunConfig, ...]:
        """Every run this plan trains, parents before children, each once."""
        return tuple(dict.fromkeys(self.settled + self.fixed))


# quick: seeds 0-6 (17 models); paper: the budget law's runs
TAIL_SEEDS = {"smoke": (0,), "quick": tuple(range(7)), "paper": (0, 1, 2)}
DEMANDING_SEEDS = 3        # seeds 0-2 train every demand; later seeds skip demand 0.5 (its slow loops
                           # make it the costliest contract: ~2 CPU-hours a seed in the quick profile)


def tail_saturation(profile: str, seeds=None) -> TailPlan:
    """The population (one task family, S4): the budget-law contracts of the settled recipe, at every
    demand for seeds below `DEMANDING_SEEDS` and at demands >= 1 for the others (quick: seeds 0-6, 9 + 8
    = 17 models); the contrast: the fixed-T runs of seed 0. seeds None: the profile's
    (`TAIL_SEEDS`)."""
    check_params(profile, None if seeds is None else list(seeds))
    seeds = TAIL_SEEDS[profile] if seeds is None else tuple(seeds)
    settled = tuple(c for c in budget_law(profile, seeds).runs if c.seed < DEMANDING_SEEDS or c.demand >= 1)
    fixed = budget_law(profile, (0,)).fixed            # the contrast is always seed 0's fixed-T runs (as 03's)
    return TailPlan(settled, fixed, 2, 4, 8, 256 if profile != "paper" else 1024, 4)


# ---------------------------------------------------------------------------------------------
# 04 architecture prior

@dataclass(frozen=True)
class ArchitecturePlan:
    tied: tuple[RunConfig, ...]        # the weight-tied model, NoPE (the budget-law run at demand 1)
    untied: tuple[RunConfig, ...]      # untied control: n_layers * T_train distinct layers, params matched by width
    tied_scan: tuple[RunConfig, ...]   # tied, with scan-address positions a log-depth scan could use
    untied_scan: tuple[RunConfig, ...]
    untied_a5: tuple[RunConfig, ...]   # the untied control on A5 (operator-first, as the tied A5 runs of 05)
    extra: tuple[RunConfig, ...]       # paper profile: learned and rotary positions, both tyings
    test_ns: tuple[int, ...]           # lengths for tau against n (tied: loops scaled with n)
    long_ns: tuple[int, ...]           # extrapolation lengths
    eval_count: int

    def configs(self) -> tuple[RunConfig, ...]:
        """Every run this plan trains, parents before children, each once."""
        return tuple(dict.fromkeys(self.tied + self.untied + self.tied_scan + self.untied_scan + self.untied_a5 + self.extra))


@functools.lru_cache(maxsize=None)
def _n_params(model_config) -> int:
    """Parameter count of a model config. The count is affine in the number of distinct blocks, so it
    is read off models of one and two blocks (an untied paper-size candidate has 16 big blocks, slow
    to build and initialise hundreds of times while the widths are searched)."""
    from .model import LoopedTransformer
    one, two = (LoopedTransformer(replace(model_config, n_blocks=k)).n_params() for k in (1, 2))
    return one + (model_config.n_blocks - 1) * (two - one)


def matched_untied(cfg: RunConfig) -> RunConfig:
    """The untied control for a tied config: the same depth (n_layers * T_train layer applications, now
    each its own layer) and about the same parameter count, matched by shrinking the width to the
    multiple of n_heads whose parameter count is closest to the tied model's."""
    target = _n_params(cfg.model_config())
    best = None
    # rotary positions rotate pairs of coordinates: a width whose head width is odd is no candidate
    # (checked before the config is built, which would refuse it)
    step = 2 * cfg.n_heads if cfg.pos == "rotary" else cfg.n_heads
    for d in range(step, cfg.d_model + 1, step):
        c = replace(cfg, tied=False, d_model=d)
        gap = abs(_n_params(c.model_config()) - target)
        if best is None or gap < best[0]:
            best = (gap, c)
    return best[1]


# The quick untied control's recipe: searches/untied_search.py's pick by its logged rule, (name, changes) as
# its RECIPES has it (tests/test_thin_08_09.py holds it against the log); None while no candidate learns.
UNTIED_PICK: tuple[str, dict] | None = (
    "depth_init_lr3e-4_60k", {"residual_init": "depth", "lr": 3e-4, "warmup": 1000, "max_steps": 60000})


def architecture_prior(profile: str, seeds=(0,), sizes=None) -> ArchitecturePlan:
    """sizes: the paper profile's model sizes of the tied runs (and so of their untied controls); None:
    `PAPER_SIZES`."""
    check_params(profile, list(seeds))
    sizes = check_sizes(sizes)
    if profile == "smoke":
        tied = tuple(replace(_SMOKE_BASE, T_train=4, seed=s) for s in seeds)
        test_ns, long_ns, count = (2, 3, 4), (6,), 64
    elif profile == "quick":
        tied = tuple(replace(_QUICK_BASE, T_train=_QUICK_BASE.n_train, seed=s) for s in seeds)   # budget-law 8/8
        # tau against n to 2 n_train (issue 21, item 2): the scaling class read past the training length too
        test_ns, long_ns, count = tuple(range(2, 2 * _QUICK_BASE.n_train + 1)), (12, 16), 512
    else:
        tied = tuple(replace(_PAPER_BASE, T_train=_PAPER_BASE.n_train, seed=s, **PRESETS[size])   # budget-law runs
                     for size in sizes for s in seeds)
        test_ns, long_ns, count = (8, 12, 16, 24, 32, 48, 64), (32, 64), 1024
    exp = "smoke" if profile == "smoke" else "architecture_prior"
    # quick: the untied control trains by the recipe search's pick (its A5 run too: same recipe and budget)
    pick = UNTIED_PICK[1] if profile == "quick" and UNTIED_PICK is not None else {}
    untied = tuple(replace(matched_untied(c), experiment=exp, **pick) for c in tied)
    tied_scan = tuple(replace(c, experiment=exp, pos="scan") for c in tied)
    # the untied scan-address control costs a run per seed; the quick profile leaves it to the paper profile
    untied_scan = tuple(replace(c, pos="scan") for c in untied) if profile != "quick" else ()
    a5 = operator_wall(profile, seeds).runs[(_WALL_GROUPS[profile][0], "operator_first")]
    untied_a5 = tuple(replace(matched_untied(c), experiment=exp, **pick) for c in a5)
    # learned / rotary positions: tied runs and their own matched untied controls (a learned table
    # adds max_len x d parameters, so the match is redone per encoding)
    extra = () if profile != "paper" else tuple(
        replace(c, experiment=exp, pos=p) for p in ("learned", "rotary") for c in tied) + tuple(
        replace(matched_untied(replace(c, pos=p)), experiment=exp) for p in ("learned", "rotary") for c in tied)
    return ArchitecturePlan(tied, untied, tied_scan, untied_scan, untied_a5, extra, test_ns, long_ns, count)


# ---------------------------------------------------------------------------------------------
# 05 operator wall

CURRICULA = {   # how a run meets the operator g∘h (length-2 words) and the iteration (longer words)
    # operator first: length-2 words only until position-2 accuracy >= first_acc (the Cayley table),
    # then +1 length whenever the windowed last-position accuracy >= promote_acc
    "operator_first": dict(curriculum_start=2),
    # joint: every batch at full length from step 0 (operator and iteration learned together)
    "joint": dict(curriculum_start=None),
}


_WALL_GROUPS = {"smoke": ("A4", "S3"), "quick": ("A5", "S5"), "paper": ("A5", "S5")}


@dataclass(frozen=True)
class OperatorWallPlan:
    runs: dict                          # (group, curriculum) -> tuple of RunConfig (one per seed)
    streaming: tuple[RunConfig, ...]    # forced seriality: the streaming schedule ...
    free: tuple[RunConfig, ...]         # ... against free training on the same task (paired by position)
    long_ns: tuple[int, ...]
    eval_count: int
    learned_acc: float

    def configs(self) -> tuple[RunConfig, ...]:
        """Every run this plan trains, parents before children, each once."""
        return tuple(dict.fromkeys(tuple(c for cfgs in self.runs.values() for c in cfgs) + self.free + self.streaming))


def operator_wall(profile: str, seeds=(0, 1)) -> OperatorWallPlan:
    check_params(profile, list(seeds))
    if profile == "smoke":
        base, long_ns, count = replace(_SMOKE_BASE, T_train=4, plateau_stop=10), (6,), 64
    elif profile == "quick":
        # 20k steps: A5 and S5 tables are 3,600 and 14,400 products against S4's 576
        base = replace(_QUICK_BASE, experiment="operator_wall", T_train=_QUICK_BASE.n_train, max_steps=20000)
        long_ns, count = (12, 16), 512
    else:
        base = replace(_PAPER_BASE, experiment="operator_wall", T_train=_PAPER_BASE.n_train, max_steps=100000,
                       **PRESETS["s"])
        long_ns, count = (32, 64), 1024
    groups = _WALL_GROUPS[profile]
    runs = {}
    for g in groups:
        for name, knobs in CURRICULA.items():
            start = knobs["curriculum_start"] or base.n_train
            # joint runs stop when the loss has not improved 2 % in plateau_stop steps (a measured
            # deadlock); operator-first runs get every step up to max_steps
            plateau = (base.plateau_stop or 4000) if name == "joint" else 0
            runs[(g, name)] = tuple(replace(base, task=g, curriculum_start=start, plateau_stop=plateau, seed=s)
                                    for s in seeds)
    # forced seriality, paired with free training of the same task: S4 (the calibration streaming
    # run against the budget-law run at T = n) and the first group of the wall (operator-first)
    cal = calibration(profile, seeds[:1])
    exp = budget_law(profile, seeds[:1]).runs[0].experiment
    free_s4 = tuple(replace(c, experiment=exp, schedule="fixed", T_train=c.n_train) for c in cal.streaming)
    free_g = runs[(groups[0], "operator_first")][:1]
    stream_g = tuple(replace(c, schedule="streaming", T_train=c.n_train + 2) for c in free_g)
    return OperatorWallPlan(runs, cal.streaming + stream_g, free_s4 + free_g, long_ns, count, 0.9)


WALL_SEEDS = {"smoke": (0, 1, 2), "quick": (0, 1, 2), "paper": (0, 1, 2)}   # issue 21: >= 3 seeds each
_FAIR_GROUPS = {"smoke": ("S3", "A4", "Z4"), "quick": ("S5", "A5", "S4"),
                "paper": ("S5", "A5", "S4")}   # the wall, NC1-complete, solvable
# The paper profile's equal budget: its 24 runs at the old wall's 100,000 steps would cost 1.25 H200 h
# (upper bound, bench/paper_plan.py) and the profile 6.4 h, past the one 6 h session it is given; 60,000
# is the most steps, in round ten-thousands, that keeps the profile inside it. A cost rule, fixed before
# any paper run trained; quick and smoke keep the old wall's operator-first budget.
_FAIR_STEPS = {"paper": 60000}


def fair_wall_groups(profile: str) -> dict:
    """The equal-budget wall's groups by role: the wall, the NC1-complete group, the solvable one."""
    check_params(profile, None)
    if profile not in _FAIR_GROUPS:
        raise ValueError(f"profile: the equal-budget wall is planned for {sorted(_FAIR_GROUPS)}, not {profile!r}")
    return dict(zip(("wall", "nc1", "solvable"), _FAIR_GROUPS[profile]))


def fair_wall(profile: str, seeds=None) -> OperatorWallPlan:
    """The operator wall at equal step budgets (issue 21, item 3), fixed before any of its new runs trained.
    The wall's recipe (`operator_wall`'s base: fixed T = n_train; quick 20,000 steps, paper `_FAIR_STEPS`), seeds `WALL_SEEDS`
    (0-2), for S5 (the wall), A5 (NC1-complete, order 60) and S4 (solvable: what A5 is judged against,
    under the same recipe and budget), each joint and operator-first, and every run offered the same
    max_steps: joint runs no longer stop at a plateau (plateau_stop 0; the deadlock is read from their
    logged loss as before), and a run still stops early once it has learned (every curriculum alike).
    Forced seriality, each streaming run paired with free training of the same task, seed and curriculum:
    S5 operator-first (the wall with its help) and S4 joint (a task with no operator-first help), streaming
    with T = n_train + 2 loops. The operator-first S5 and A5 seeds 0-1 are `operator_wall`'s runs, not
    trained twice (python -m lib.cli train operator_wall trains the rest: 05 reads this plan)."""
    check_params(profile, None if seeds is None else list(seeds))
    seeds = WALL_SEEDS[profile] if seeds is None else tuple(seeds)
    old = operator_wall(profile, (0,))
    first = next(iter(old.runs.values()))[0]
    base = replace(first, plateau_stop=0, max_steps=_FAIR_STEPS.get(profile, first.max_steps))
    runs = {(g, name): tuple(replace(base, task=g, curriculum_start=knobs["curriculum_start"] or base.n_train, seed=s)
                             for s in seeds)
            for g in _FAIR_GROUPS[profile] for name, knobs in CURRICULA.items()}
    s5, s4 = _FAIR_GROUPS[profile][0], _FAIR_GROUPS[profile][2]
    free = runs[(s5, "operator_first")] + runs[(s4, "joint")]
    streaming = tuple(replace(c, schedule="streaming", T_train=c.n_train + 2) for c in free)
    return OperatorWallPlan(runs, streaming, free, old.long_ns, old.eval_count, old.learned_acc)


# ---------------------------------------------------------------------------------------------
# 06 portability (budget annealing)

@dataclass(frozen=True)
class AnnealingPlan:
    start: tuple[RunConfig, ...]                     # one per seed: the first contract, from scratch
    chains: tuple[tuple[RunConfig, ...], ...]        # per seed: the annealed runs, contract by contract
    scratch: tuple[tuple[RunConfig, ...], ...]       # per seed: from-scratch runs at each later contract
    learned_acc: float
    eval_count: int
    # the lottery branch (issue 21, item 4): per seed, one more contract warm-started from the chain's
    # step `branch_from`, and the from-scratch run of that contract; empty where the profile has none
    branch: tuple[RunConfig, ...] = ()
    branch_scratch: tuple[RunConfig, ...] = ()
    branch_from: int = 0

    def configs(self) -> tuple[RunConfig, ...]:
        """Every run this plan trains, parents before children, each once."""
        return tuple(dict.fromkeys(self.start + tuple(c for col in self.scratch for c in col) + tuple(c for ch in self.chains for c in ch)
                                   + self.branch_scratch + self.branch))


ANNEALING_SEEDS = {"smoke": (0, 1), "quick": (0, 1, 2, 3), "paper": (0, 1, 2, 3)}   # the paper: 4 seeds
# Issue 21, item 4, fixed on 2026-12-02 before seeds 2-3 trained, but with seeds 0-1 known (whole-word
# accuracy in their final evaluations: from scratch T = 4 learned by both, T = 2 by neither, 0.02 / 0.11;
# annealed T = 4 transferred in both, annealed T = 2 0.55 / 0.49): quick moved to the paper's four seeds
# once seeds 2-3 are trained (python -m lib.cli train annealing --seeds 2,3), the chain unchanged (T = 8 -> 4
# -> 2 at n = 8, fixed-T recipe, from-scratch step budget per step). The claims are judged at the hardest
# contract of the chain that from-scratch training shows the block can hold (some from-scratch seed learns
# it; `portability.annealing_results`), the seed lottery is the share of the four from-scratch seeds that
# learn it, and "bypasses the lottery" needs a lottery there (some from-scratch seed fails) or reads not
# measured. Revised the same day, before any seed 2-3 annealed run was read: the first version let the
# annealed runs themselves decide the judged contract; seeds 0-1, known when the rule was written, are
# named (ANNEALING_SEEN_SEEDS) and the transfer fraction over seeds 2-3 alone is reported beside the whole.
ANNEALING_SEEN_SEEDS = (0, 1)
# Issue 21, item 4, the lottery branch, fixed on 2026-12-03 before any of its runs trained: the chain's
# judged contract (T = 4) is learned from scratch by all four seeds and its last one (T = 2) by none, so
# the seed lottery has no contract to be read at. Known when fixed: no run at T = 3, n = 8 exists; the
# fixed-T recipe's scratch seeds 0-3 learn T = 4 (4/4) and not T = 2 (0/4); under the contests' recipe
# (proportional T, tail loss, not this chain's) 2 of 21 seeds fail T = 4. The branch adds the contract
# between the chain's last two, T = (n/2 + n/4) // 2 (quick: 3, demand 8/3), each seed's annealed T = n/2
# run warm-started into it with the from-scratch budget, beside from-scratch runs of it (the budget law's
# fixed recipe, seeds 0-3). Nothing else changes: `portability.annealing_results` judges, as before, at
# the hardest contract some from-scratch seed learns, now over T in {n/2, 3n/8, n/4}; where every or no
# scratch seed learns T = 3 the lottery stays not measured. The T = 4 verdicts stay printed beside.


def annealing(profile: str, seeds=None) -> AnnealingPlan:
    """Budget annealing at a fixed n: T = n -> n/2 -> n/4, each step warm-started from the last
    (weights only; fresh optimiser, warmup and polish; full length from the first step; the
    from-scratch step budget per step), against
    from-scratch runs of the same contracts (the budget-law runs). seeds None: the profile's
    (`ANNEALING_SEEDS`: the paper's four in every profile but smoke)."""
    check_params(profile, None if seeds is None else list(seeds))
    seeds = ANNEALING_SEEDS[profile] if seeds is None else tuple(seeds)
    law = budget_law(profile, seeds, contrast_seeds=seeds)
    n = law.runs[0].n_train
    Ts = (n, n // 2, n // 4) if profile != "smoke" else (4, 2, 1)
    # the annealing chain keeps the fixed-T recipe it was measured with (its from-scratch runs are the
    # budget law's fixed contrast)
    by = {(c.T_train, c.seed): c for c in law.fixed if c.d_model == law.fixed[0].d_model}   # paper: size s
    start = tuple(by[(Ts[0], s)] for s in seeds)
    # each annealing step gets the from-scratch runs' step budget: at the final contract the annealed
    # and the scratch run then train equally long, so "learned" compares like with like
    anneal_steps = start[0].max_steps
    chains = []
    for first in start:
        chain, parent = [], first
        for T in Ts[1:]:
            parent = warm_start(parent, experiment="portability" if profile != "smoke" else "smoke", T_train=T,
                                max_steps=anneal_steps)
            chain.append(parent)
        chains.append(tuple(chain))
    scratch = tuple(tuple(by[(T, s)] for T in Ts[1:]) for s in seeds)
    T_branch = (Ts[1] + Ts[2]) // 2
    if profile == "smoke" or not Ts[2] < T_branch < Ts[1]:
        return AnnealingPlan(start, tuple(chains), scratch, law.learned_acc, law.eval_count)
    branch = tuple(warm_start(chain[0], T_train=T_branch) for chain in chains)
    branch_scratch = tuple(replace(by[(Ts[1], s)], T_train=T_branch, experiment="portability") for s in seeds)
    return AnnealingPlan(start, tuple(chains), scratch, law.learned_acc, law.eval_count, branch, branch_scratch, 0)


# ---------------------------------------------------------------------------------------------
# 07 seed contests

@dataclass(frozen=True)
class ContestPlan:
    contests: dict                 # name -> tuple of RunConfig, one per seed
    targets: dict                  # name -> the target's test length n_ood (beyond n_train)
    threshold: float               # a seed "generalizes" when its OOD accuracy >= threshold
    eval_count: int
    probes: int                    # random directions for the Jacobian alignment
    conv_factor: int               # loops the tail is read over: conv_factor * T_train (fixed point tau*, then
                                   # the tail metrics past it, as notebook 01)
    tail_count: int                # inputs the tail metrics are read on (notebook 01's count)

    def __post_init__(self):
        for name, cfgs in self.contests.items():
            if self.targets.get(name, 0) <= cfgs[0].n_train:
                raise ValueError(f"targets: contest {name!r} needs a test length beyond n_train={cfgs[0].n_train}, "
                                 f"got {self.targets.get(name)}")

    def configs(self) -> tuple[RunConfig, ...]:
        """Every run this plan trains, parents before children, each once."""
        return tuple(dict.fromkeys(c for cfgs in self.contests.values() for c in cfgs))

    def n_ood(self, name: str) -> int:
        """The contest's out-of-distribution test length."""
        return self.targets[name]

    def T_ood(self, name: str) -> int:
        """Loops at the test length: what the contest's runs get there (`RunConfig.loops_at`, the one rule)."""
        return self.contests[name][0].loops_at(self.n_ood(name))


# Contest seeds on group word problems: above the pilot's seeds (searches/contest_pilot.py), which chose the
# contests' test lengths and never enter a contest. Seeds 3-6 at T = 8 and T = 4 are also members of the
# tail population (01), where only their OOD accuracy and tail metrics are read, never a head metric.
CONTEST_PILOT_SEEDS = (0, 1, 2)
CONTEST_SEEDS = tuple(range(3, 19))
CONTEST_THRESHOLD = 0.5     # a seed "generalizes" at OOD whole-word accuracy >= this: the pilot's and the contests'
# The quick contests' test lengths, chosen by the pilot's rule on its OOD accuracies alone
# (searches/results/contest_pilot.json, 2026-12-01; tests/test_contest.py holds the two equal): at 2 n_train
# the T = 8 pilot seeds all generalize (0.83-0.89) and the T = 4 ones all fail (0.00-0.29), so each
# contest reads the longest length at which its pilot seeds split.
CONTEST_TARGETS = {"S4 n8 T8": 22, "S4 n8 T6": 15, "S4 n8 T4": 15}


def contest_contracts(profile: str) -> dict[str, RunConfig]:
    """The contracts the group-word-problem contests are drawn from (seed 0 in each config; one
    contest = one contract x its seeds, `contest_config`): S4 prefix products under the settled recipe
    with the budget-law model, at T = n_train, 3/4 n_train and n_train / 2. The first and last are
    budget-law contracts in the quick profile, so contest seeds 3-6 there share their stored runs with
    the tail population (notebook 01); T = 3/4 n_train is trained for the contests alone. Which
    contracts become contests, and at which test length, is decided by the pilot
    (searches/contest_pilot.py) on seeds that never enter a contest."""
    check_params(profile, [0])
    base = {"smoke": _SMOKE_BASE, "quick": _QUICK_BASE, "paper": replace(_PAPER_BASE, **PRESETS["s"])}[profile]
    n = base.n_train
    return {f"{base.task} n{n} T{T}": replace(base, T_train=T, **SETTLED) for T in (n, 3 * n // 4, n // 2)}


def contest_config(base: RunConfig, seed: int) -> RunConfig:
    """One contest seed of a contract from `contest_contracts`."""
    return replace(base, seed=seed)


def contests(profile: str, seeds=None) -> ContestPlan:
    """The three seed contests of notebook 07: the contracts of `contest_contracts`, each trained from
    every seed in `seeds` (default CONTEST_SEEDS, smoke its first four; the pilot's seeds and duplicates
    are refused). quick: the contracts
    and test lengths the pilot kept (CONTEST_TARGETS); paper: 2 n_train, the issue's default, because no
    pilot has run at the paper's scale (run searches/contest_pilot.py there first and record its lengths
    here); smoke: tiny S3 contests at 2 n_train, for tests."""
    if seeds is None:                       # smoke: four seeds, enough for the plumbing
        seeds = CONTEST_SEEDS[:4] if profile == "smoke" else CONTEST_SEEDS
    seeds = list(seeds) if isinstance(seeds, range) else seeds
    check_params(profile, seeds)
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"SEEDS: duplicate seeds {sorted(s for s in set(seeds) if seeds.count(s) > 1)} would count a "
                         f"seed twice in every AUROC; allowed: distinct seeds >= {max(CONTEST_PILOT_SEEDS) + 1}")
    if set(seeds) & set(CONTEST_PILOT_SEEDS):
        raise ValueError(f"SEEDS: seeds {sorted(set(seeds) & set(CONTEST_PILOT_SEEDS))} are the pilot's, which chose "
                         f"the contests' test lengths and never enter a contest; allowed: seeds >= "
                         f"{max(CONTEST_PILOT_SEEDS) + 1} (default {CONTEST_SEEDS[0]}-{CONTEST_SEEDS[-1]})")
    contracts = contest_contracts(profile)
    if profile == "quick":
        targets = dict(CONTEST_TARGETS)
    else:
        targets = {name: 2 * c.n_train for name, c in contracts.items()}
    eval_count = {"smoke": 64, "quick": 512, "paper": 1024}[profile]
    probes = 2 if profile == "smoke" else 4
    # the tail metrics on as many inputs as notebook 01 reads them (256 quick: half the head's count, and
    # half the cost of the tail's forward-mode Jacobians; set before any contest seed's metric was read)
    tail_count = {"smoke": 64, "quick": 256, "paper": 1024}[profile]
    return ContestPlan({name: tuple(contest_config(contracts[name], s) for s in seeds) for name in targets},
                       targets, CONTEST_THRESHOLD, eval_count, probes, 8, tail_count)


# ---------------------------------------------------------------------------------------------
# 08 easy-to-hard replication and 09 fixed-point stability (Paper B)

# The quick prefix-sums run every candidate of searches/prefix_sums_search.py changes (held apart, so a pick
# applied to notebook 08 does not move the search's own runs)
PREFIX_SUMS_SEARCH_BASE = RunConfig(experiment="easy_to_hard", task="prefix_sums", n_train=16, T_train=16, n_layers=1,
                                    d_model=32, n_heads=2, batch=128, max_steps=8000, polish_steps=200)
# 08's quick recipe: the search's pick by its logged rule, (name, changes to the base) as
# searches/prefix_sums_search.py's RECIPES has it (tests/test_thin_08_09.py holds it against the log's decision);
# None while the search has not decided: 08 trains the base
PREFIX_SUMS_PICK: tuple[str, dict] | None = ("settled_local", {"schedule": "proportional", "T_jitter": 2.0,
                                                                 "outer_norm": True, "loss_loops": "tail",
                                                                 "attn_window": 5})


def prefix_sums_recipe(profile: str) -> str:
    """One line on where 08's recipe of `profile` comes from (the search ran at quick scale only)."""
    if profile != "quick":
        return f"{profile} recipe: the profile's own (the prefix-sums search ran at quick scale only)"
    if PREFIX_SUMS_PICK is None:
        return "quick recipe: the search's base (no pick yet)"
    return f"quick recipe: {PREFIX_SUMS_PICK[0]} {PREFIX_SUMS_PICK[1]}"


# 08's seeds by profile (the paper profile's one seed keeps its GPU plan; quick reads two)
E2H_SEEDS = {"smoke": (0,), "quick": (0, 1), "paper": (0,)}


@dataclass(frozen=True)
class EasyToHardPlan:
    runs: tuple[RunConfig, ...]        # prefix sums at n_train (one per seed)
    test_ns: tuple[int, ...]           # test lengths (the last is the 4x claim's, or more)
    loops_factor: float                # test-time loops up to loops_factor * n (accuracy per iteration)
    eval_count: int
    conf_threshold: float              # max-confidence baseline: stop at the first loop this confident
    chess: tuple[RunConfig, ...] = ()  # the public chess puzzles, trained only where the user supplies them

    def configs(self) -> tuple[RunConfig, ...]:
        """Every run this plan trains, parents before children, each once."""
        return tuple(dict.fromkeys(self.runs))


def easy_to_hard(profile: str, seeds=None) -> EasyToHardPlan:
    """Prefix sums by the benchmark's recipe (task "prefix_sums"); the paper profile trains at 32 bits
    and tests to 512 as Schwarzschild et al.; quick trains at 16 by the search's pick (`PREFIX_SUMS_PICK`)
    and tests to 128 (8x) on a CPU. seeds None: the profile's (`E2H_SEEDS`)."""
    check_params(profile, None if seeds is None else list(seeds))
    seeds = E2H_SEEDS[profile] if seeds is None else tuple(seeds)
    # chess (64 square tokens, bidirectional, learned square positions, one looped layer)
    board = dict(experiment="chess" if profile != "smoke" else "smoke", task="chess", n_train=64, curriculum_start=64,
                 causal=False, pos="learned", n_layers=1)
    chess_size = {"smoke": dict(d_model=16, n_heads=2, T_train=2, batch=4, max_steps=3, eval_count=4),
                  "quick": dict(d_model=64, n_heads=4, T_train=16, batch=32, max_steps=3000, eval_count=512),
                  "paper": dict(d_model=128, n_heads=4, T_train=32, batch=64, max_steps=30000, eval_count=1024)}[profile]
    chess = tuple(RunConfig(**board, **chess_size, seed=s) for s in seeds)
    if profile == "smoke":
        base = replace(_SMOKE_BASE, task="prefix_sums", n_train=4, T_train=4)
        return EasyToHardPlan(tuple(replace(base, seed=s) for s in seeds), (4, 8), 1.5, 64, 0.9, chess)
    if profile == "quick":
        if PREFIX_SUMS_PICK is None:
            return EasyToHardPlan(tuple(replace(PREFIX_SUMS_SEARCH_BASE, seed=s) for s in seeds), (16, 32, 64), 1.5, 512,
                                  0.9, chess)
        base = replace(PREFIX_SUMS_SEARCH_BASE, **PREFIX_SUMS_PICK[1])
        return EasyToHardPlan(tuple(replace(base, seed=s) for s in seeds), (16, 32, 64, 128), 1.5, 512, 0.9, chess)
    base = replace(_PAPER_BASE, experiment="easy_to_hard", task="prefix_sums", n_train=32, T_train=32, **PRESETS["s"])
    return EasyToHardPlan(tuple(replace(base, seed=s) for s in seeds), (32, 64, 128, 512), 1.5, 1024, 0.9, chess)


class Knobs(NamedTuple):
    """One configuration of 09's grid: Paper B's knobs as its code has them. recall: "none", "external"
    (at the block's entry) or "internal" (inside each sublayer); outer_norm: our reading of Paper B's outer
    normalisation (a norm on the state after every loop); norm: the block's placement (model.NORMS);
    recall_op: how recall combines state and input (model.RECALL_OPS); norm_kind: "layer" or "rms"."""
    recall: str
    outer_norm: bool
    norm: str = "pre"
    recall_op: str = "add"
    norm_kind: str = "layer"


@dataclass(frozen=True)
class StabilityPlan:
    runs: dict                         # Knobs -> tuple of RunConfig (one per seed)
    test_ns: tuple[int, ...]
    long_factor: int                   # loops for the fixed-point reading = long_factor * T_train
    eval_count: int
    sudoku: dict                       # recall -> tuple of RunConfig (outer norm on; bidirectional)
    sudoku_givens: tuple[int, ...]     # test difficulties: the training one first, then fewer givens
    base: Knobs = Knobs("none", False)  # the knobs of 08's run the grid varies (labels name what differs)

    def configs(self) -> tuple[RunConfig, ...]:
        """Every run this plan trains, parents before children, each once."""
        return tuple(dict.fromkeys(c for cfgs in list(self.runs.values()) + list(self.sudoku.values()) for c in cfgs))


RECALLS = {"none": "none", "external": "add", "internal": "internal"}   # Paper B's name -> our injection


def knobs_of(cfg: RunConfig) -> Knobs:
    """The grid's knobs of one run's config."""
    recall = {v: k for k, v in RECALLS.items()}.get(cfg.injection)
    if recall is None:
        raise ValueError(f"injection: {cfg.injection!r} is not one of Paper B's recalls; allowed: "
                         f"{tuple(RECALLS.values())}")
    return Knobs(recall, cfg.outer_norm, cfg.norm, cfg.recall_op, cfg.norm_kind)


def with_knobs(cfg: RunConfig, k: Knobs) -> RunConfig:
    return replace(cfg, injection=RECALLS[k.recall], outer_norm=k.outer_norm, norm=k.norm, recall_op=k.recall_op,
                   norm_kind=k.norm_kind)


def paper_b_grid(base: Knobs) -> tuple[Knobs, ...]:
    """Paper B's knobs one at a time around `base` (08's run), fixed before any of its runs trained:
    every recall placement and op (no recall; external add / the base's op; internal add / linear / concat)
    without outer norm; no, external and internal recall with it (the base's op; concat is internal only,
    so external takes add there); the base with each other norm placement; the base with the other norm
    kind: 12 configurations around 08's quick pick (settled_local: Paper A's adapter recall, read as external
    additive, with outer norm, pre-norm, LayerNorm), 14 around a peri/RMS/internal-linear base."""
    ext_op = base.recall_op if base.recall_op != "concat" else "add"
    none = Knobs("none", False, base.norm, "add", base.norm_kind)
    grid = [none,
            none._replace(recall="external"), none._replace(recall="external", recall_op=ext_op),
            none._replace(recall="internal"), none._replace(recall="internal", recall_op="linear"),
            none._replace(recall="internal", recall_op="concat"),
            none._replace(outer_norm=True),
            none._replace(recall="external", recall_op=ext_op, outer_norm=True),
            none._replace(recall="internal", recall_op=base.recall_op, outer_norm=True),
            none._replace(recall="external", outer_norm=True)]
    grid += [base._replace(norm=n) for n in NORMS if n != base.norm]
    grid += [base._replace(norm_kind=next(k for k in NORM_KINDS if k != base.norm_kind))]
    return tuple(dict.fromkeys(grid))


def grid_base(cfg: RunConfig) -> Knobs:
    """The knobs `paper_b_grid` varies around 08's run: its own, except that Paper A's adapter recall
    (W [h, e], not one of Paper B's) is read as external additive recall, the nearest of Paper B's."""
    if cfg.injection == "adapter":
        return Knobs("external", cfg.outer_norm, cfg.norm, "add", cfg.norm_kind)
    return knobs_of(cfg)


def stability(profile: str, seeds=None) -> StabilityPlan:
    """Paper B's grid on prefix sums (single-layer looped block), on the profile's easy-to-hard runs
    (seeds None: the profile's, `E2H_SEEDS`). Quick: `paper_b_grid` around 08's run, to 08's test
    lengths; the configuration that is 08's run reads 08's runs (not trained twice), the others are
    stored under 09's experiment. Smoke and paper (the paper profile's GPU plan, unchanged): recall
    none / external / internal x outer normalisation off / on, pre-norm (the paper profile adds peri-
    and post-norm), additive recall and LayerNorm. With 09's sudoku: external against internal recall."""
    e2h = easy_to_hard(profile, seeds)
    seeds = tuple(c.seed for c in e2h.runs)
    experiment = "stability" if profile != "smoke" else "smoke"
    stored = lambda c, k: replace(with_knobs(c, k), experiment=experiment, n_layers=1)      # noqa: E731
    if profile == "quick":
        base = grid_base(e2h.runs[0])
        same = lambda c, k: replace(stored(c, k), experiment=c.experiment) == c   # noqa: E731  (08's run)
        runs = {k: tuple(c if same(c, k) else stored(c, k) for c in e2h.runs) for k in paper_b_grid(base)}
    else:
        base = Knobs("none", False)
        norms = ("pre",) if profile != "paper" else ("pre", "peri", "post")
        grid = tuple(Knobs(recall, outer, norm) for recall in RECALLS for outer in (False, True) for norm in norms)
        runs = {k: tuple(stored(c, k) for c in e2h.runs) for k in grid}
    # sudoku (Paper B: internal recall "substantially better" there): external against internal
    # recall, both with outer normalisation, a single bidirectional layer
    from .sudoku import HARDER_GIVENS, TRAIN_GIVENS
    board = sudoku_base(profile)
    if profile == "quick" and SUDOKU_PICK is not None:
        board = replace(board, **SUDOKU_PICK[1])
    sudoku = {recall: tuple(replace(board, injection=RECALLS[recall], seed=s) for s in seeds)
              for recall in ("external", "internal")}
    return StabilityPlan(runs, e2h.test_ns, 4, e2h.eval_count, sudoku, (TRAIN_GIVENS,) + HARDER_GIVENS, base)


def sudoku_base(profile: str) -> RunConfig:
    """09's sudoku run of `profile` before recall and seed: one bidirectional layer with learned cell
    positions and outer normalisation, at the public recipe's training difficulty."""
    board = dict(task="sudoku", n_train=81, curriculum_start=81, causal=False, pos="learned",
                 outer_norm=True, experiment="stability" if profile != "smoke" else "smoke")
    size = {"smoke": dict(d_model=16, n_heads=2, T_train=2, batch=8, max_steps=5, eval_count=16),
            "quick": dict(d_model=64, n_heads=4, T_train=16, batch=32, max_steps=2000, polish_steps=200,
                          eval_count=256),
            "paper": dict(**PRESETS["s"], T_train=32, batch=64, max_steps=30000, eval_count=1024)}[profile]
    return RunConfig(**{**board, **size, "n_layers": 1})


# 09's quick sudoku recipe: the pilot's pick by its logged rule, (name, changes) as searches/sudoku_pilot.py's
# RECIPES has it (tests/test_thin_08_09.py holds it against the log); None while the pilot has not decided
SUDOKU_PICK: tuple[str, dict] | None = ("grid34", {"pos": "grid", "max_steps": 4000})


# The sections whose runs the store's command line can fill (python -m lib.cli train <section>).
SECTIONS = {"budget_law": budget_law, "calibration": calibration, "tail_saturation": tail_saturation, "architecture_prior": architecture_prior,
            "operator_wall": fair_wall, "annealing": annealing, "contests": contests,
            "easy_to_hard": easy_to_hard, "stability": stability}
