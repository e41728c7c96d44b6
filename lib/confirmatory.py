"""The confirmatory studies' runs: one plan per entry of `paper/PREREGISTRATION.md`.

Each study lists its runs in the order they should train (the runs that decide a claim first), all
on reserved seeds (`config.RESERVED_SEEDS`) and in one execution mode, `MODE`. A study's entry is
committed before any of its runs starts (tests/test_preregistration.py reads the git history against
each run's `STARTED` record); what a study reads and how it decides is written in its entry, not here.

    python -m lib.cli train confirm:C05-wall --queue     # two such processes share the queue
"""
from __future__ import annotations

from dataclasses import replace

from .config import RESERVED_SEEDS, RunConfig
from . import profiles, store

# CPU, eager, fp32, one thread: a replay of any run in this mode is bit-identical on the same machine
# (tests/test_preregistration.py replays one); compiled steps are ~1.1x faster here but round differently.
MODE = "cpu-eager-fp32"


def _seeds(first: int, count: int) -> tuple[int, ...]:
    seeds = tuple(range(first, first + count))
    assert all(s in RESERVED_SEEDS for s in seeds)
    return seeds


# ---------------------------------------------------------------------------------------------
# C05-wall: the operator wall at the paper profile's budget (issue 42)

WALL_SEEDS = _seeds(100, 3)
WALL_STEPS = 60000                  # the paper profile's equal budget (profiles._FAIR_STEPS["paper"])
WALL_STREAMING_STEPS = 20000        # every free S4 joint run of the exploratory wall learned within 7,097


def wall_cells() -> dict[tuple[str, str], tuple[RunConfig, ...]]:
    """(group, curriculum) -> the cell's runs: the quick fair wall's recipe (fixed T = n_train = 8,
    2 layers, d = 64, stop once learned, no plateau stop) offered WALL_STEPS, seeds WALL_SEEDS, MODE."""
    plan = profiles.fair_wall("quick", seeds=(0,))
    return {key: tuple(replace(cfgs[0], experiment="confirm_wall", max_steps=WALL_STEPS, seed=s, mode=MODE)
                       for s in WALL_SEEDS)
            for key, cfgs in plan.runs.items()}


def wall_streaming() -> tuple[tuple[RunConfig, RunConfig], ...]:
    """(free, streaming) per seed: S4 joint free training against the streaming schedule (T = n + 2)."""
    free = wall_cells()[("S4", "joint")]
    return tuple((c, replace(c, schedule="streaming", T_train=c.n_train + 2, max_steps=WALL_STREAMING_STEPS))
                 for c in free)


def wall() -> tuple[RunConfig, ...]:
    """The queue: S5 operator-first, S5 joint, A5 joint (the deciding runs), then A5 operator-first,
    S4 joint, S4 operator-first, S4 streaming."""
    cells = wall_cells()
    order = [("S5", "operator_first"), ("S5", "joint"), ("A5", "joint"), ("A5", "operator_first"),
             ("S4", "joint"), ("S4", "operator_first")]
    queue = [c for s in range(len(WALL_SEEDS)) for key in order[:3] for c in (cells[key][s],)]
    queue += [c for key in order[3:] for c in cells[key]]
    queue += [stream for _, stream in wall_streaming()]
    return tuple(dict.fromkeys(queue))


# ---------------------------------------------------------------------------------------------
# C04-architecture: the architecture prior read by a decoder for every block (issue 40)

ARCHITECTURE_SEEDS = _seeds(110, 3)


def architecture_families() -> dict[str, tuple[RunConfig, ...]]:
    """Family -> its runs (seeds ARCHITECTURE_SEEDS, MODE, experiment confirm_architecture):
    the quick 04 plan's tied NoPE, tied + scan address, untied S4 and untied A5 (the untied search's pick,
    `profiles.UNTIED_PICK`), and two extrapolation comparators: a tied model trained as the untied one
    is (its learning rate, warmup and budget; only tying differs) and the settled-recipe tied model at
    T = n (`profiles.SETTLED`, demand 1)."""
    plan = profiles.architecture_prior("quick", seeds=(0,))
    pick = profiles.UNTIED_PICK[1]
    tied = plan.tied[0]
    bases = {"tied": tied, "tied + scan": plan.tied_scan[0], "untied": plan.untied[0], "untied A5": plan.untied_a5[0],
             "tied, untied recipe": replace(tied, **{k: v for k, v in pick.items() if k != "residual_init"}),
             "tied, settled T = n": replace(tied, **profiles.SETTLED)}
    return {name: tuple(replace(c, experiment="confirm_architecture", seed=s, mode=MODE) for s in ARCHITECTURE_SEEDS)
            for name, c in bases.items()}


def architecture() -> tuple[RunConfig, ...]:
    """The queue: untied S4 (three claims rest on it), tied NoPE, tied + scan, untied A5, then the two
    extrapolation comparators; seed by seed within each family."""
    fam = architecture_families()
    order = ("untied", "tied", "tied + scan", "untied A5", "tied, settled T = n", "tied, untied recipe")
    return tuple(dict.fromkeys(c for name in order for c in fam[name]))


# ---------------------------------------------------------------------------------------------
# C03-budget: the budget law on fresh seeds, five demands (issue 43, part 1)

BUDGET_SEEDS = _seeds(120, 3)
BUDGET_T = (16, 12, 8, 6, 4)          # n_train = 8: demands 0.5, 2/3, 1, 4/3, 2


def budget() -> tuple[RunConfig, ...]:
    """The quick budget-law recipe (`profiles.budget_law("quick")`: settled loops, 2 layers, d = 64,
    12,000 steps) at five demands, seeds BUDGET_SEEDS, MODE; the queue goes seed by seed, cheapest
    demand first, so every demand has a seed early."""
    base = profiles.budget_law("quick", seeds=(0,)).runs[0]
    return tuple(replace(base, experiment="confirm_budget", T_train=T, seed=s, mode=MODE)
                 for s in BUDGET_SEEDS for T in sorted(BUDGET_T))


# Studies by their pre-registration entry id (the heading's id in paper/PREREGISTRATION.md).
STUDIES = {"C05-wall": wall, "C04-architecture": architecture, "C03-budget": budget}


def study(entry: str) -> tuple[RunConfig, ...]:
    if entry not in STUDIES:
        raise ValueError(f"study: unknown pre-registration entry {entry!r}; allowed: {sorted(STUDIES)}")
    return STUDIES[entry]()


def missing(entry: str) -> tuple[RunConfig, ...]:
    """The study's runs not yet finished in the store; its reading waits until there are none."""
    return tuple(c for c in study(entry) if not store.is_done(c))
