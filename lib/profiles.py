"""Profiles: the numbers each section notebook runs with, by name, and the registry of sections.

Every plan and table lives in its section's plan module (`lib/sections/sNN_*/plan.py`; what the sections
share in `lib/sections/common.py`); this module gives each section's plan, and the tables notebooks, the
command line and the searches read, a public name here (`profiles.budget_law(profile)`, `profiles.SETTLED`,
...), so they read one place.
`SECTIONS` is the registry the store's command line fills sections from (python -m lib.cli train <section>).
"""
from __future__ import annotations

from .sections.common import (CURRICULA, DEVICES, E2H_SEEDS, PAPER_SIZES_WITH_L, PREFIX_SUMS_PICK,  # noqa: F401
                              PREFIX_SUMS_SEARCH_BASE, PROFILES, SETTLED, SMOKE_BASE, check_params, resolve_device)
from .sections.s01_tail_saturation.plan import DEMANDING_SEEDS, TAIL_SEEDS, tail_saturation  # noqa: F401
from .sections.s02_tau_calibration.plan import calibration  # noqa: F401
from .sections.s03_budget_law.plan import BUDGET_SEEDS, budget_law  # noqa: F401
from .sections.s04_architecture_prior.plan import UNTIED_PICK, architecture_prior, matched_untied  # noqa: F401
from .sections.s05_operator_wall.plan import (FAIR_GROUPS, FAIR_STEPS, WALL_SEEDS, fair_wall,  # noqa: F401
                                              fair_wall_groups, operator_wall)
from .sections.s06_portability.plan import ANNEALING_SEEDS, ANNEALING_SEEN_SEEDS, annealing  # noqa: F401
from .sections.s07_seed_contests.plan import (CONTEST_PILOT_SEEDS, CONTEST_SEEDS, CONTEST_TARGETS,  # noqa: F401
                                              CONTEST_THRESHOLD, contest_config, contest_contracts, contests)
from .sections.s08_easy_to_hard.plan import easy_to_hard, prefix_sums_recipe  # noqa: F401
from .sections.s09_stability.plan import (RECALLS, SUDOKU_PICK, Knobs, grid_base, knobs_of,  # noqa: F401
                                          paper_b_grid, stability, sudoku_base, with_knobs)

# The sections whose runs the store's command line can fill (python -m lib.cli train <section>), in the
# order the paper plan and the ledger's cost list them.
SECTIONS = {"budget_law": budget_law, "calibration": calibration, "tail_saturation": tail_saturation,
            "architecture_prior": architecture_prior, "operator_wall": fair_wall, "annealing": annealing,
            "contests": contests, "easy_to_hard": easy_to_hard, "stability": stability}
