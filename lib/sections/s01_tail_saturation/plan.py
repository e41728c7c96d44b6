"""01 tail saturation: the population of settled-recipe S4 models (seeds x the budget law's contracts)
and the fixed-T recipe's runs as the contrast."""
from __future__ import annotations

from dataclasses import dataclass

from ...config import RunConfig
from ..common import check_params, law_fixed, law_settled


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
    = 17 models); the contrast: the fixed-T runs of seed 0 (as 03's). seeds None: the profile's
    (`TAIL_SEEDS`)."""
    check_params(profile, None if seeds is None else list(seeds))
    seeds = TAIL_SEEDS[profile] if seeds is None else tuple(seeds)
    settled = tuple(c for c in law_settled(profile, seeds) if c.seed < DEMANDING_SEEDS or c.demand >= 1)
    return TailPlan(settled, law_fixed(profile, (0,)), 2, 4, 8, 256 if profile != "paper" else 1024, 4)
