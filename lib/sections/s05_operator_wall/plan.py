"""05 operator wall: groups whose Cayley table is hard (S5, A5) against a solvable one (S4), each met
operator-first or jointly, at equal step budgets (`fair_wall`, what 05 reads); forced seriality (the
streaming schedule) paired with free training of the same task."""
from __future__ import annotations

from dataclasses import dataclass, replace

from ...config import RunConfig
from ..common import (CURRICULA, STUDY_MODE, WALL_GROUPS, check_params, profile_base, reserved_seeds, streaming_controls,
                      wall_base, wall_runs)


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


WALL_LONG_NS = {"smoke": (6,), "quick": (12, 16), "paper": (32, 64)}
WALL_EVAL_COUNT = {"smoke": 64, "quick": 512, "paper": 1024}
WALL_LEARNED_ACC = 0.9


def operator_wall(profile: str, seeds=(0, 1)) -> OperatorWallPlan:
    """The wall with joint runs stopped at a plateau (unequal budgets): `WALL_GROUPS`, each curriculum;
    forced seriality on S4 (the calibration streaming run against the budget-law run at T = n) and on the
    wall's first group (operator-first). Its runs are stored; 05 reads `fair_wall`."""
    check_params(profile, list(seeds))
    base = wall_base(profile)
    groups = WALL_GROUPS[profile]
    runs = {(g, name): wall_runs(base, g, name, seeds) for g in groups for name in CURRICULA}
    streaming = streaming_controls(profile, seeds[:1])
    free_s4 = tuple(replace(c, experiment=profile_base(profile).experiment, schedule="fixed", T_train=c.n_train)
                    for c in streaming)
    free_g = runs[(groups[0], "operator_first")][:1]
    stream_g = tuple(replace(c, schedule="streaming", T_train=c.n_train + 2) for c in free_g)
    return OperatorWallPlan(runs, streaming + stream_g, free_s4 + free_g, WALL_LONG_NS[profile],
                            WALL_EVAL_COUNT[profile], WALL_LEARNED_ACC)


WALL_SEEDS = {"smoke": (0, 1, 2), "quick": (0, 1, 2), "paper": (0, 1, 2)}   # >= 3 seeds each
FAIR_GROUPS = {"smoke": ("S3", "A4", "Z4"), "quick": ("S5", "A5", "S4"),
               "paper": ("S5", "A5", "S4")}   # the wall, NC1-complete, solvable
# The paper profile's equal budget: 60,000 is the most steps, in round ten-thousands, that keeps the
# profile inside the 6 h one H200 session is given (100,000 would cost 1.25 H200 h for these 24 runs and
# 6.4 h for the profile; upper bounds, bench/paper_plan.py); quick and smoke keep `operator_wall`'s
# operator-first budget.
FAIR_STEPS = {"paper": 60000}


def fair_wall_groups(profile: str) -> dict:
    """The equal-budget wall's groups by role: the wall, the NC1-complete group, the solvable one."""
    check_params(profile, None)
    if profile not in FAIR_GROUPS:
        raise ValueError(f"profile: the equal-budget wall is planned for {sorted(FAIR_GROUPS)}, not {profile!r}")
    return dict(zip(("wall", "nc1", "solvable"), FAIR_GROUPS[profile]))


def fair_wall(profile: str, seeds=None) -> OperatorWallPlan:
    """The operator wall at equal step budgets.
    The wall's recipe (`wall_base`: fixed T = n_train; quick 20,000 steps, paper `FAIR_STEPS`), seeds `WALL_SEEDS`
    (0-2), for S5 (the wall), A5 (NC1-complete, order 60) and S4 (solvable: what A5 is judged against,
    under the same recipe and budget), each joint and operator-first, and every run offered the same
    max_steps: joint runs do not stop at a plateau (plateau_stop 0; the deadlock is read from their
    logged loss), and a run still stops early once it has learned (every curriculum alike).
    Forced seriality, each streaming run paired with free training of the same task, seed and curriculum:
    S5 operator-first (the wall with its help) and S4 joint (a task with no operator-first help), streaming
    with T = n_train + 2 loops. The operator-first S5 and A5 seeds 0-1 are `operator_wall`'s runs, not
    trained twice (python -m lib.cli train operator_wall trains the rest: 05 reads this plan)."""
    check_params(profile, None if seeds is None else list(seeds))
    seeds = WALL_SEEDS[profile] if seeds is None else tuple(seeds)
    wall = wall_base(profile)
    base = replace(wall, plateau_stop=0, max_steps=FAIR_STEPS.get(profile, wall.max_steps))
    runs = {(g, name): tuple(replace(base, task=g, curriculum_start=knobs["curriculum_start"] or base.n_train, seed=s)
                             for s in seeds)
            for g in FAIR_GROUPS[profile] for name, knobs in CURRICULA.items()}
    s5, s4 = FAIR_GROUPS[profile][0], FAIR_GROUPS[profile][2]
    free = runs[(s5, "operator_first")] + runs[(s4, "joint")]
    streaming = tuple(replace(c, schedule="streaming", T_train=c.n_train + 2) for c in free)
    return OperatorWallPlan(runs, streaming, free, WALL_LONG_NS[profile], WALL_EVAL_COUNT[profile], WALL_LEARNED_ACC)


# ---------------------------------------------------------------------------------------------
# C05-wall, the pre-registered study (paper/PREREGISTRATION.md): the operator wall at the paper
# profile's budget on reserved seeds, in one execution mode

STUDY_SEEDS = reserved_seeds(100, 3)
STUDY_STEPS = 60000                 # the paper profile's equal budget (`FAIR_STEPS["paper"]`), fixed by the entry
STUDY_STREAMING_STEPS = 20000         # every free S4 joint run of the exploratory wall learned within 7,097


def study_cells() -> dict[tuple[str, str], tuple[RunConfig, ...]]:
    """(group, curriculum) -> the cell's runs: the quick fair wall's recipe (fixed T = n_train = 8,
    2 layers, d = 64, stop once learned, no plateau stop) offered STUDY_STEPS, seeds STUDY_SEEDS, STUDY_MODE."""
    plan = fair_wall("quick", seeds=(0,))
    return {key: tuple(replace(cfgs[0], experiment="confirm_wall", max_steps=STUDY_STEPS, seed=s, mode=STUDY_MODE)
                       for s in STUDY_SEEDS)
            for key, cfgs in plan.runs.items()}


def study_streaming() -> tuple[tuple[RunConfig, RunConfig], ...]:
    """(free, streaming) per seed: S4 joint free training against the streaming schedule (T = n + 2)."""
    free = study_cells()[("S4", "joint")]
    return tuple((c, replace(c, schedule="streaming", T_train=c.n_train + 2, max_steps=STUDY_STREAMING_STEPS))
                 for c in free)


def study() -> tuple[RunConfig, ...]:
    """The queue: S5 operator-first, S5 joint, A5 joint (the deciding runs), then A5 operator-first,
    S4 joint, S4 operator-first, S4 streaming."""
    cells = study_cells()
    order = [("S5", "operator_first"), ("S5", "joint"), ("A5", "joint"), ("A5", "operator_first"),
             ("S4", "joint"), ("S4", "operator_first")]
    queue = [c for s in range(len(STUDY_SEEDS)) for key in order[:3] for c in (cells[key][s],)]
    queue += [c for key in order[3:] for c in cells[key]]
    queue += [stream for _, stream in study_streaming()]
    return tuple(dict.fromkeys(queue))
