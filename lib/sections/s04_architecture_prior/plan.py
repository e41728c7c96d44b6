"""04 architecture prior: the weight-tied NoPE model against its untied control (the same depth, each
layer application its own layer, parameters matched by width), with scan-address positions, an untied
A5 control, and (paper) learned and rotary positions."""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace

from ...config import RunConfig
from ...model import PRESETS
from ..common import (PAPER_BASE, QUICK_BASE, SETTLED, SMOKE_BASE, STUDY_MODE, WALL_GROUPS, check_params, check_sizes,
                      reserved_seeds, wall_base, wall_runs)


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
    from ...model import LoopedTransformer
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


# The quick untied control's recipe: searches/untied_search.py's pick by its logged rule, (name, changes)
# as its RECIPES has it (tests/test_architecture.py holds it against the log); None while no candidate learns.
UNTIED_PICK: tuple[str, dict] | None = (
    "depth_init_lr3e-4_60k", {"residual_init": "depth", "lr": 3e-4, "warmup": 1000, "max_steps": 60000})


def architecture_prior(profile: str, seeds=(0,), sizes=None) -> ArchitecturePlan:
    """sizes: the paper profile's model sizes of the tied runs (and so of their untied controls); None:
    `PAPER_SIZES`."""
    check_params(profile, list(seeds))
    sizes = check_sizes(sizes)
    if profile == "smoke":
        tied = tuple(replace(SMOKE_BASE, T_train=4, seed=s) for s in seeds)
        test_ns, long_ns, count = (2, 3, 4), (6,), 64
    elif profile == "quick":
        tied = tuple(replace(QUICK_BASE, T_train=QUICK_BASE.n_train, seed=s) for s in seeds)   # budget-law 8/8
        # tau against n to 2 n_train: the scaling class read past the training length too
        test_ns, long_ns, count = tuple(range(2, 2 * QUICK_BASE.n_train + 1)), (12, 16), 512
    else:
        tied = tuple(replace(PAPER_BASE, T_train=PAPER_BASE.n_train, seed=s, **PRESETS[size])   # budget-law runs
                     for size in sizes for s in seeds)
        test_ns, long_ns, count = (8, 12, 16, 24, 32, 48, 64), (32, 64), 1024
    exp = "smoke" if profile == "smoke" else "architecture_prior"
    # quick: the untied control trains by the recipe search's pick (its A5 run too: same recipe and budget)
    pick = UNTIED_PICK[1] if profile == "quick" and UNTIED_PICK is not None else {}
    untied = tuple(replace(matched_untied(c), experiment=exp, **pick) for c in tied)
    tied_scan = tuple(replace(c, experiment=exp, pos="scan") for c in tied)
    # the untied scan-address control costs a run per seed; the quick profile leaves it to the paper profile
    untied_scan = tuple(replace(c, pos="scan") for c in untied) if profile != "quick" else ()
    a5 = wall_runs(wall_base(profile), WALL_GROUPS[profile][0], "operator_first", seeds)   # 05's tied A5 runs
    untied_a5 = tuple(replace(matched_untied(c), experiment=exp, **pick) for c in a5)
    # learned / rotary positions: tied runs and their own matched untied controls (a learned table
    # adds max_len x d parameters, so the match is redone per encoding)
    extra = () if profile != "paper" else tuple(
        replace(c, experiment=exp, pos=p) for p in ("learned", "rotary") for c in tied) + tuple(
        replace(matched_untied(replace(c, pos=p)), experiment=exp) for p in ("learned", "rotary") for c in tied)
    return ArchitecturePlan(tied, untied, tied_scan, untied_scan, untied_a5, extra, test_ns, long_ns, count)


# ---------------------------------------------------------------------------------------------
# C04-architecture, the pre-registered study (paper/PREREGISTRATION.md): the architecture prior read by
# a decoder for every block, on reserved seeds, in one execution mode

STUDY_SEEDS = reserved_seeds(110, 3)


def study_families() -> dict[str, tuple[RunConfig, ...]]:
    """Family -> its runs (seeds STUDY_SEEDS, STUDY_MODE, experiment confirm_architecture):
    the quick 04 plan's tied NoPE, tied + scan address, untied S4 and untied A5 (the untied search's pick,
    `UNTIED_PICK`), and two extrapolation comparators: a tied model trained as the untied one
    is (its learning rate, warmup and budget; only tying differs) and the settled-recipe tied model at
    T = n (`common.SETTLED`, demand 1)."""
    plan = architecture_prior("quick", seeds=(0,))
    pick = UNTIED_PICK[1]
    tied = plan.tied[0]
    bases = {"tied": tied, "tied + scan": plan.tied_scan[0], "untied": plan.untied[0], "untied A5": plan.untied_a5[0],
             "tied, untied recipe": replace(tied, **{k: v for k, v in pick.items() if k != "residual_init"}),
             "tied, settled T = n": replace(tied, **SETTLED)}
    return {name: tuple(replace(c, experiment="confirm_architecture", seed=s, mode=STUDY_MODE) for s in STUDY_SEEDS)
            for name, c in bases.items()}


def study() -> tuple[RunConfig, ...]:
    """The queue: untied S4 (three claims rest on it), tied NoPE, tied + scan, untied A5, then the two
    extrapolation comparators; seed by seed within each family."""
    fam = study_families()
    order = ("untied", "tied", "tied + scan", "untied A5", "tied, settled T = n", "tied, untied recipe")
    return tuple(dict.fromkeys(c for name in order for c in fam[name]))
