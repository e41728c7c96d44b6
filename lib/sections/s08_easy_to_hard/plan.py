"""08 easy-to-hard: prefix sums by the public benchmark's recipe, trained short and tested long (the
runs themselves, `common.prefix_sums_runs`, are 09's grid base too), and the public chess puzzles where
the user supplies them."""
from __future__ import annotations

from dataclasses import dataclass, replace

from ...config import RunConfig
from .. import common
from ..common import (E2H_SEEDS, PREFIX_SUMS_EVAL_COUNT, STUDY_MODE, check_params, prefix_sums_lengths, prefix_sums_runs,
                      reserved_seeds)


def prefix_sums_recipe(profile: str) -> str:
    """One line on where 08's recipe of `profile` comes from (the search ran at quick scale only)."""
    if profile != "quick":
        return f"{profile} recipe: the profile's own (the prefix-sums search ran at quick scale only)"
    pick = common.PREFIX_SUMS_PICK
    if pick is None:
        return "quick recipe: the search's base (no pick yet)"
    return f"quick recipe: {pick[0]} {pick[1]}"


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


# chess: 64 square tokens, bidirectional, learned square positions, one looped layer
CHESS_SIZE = {"smoke": dict(d_model=16, n_heads=2, T_train=2, batch=4, max_steps=3, eval_count=4),
              "quick": dict(d_model=64, n_heads=4, T_train=16, batch=32, max_steps=3000, eval_count=512),
              "paper": dict(d_model=128, n_heads=4, T_train=32, batch=64, max_steps=30000, eval_count=1024)}


def easy_to_hard(profile: str, seeds=None) -> EasyToHardPlan:
    """Prefix sums by the benchmark's recipe (task "prefix_sums"); the paper profile trains at 32 bits
    and tests to 512 as Schwarzschild et al.; quick trains at 16 by the search's pick (`PREFIX_SUMS_PICK`)
    and tests to 128 (8x) on a CPU. seeds None: the profile's (`E2H_SEEDS`)."""
    check_params(profile, None if seeds is None else list(seeds))
    seeds = E2H_SEEDS[profile] if seeds is None else tuple(seeds)
    board = dict(experiment="chess" if profile != "smoke" else "smoke", task="chess", n_train=64, curriculum_start=64,
                 causal=False, pos="learned", n_layers=1)
    chess = tuple(RunConfig(**board, **CHESS_SIZE[profile], seed=s) for s in seeds)
    return EasyToHardPlan(prefix_sums_runs(profile, seeds), prefix_sums_lengths(profile), 1.5,
                          PREFIX_SUMS_EVAL_COUNT[profile], 0.9, chess)


# The C43-easy-to-hard study (paper/PREREGISTRATION.md): 08's quick recipe with P43-pilots' picked
# learning rate and budget. The candidates are searches/p43_pilots.py's (held equal by
# tests/test_e2h_confirm.py); E2H_CONFIRM_PICK is the pilot's logged pick once it is read, None before.
STUDY_SEEDS = reserved_seeds(170, 4)
E2H_CANDIDATES = {"lr1e-3_8k": (1e-3, 8000), "lr3e-4_16k": (3e-4, 16000), "lr1e-4_32k": (1e-4, 32000)}
E2H_CONFIRM_PICK: str | None = "lr1e-3_8k"


def confirm_recipe(pick: str | None = None) -> RunConfig | None:
    """08's quick run (seed 0, no experiment change) with the picked lr and budget; None before the pick."""
    pick = E2H_CONFIRM_PICK if pick is None else pick
    if pick is None:
        return None
    if pick not in E2H_CANDIDATES:
        raise ValueError(f"pick: unknown {pick!r}; allowed: {sorted(E2H_CANDIDATES)}")
    lr, steps = E2H_CANDIDATES[pick]
    return replace(prefix_sums_runs("quick", (0,))[0], lr=lr, max_steps=steps)


def study(pick: str | None = None) -> tuple[RunConfig, ...]:
    """The C43-easy-to-hard runs (empty before P43's pick)."""
    base = confirm_recipe(pick)
    return () if base is None else tuple(replace(base, experiment="confirm_easy_to_hard", seed=s, mode=STUDY_MODE)
                                         for s in STUDY_SEEDS)
