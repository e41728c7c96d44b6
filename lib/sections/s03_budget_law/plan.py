"""03 budget law: the settled recipe at every contract (seeds x demands, paper: x sizes), and the
same contracts at one fixed T as the contrast."""
from __future__ import annotations

from dataclasses import dataclass, replace

from ...config import RunConfig
from ..common import (LAW_EVAL_COUNT, LAW_LEARNED_ACC, STUDY_MODE, check_params, check_sizes, law_fixed, law_settled,
                      profile_base, reserved_seeds)


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


# the exponent's interval needs >= 2 seeds at every demand; three seeds a demand
BUDGET_SEEDS = {"smoke": (0,), "quick": (0, 1, 2), "paper": (0, 1, 2)}
N_LONG = {"smoke": 8, "quick": 2 * profile_base("quick").n_train, "paper": 4 * profile_base("paper").n_train}
LOOPS_FACTOR = {"smoke": 2, "quick": 4, "paper": 4}


def budget_law(profile: str, seeds=None, sizes=None, contrast_seeds=None) -> BudgetLawPlan:
    """seeds None: the profile's (`BUDGET_SEEDS`); sizes: the paper profile's model sizes (None:
    `PAPER_SIZES`; the quick and smoke profiles have one size each); contrast_seeds: the seeds of the
    fixed-T contrast (None: the first seed only: the contrast is read beside the law, not fitted), at
    the first size only."""
    check_params(profile, None if seeds is None else list(seeds))
    seeds = BUDGET_SEEDS[profile] if seeds is None else tuple(seeds)
    contrast_seeds = seeds[:1] if contrast_seeds is None else tuple(contrast_seeds)
    sizes = check_sizes(sizes)
    return BudgetLawPlan(law_settled(profile, seeds, sizes), law_fixed(profile, contrast_seeds, sizes[0]),
                         n_long=N_LONG[profile], loops_factor=LOOPS_FACTOR[profile],
                         learned_acc=LAW_LEARNED_ACC[profile], eval_count=LAW_EVAL_COUNT[profile])


# ---------------------------------------------------------------------------------------------
# C03-budget, the pre-registered study (paper/PREREGISTRATION.md): the budget law on reserved seeds,
# five demands, in one execution mode

STUDY_SEEDS = reserved_seeds(120, 3)
STUDY_T = (16, 12, 8, 6, 4)          # n_train = 8: demands 0.5, 2/3, 1, 4/3, 2


def study() -> tuple[RunConfig, ...]:
    """The quick budget-law recipe (`budget_law("quick")`: settled loops, 2 layers, d = 64, 12,000
    steps) at five demands, seeds STUDY_SEEDS, STUDY_MODE; the queue goes seed by seed, cheapest demand
    first, so every demand has a seed early."""
    base = budget_law("quick", seeds=(0,)).runs[0]
    return tuple(replace(base, experiment="confirm_budget", T_train=T, seed=s, mode=STUDY_MODE)
                 for s in STUDY_SEEDS for T in sorted(STUDY_T))
