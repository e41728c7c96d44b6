"""07 seed contests: on each of three S4 contracts of the settled recipe, many seeds, each trained as an
independent run; a contest asks whether a seed's tail metrics predict its out-of-distribution accuracy."""
from __future__ import annotations

from dataclasses import dataclass, replace

from ...config import RunConfig
from ..common import SETTLED, STUDY_MODE, check_params, profile_base, reserved_seeds


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
# (searches/results/contest_pilot.json; tests/test_contest.py holds the two equal): at 2 n_train
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
    base = profile_base(profile, "s")
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


# The C41-contests study (paper/PREREGISTRATION.md): the same three contracts on reserved seeds, each
# contest read at the test length P41-pilot's rule picked from its pilot seeds (40-47). CONFIRM_TARGETS
# is that pick, copied from searches/results/pilot_p41_contest.jsonl once the pilot is read (None until
# then; tests/test_contest_confirm.py holds the two equal); a contract the pilot found no split in has no
# length and no contest.
STUDY_SEEDS = reserved_seeds(130, 16)
CONFIRM_TARGETS: dict[str, int | None] | None = {"S4 n8 T8": 16, "S4 n8 T6": None, "S4 n8 T4": 12}


def study_contests(targets: dict | None = None) -> dict[str, tuple[RunConfig, ...]]:
    """contest name -> its 16 runs (STUDY_SEEDS, STUDY_MODE, experiment `confirm_contests`), for the
    contracts with a picked length in `targets` (default CONFIRM_TARGETS); empty before the pick."""
    targets = CONFIRM_TARGETS if targets is None else targets
    if not targets:
        return {}
    contracts = contest_contracts("quick")
    unknown = set(targets) - set(contracts)
    if unknown:
        raise ValueError(f"targets: unknown contracts {sorted(unknown)}; allowed: {sorted(contracts)}")
    return {name: tuple(replace(base, seed=s, experiment="confirm_contests", mode=STUDY_MODE)
                        for s in STUDY_SEEDS)
            for name, base in contracts.items() if targets.get(name) is not None}


def study(targets: dict | None = None) -> tuple[RunConfig, ...]:
    """The C41-contests runs in queue order: seed by seed, the contracts (T = 8, 6, 4) within a seed."""
    contests = study_contests(targets)
    return tuple(cfgs[i] for i in range(len(STUDY_SEEDS)) for cfgs in contests.values())
