"""06 portability (budget annealing): at a fixed n, T = n -> n/2 -> n/4, each step warm-started from the
last, against from-scratch runs of the same contracts; and the lottery branch, one contract between the
chain's last two."""
from __future__ import annotations

from dataclasses import dataclass, replace

from ...config import RunConfig, warm_start
from ..common import LAW_EVAL_COUNT, LAW_LEARNED_ACC, STUDY_MODE, check_params, law_fixed, reserved_seeds


@dataclass(frozen=True)
class AnnealingPlan:
    start: tuple[RunConfig, ...]                     # one per seed: the first contract, from scratch
    chains: tuple[tuple[RunConfig, ...], ...]        # per seed: the annealed runs, contract by contract
    scratch: tuple[tuple[RunConfig, ...], ...]       # per seed: from-scratch runs at each later contract
    learned_acc: float
    eval_count: int
    # the lottery branch: per seed, one more contract warm-started from the chain's step `branch_from`,
    # and the from-scratch run of that contract; empty where the profile has none
    branch: tuple[RunConfig, ...] = ()
    branch_scratch: tuple[RunConfig, ...] = ()
    branch_from: int = 0

    def configs(self) -> tuple[RunConfig, ...]:
        """Every run this plan trains, parents before children, each once."""
        return tuple(dict.fromkeys(self.start + tuple(c for col in self.scratch for c in col) + tuple(c for ch in self.chains for c in ch)
                                   + self.branch_scratch + self.branch))


ANNEALING_SEEDS = {"smoke": (0, 1), "quick": (0, 1, 2, 3), "paper": (0, 1, 2, 3)}   # the paper: 4 seeds
# The seeds whose runs were known when the judging rule was fixed (paper/DECISIONS.md): the claims are
# judged at the hardest contract of the chain that from-scratch training shows the block can hold (some
# from-scratch seed learns it; `read.annealing_results`), the seed lottery is the share of the four
# from-scratch seeds that learn it, and "bypasses the lottery" needs a lottery there (some from-scratch
# seed fails) or reads not measured; the transfer fraction over the other seeds alone is reported beside
# the whole.
ANNEALING_SEEN_SEEDS = (0, 1)


def annealing(profile: str, seeds=None) -> AnnealingPlan:
    """Budget annealing at a fixed n: T = n -> n/2 -> n/4, each step warm-started from the last
    (weights only; fresh optimiser, warmup and polish; full length from the first step; the
    from-scratch step budget per step), against from-scratch runs of the same contracts (the budget
    law's fixed-T runs). The lottery branch adds the contract between the chain's last two,
    T = (n/2 + n/4) // 2 (quick: 3), each seed's annealed T = n/2 run warm-started into it with the
    from-scratch budget, beside from-scratch runs of it (the budget law's fixed recipe). seeds None: the
    profile's (`ANNEALING_SEEDS`: the paper's four in every profile but smoke)."""
    check_params(profile, None if seeds is None else list(seeds))
    seeds = ANNEALING_SEEDS[profile] if seeds is None else tuple(seeds)
    # the annealing chain keeps the fixed-T recipe it was measured with (its from-scratch runs are the
    # budget law's fixed contrast; paper: size s)
    fixed = law_fixed(profile, seeds)
    n = fixed[0].n_train
    Ts = (n, n // 2, n // 4) if profile != "smoke" else (4, 2, 1)
    by = {(c.T_train, c.seed): c for c in fixed}
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
    learned_acc, eval_count = LAW_LEARNED_ACC[profile], LAW_EVAL_COUNT[profile]
    T_branch = (Ts[1] + Ts[2]) // 2
    if profile == "smoke" or not Ts[2] < T_branch < Ts[1]:
        return AnnealingPlan(start, tuple(chains), scratch, learned_acc, eval_count)
    branch = tuple(warm_start(chain[0], T_train=T_branch) for chain in chains)
    branch_scratch = tuple(replace(by[(Ts[1], s)], T_train=T_branch, experiment="portability") for s in seeds)
    return AnnealingPlan(start, tuple(chains), scratch, learned_acc, eval_count, branch, branch_scratch, 0)


# The C41-annealing study (paper/PREREGISTRATION.md): per reserved seed, the chain T = 8 -> 4 -> T_L
# and a from-scratch run of T_L with the same budget. T_L is P41-pilot's pick among the candidates
# below (searches/p41_pilot.py's, held equal by tests/test_portability_confirm.py): LOTTERY_PICK is "a"
# or "b" once the pilot is read, "none" when it found no lottery contract (then (a), transfer only),
# None before.
STUDY_SEEDS = reserved_seeds(150, 12)
LOTTERY_CANDIDATES = {"a": (3, 12000), "b": (2, 24000)}      # name -> (T_train, max_steps)
LOTTERY_PICK: str | None = "b"


@dataclass(frozen=True)
class AnnealingStudy:
    start: tuple[RunConfig, ...]      # per seed: T = 8 from scratch
    anneal: tuple[RunConfig, ...]     # per seed: T = 4 warm-started from start
    lottery: tuple[RunConfig, ...]    # per seed: T_L warm-started from anneal
    scratch: tuple[RunConfig, ...]    # per seed: T_L from scratch, the lottery run's budget
    lottery_contract: bool            # False: P41 found none, the study reads transfer only

    def configs(self) -> tuple[RunConfig, ...]:
        """Queue order: seed by seed, parents before children."""
        return tuple(c for runs in zip(self.start, self.anneal, self.lottery, self.scratch) for c in runs)


def annealing_study(pick: str | None = None) -> AnnealingStudy | None:
    """The C41-annealing runs for P41's `pick` (default LOTTERY_PICK); None before the pick."""
    pick = LOTTERY_PICK if pick is None else pick
    if pick is None:
        return None
    if pick not in (*LOTTERY_CANDIDATES, "none"):
        raise ValueError(f"pick: unknown {pick!r}; allowed: {sorted(LOTTERY_CANDIDATES)} or 'none'")
    T_L, budget = LOTTERY_CANDIDATES["a" if pick == "none" else pick]
    base = law_fixed("quick", seeds=(0,))[0]
    start = tuple(replace(base, experiment="confirm_annealing", mode=STUDY_MODE, T_train=base.n_train, seed=s)
                  for s in STUDY_SEEDS)
    anneal = tuple(warm_start(c, T_train=c.n_train // 2, max_steps=c.max_steps) for c in start)
    lottery = tuple(warm_start(c, T_train=T_L, max_steps=budget) for c in anneal)
    scratch = tuple(replace(c, T_train=T_L, max_steps=budget) for c in start)
    return AnnealingStudy(start, anneal, lottery, scratch, pick != "none")


def study(pick: str | None = None) -> tuple[RunConfig, ...]:
    """The C41-annealing runs in queue order (empty before P41's pick)."""
    s = annealing_study(pick)
    return () if s is None else s.configs()
