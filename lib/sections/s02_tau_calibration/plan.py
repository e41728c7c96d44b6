"""02 tau calibration: a positive control (streaming: serial computation forced by the input schedule),
a shortcut control (a task with a constant-depth solution) and the budget law's free-trained runs."""
from __future__ import annotations

from dataclasses import dataclass, replace

from ...config import RunConfig
from ..common import STUDY_MODE, check_params, law_settled, profile_base, reserved_seeds, streaming_controls


@dataclass(frozen=True)
class CalibrationPlan:
    streaming: tuple[RunConfig, ...]   # positive control: serial computation forced by the input schedule
    shortcut: tuple[RunConfig, ...]    # shortcut control: a task with a constant-depth solution
    free: tuple[RunConfig, ...]        # free-trained models (the budget-law runs)
    test_ns: tuple[int, ...]           # lengths for tau against n; loops max(T_train, ceil(T_train n / n_train))
    eval_count: int
    patch_inputs: int                  # clean inputs per damage-cone grid
    threshold: float                   # damage arrives where >= threshold of inputs flip
    alpha: float                       # patch strength

    def configs(self) -> tuple[RunConfig, ...]:
        """Every run this plan trains, parents before children, each once."""
        return tuple(dict.fromkeys(self.streaming + self.shortcut))


def calibration(profile: str, seeds=(0,)) -> CalibrationPlan:
    check_params(profile, list(seeds))
    streaming, free = streaming_controls(profile, seeds), law_settled(profile, seeds)
    base = profile_base(profile)
    n = base.n_train
    if profile == "smoke":
        shortcut = tuple(replace(base, experiment="smoke", task="increment", T_train=4, seed=s) for s in seeds)
        return CalibrationPlan(streaming, shortcut, free, (2, 3, 4), 64, 4, 0.5, 1.0)
    # LSB-first increment: y_i = x_i xor (x_1 = ... = x_{i-1} = 1). One attention read ("are all
    # earlier bits 1?") computes every position at once, so a model that finds it settles every
    # position in the same loop: tau flat in position and in n.
    shortcut = tuple(replace(base, experiment="calibration", task="increment", n_train=2 * n, T_train=4, seed=s)
                     for s in seeds)
    # tau against n is read inside the training range here (the calibration is in distribution); beyond it: 04
    test_ns = tuple(range(2, n + 1)) if profile == "quick" else (8, 12, 16, 24, 32, 48, 64)
    return CalibrationPlan(streaming, shortcut, free, test_ns, 512 if profile == "quick" else 1024, 32, 0.5, 1.0)


# The C43-controls study (paper/PREREGISTRATION.md): the streaming control is read on C05-wall's
# streaming runs (trained for that study, read here too); the shortcut control is trained anew.
STUDY_SHORTCUT_SEEDS = reserved_seeds(180, 3)


def study_controls() -> dict[str, tuple[RunConfig, ...]]:
    """kind -> the control's runs: "streaming" (C05-wall's, seeds 100-102), "shortcut" (02's quick
    increment control on STUDY_SHORTCUT_SEEDS, STUDY_MODE, experiment `confirm_controls`)."""
    from ..s05_operator_wall.plan import study_streaming
    shortcut = calibration("quick").shortcut[0]
    return {"streaming": tuple(stream for _, stream in study_streaming()),
            "shortcut": tuple(replace(shortcut, experiment="confirm_controls", seed=s, mode=STUDY_MODE)
                              for s in STUDY_SHORTCUT_SEEDS)}


def study() -> tuple[RunConfig, ...]:
    """The C43-controls runs: the shortcut runs first (the streaming ones are C05-wall's, queued there)."""
    runs = study_controls()
    return runs["shortcut"] + runs["streaming"]


# The C43-controls-streaming study: C05-wall's streaming runs train joint and none learned, so tau had
# nothing to read; this one trains 02's own streaming control (operator-first curriculum) on fresh seeds.
STUDY_STREAMING_SEEDS = reserved_seeds(190, 3)
STREAMING_STUDY_STEPS = 20_000      # offered; a run stops once learned (02's quick plan offers 12,000)


def streaming_study() -> tuple[RunConfig, ...]:
    """02's quick streaming control on STUDY_STREAMING_SEEDS, offered STREAMING_STUDY_STEPS, STUDY_MODE,
    experiment `confirm_controls`."""
    control = streaming_controls("quick", (0,))[0]
    return tuple(replace(control, experiment="confirm_controls", seed=s, mode=STUDY_MODE, max_steps=STREAMING_STUDY_STEPS)
                 for s in STUDY_STREAMING_SEEDS)
