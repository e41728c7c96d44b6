"""The confirmatory studies: one per entry of `paper/PREREGISTRATION.md`, each planned in its section's
plan (`study()`: its runs in the order they should train, the runs that decide a claim first).

Every study runs on reserved seeds (`config.RESERVED_SEEDS`) and in one execution mode
(`sections.common.STUDY_MODE`). A study's entry is committed before any of its runs starts
(tests/test_preregistration.py reads the git history against each run's `STARTED` record); what a
study reads and how it decides is written in its entry, and read by its section's `confirm` module.

    python -m lib.cli train confirm:C05-wall --queue     # two such processes share the queue
"""
from __future__ import annotations

from . import store
from .config import RunConfig
from .sections.s02_tau_calibration import plan as s02
from .sections.s03_budget_law import plan as s03
from .sections.s04_architecture_prior import plan as s04
from .sections.s05_operator_wall import plan as s05
from .sections.s06_portability import plan as s06
from .sections.s07_seed_contests import plan as s07
from .sections.s08_easy_to_hard import plan as s08
from .sections.s09_stability import plan as s09

# Studies by their pre-registration entry id (the heading's id in paper/PREREGISTRATION.md). The C41
# and C43 studies built on a pilot list their runs only once its picks are recorded in their plans
# (empty before): P41-pilot for C41-*, P43-pilots for C43-easy-to-hard, -recall and -sudoku.
STUDIES = {"C05-wall": s05.study, "C04-architecture": s04.study, "C03-budget": s03.study,
           "C41-contests": s07.study, "C41-annealing": s06.study, "C43-controls": s02.study,
           "C43-controls-streaming": s02.streaming_study,
           "C43-easy-to-hard": s08.study, "C43-recall": s09.recall_study, "C43-sudoku": s09.sudoku_study}


# The pick-waiting studies' runs under every pick their pilot can make: what the checks read before a
# pick is copied in (a contest's length only decides whether its contract runs, so every contract here).
UNDER_EVERY_PICK = {
    "C41-contests": lambda: s07.study(dict.fromkeys(s07.contest_contracts("quick"), 0)),
    "C41-annealing": lambda: sum((s06.study(k) for k in s06.LOTTERY_CANDIDATES), ()),
    "C43-easy-to-hard": lambda: sum((s08.study(k) for k in s08.E2H_CANDIDATES), ()),
    "C43-recall": lambda: sum((s09.recall_study(k) for k in s08.E2H_CANDIDATES), ()),
    "C43-sudoku": lambda: sum((s09.sudoku_study({"external": e, "internal": i}) for e in s09.SUDOKU_CANDIDATES
                               for i in s09.SUDOKU_CANDIDATES), ()),
}


def study(entry: str) -> tuple[RunConfig, ...]:
    if entry not in STUDIES:
        raise ValueError(f"study: unknown pre-registration entry {entry!r}; allowed: {sorted(STUDIES)}")
    return STUDIES[entry]()


def missing(entry: str) -> tuple[RunConfig, ...]:
    """The study's runs not yet finished in the store; its reading waits until there are none."""
    return tuple(c for c in study(entry) if not store.is_done(c))
