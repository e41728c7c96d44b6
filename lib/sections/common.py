"""What the sections' plans share: the profiles and their parameter checks, the model bases, and the
named bases two sections build from (the budget law's contracts, the streaming control, the operator
wall's runs, the prefix-sums runs), so that no plan builds another plan to borrow a config.

`quick` is sized for a 2-core CPU (minutes, from an empty cache); `paper` holds the paper's grid
(sizes s/m/l, several seeds, test lengths to 4x n_train) for a GPU; `smoke` is a seconds-long,
meaningless-by-design run of the same code path, for pipeline tests. All run the same code.
Notebooks call `check_params` first: a bad parameter fails there, before any work, naming the
parameter, the value and what is allowed.
"""
from __future__ import annotations

from dataclasses import replace

from ..config import RESERVED_SEEDS, RunConfig
from ..model import PRESETS

PROFILES = ("quick", "paper", "smoke")

# The pre-registered studies' execution mode (`config.MODES`): CPU, eager, fp32, one thread. A replay of
# any run in this mode is bit-identical on the same machine (tests/test_preregistration.py replays one);
# compiled steps are ~1.1x faster here but round differently.
STUDY_MODE = "cpu-eager-fp32"
DEVICES = ("auto", "cpu", "cuda")


def check_params(profile: str, seeds=None, device: str = "auto", **lengths) -> None:
    """Validate a notebook's parameter cell. `lengths` are named positive integers (n, T, ...)."""
    if profile not in PROFILES:
        raise ValueError(f"PROFILE: unknown profile {profile!r}; allowed: {PROFILES}")
    if device not in DEVICES:
        raise ValueError(f"DEVICE: unknown device {device!r}; allowed: {DEVICES}")
    if seeds is not None:
        if (not isinstance(seeds, (list, tuple)) or not seeds
                or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds)):
            raise ValueError(f"SEEDS: must be a non-empty list of integers >= 0, got {seeds!r}")
    for name, v in lengths.items():
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{name}: must be an integer >= 1, got {v!r}")


def reserved_seeds(first: int, count: int) -> tuple[int, ...]:
    """A pre-registered study's seeds: `count` seeds from `first`, all reserved (`config.RESERVED_SEEDS`)."""
    seeds = tuple(range(first, first + count))
    assert all(s in RESERVED_SEEDS for s in seeds)
    return seeds


def resolve_device(device: str) -> str:
    """'auto' -> 'cuda' when a GPU is visible, else 'cpu'."""
    import torch
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("DEVICE: 'cuda' requested but no GPU is visible; allowed here: 'auto', 'cpu'")
    return device


# The paper profile trains sizes s and m by default; size l (4 layers, d = 512) is optional
# (`sizes=PAPER_SIZES_WITH_L`): with it the profile no longer fits the 6 h one GPU session is given
# (its upper-bound cost on one H200: bench/README.md's paper-plan table, `python -m bench.paper_plan`).
PAPER_SIZES = ("s", "m")
PAPER_SIZES_WITH_L = ("s", "m", "l")


def check_sizes(sizes) -> tuple[str, ...]:
    """The paper profile's model sizes: None means `PAPER_SIZES`."""
    if sizes is None:
        return PAPER_SIZES
    if not isinstance(sizes, (list, tuple)) or not sizes or not all(z in PRESETS for z in sizes):
        raise ValueError(f"SIZES: must be a non-empty list of model sizes from {sorted(PRESETS)}, got {sizes!r}")
    return tuple(sizes)


# The budget law's model and optimiser in each profile; quick sized by measurement
# (searches/quick_profile_search.py, its log in searches/results/).
QUICK_BASE = RunConfig(experiment="budget_law", task="S4", n_train=8, n_layers=2, d_model=64, n_heads=4,
                       injection="adapter", batch=128, lr=1e-3, warmup=100, max_steps=12000, polish_steps=300)
PAPER_BASE = replace(QUICK_BASE, n_train=16, batch=256, lr=3e-4, max_steps=40000, polish_steps=2000)
SMOKE_BASE = replace(QUICK_BASE, experiment="smoke", task="S3", n_train=4, d_model=16, n_heads=2, batch=16,
                     max_steps=30, warmup=5, eval_count=64)


def profile_base(profile: str, size: str | None = None) -> RunConfig:
    """The profile's base run; in the paper profile at model size `size` (None: the base's own width)."""
    if profile == "paper":
        return PAPER_BASE if size is None else replace(PAPER_BASE, **PRESETS[size])
    return QUICK_BASE if profile == "quick" else SMOKE_BASE


# The settled-loops recipe, picked by searches/settle_search.py under its rule (the best settler: no
# candidate both settled and kept the law): the budget at each curriculum length holds the contract's
# demand (T = ceil(n T_train / n_train)), each batch draws its loops in [T, 2T], an outer norm keeps the
# state bounded, and the loss is the mean over every loop from T on, so a loop is asked to keep its answer
# past the budget. The contract stays (n_train, T_train): the fewest loops a batch of length n_train is given.
SETTLED = dict(schedule="proportional", T_jitter=2.0, outer_norm=True, loss_loops="tail")

# ---------------------------------------------------------------------------------------------
# The budget law's contracts (03), which 01, 02, 05 and 06 read too.

# T_train of the settled runs: quick leaves out demand 4 (T = 2), which this model size does not learn
# under the fixed recipe (03's contrast rows)
LAW_SETTLED_T = {"quick": (16, 8, 4), "smoke": (8, 4, 2), "paper": (32, 16, 8, 4)}
LAW_FIXED_T = {"quick": (16, 8, 4, 2), "smoke": (8, 4, 2, 1), "paper": (32, 16, 8, 4)}   # the fixed-T contrast
LAW_LEARNED_ACC = {"quick": 0.9, "smoke": 0.0, "paper": 0.9}     # in-distribution accuracy that counts as learned
LAW_EVAL_COUNT = {"quick": 512, "smoke": 64, "paper": 1024}


def law_settled(profile: str, seeds, sizes=PAPER_SIZES) -> tuple[RunConfig, ...]:
    """The budget law's runs: the settled recipe at every contract and seed (paper: and size)."""
    bases = [profile_base(profile, z) for z in sizes] if profile == "paper" else [profile_base(profile)]
    return tuple(replace(b, T_train=T, seed=s, **SETTLED) for b in bases for T in LAW_SETTLED_T[profile] for s in seeds)


def law_fixed(profile: str, seeds, size: str = PAPER_SIZES[0]) -> tuple[RunConfig, ...]:
    """The budget law's contrast: the same contracts at one fixed T, loss at the last loop (paper: one size)."""
    b = profile_base(profile, size)
    return tuple(replace(b, T_train=T, seed=s) for T in LAW_FIXED_T[profile] for s in seeds)


def streaming_controls(profile: str, seeds) -> tuple[RunConfig, ...]:
    """02's positive control, serial computation forced by the input schedule (S4, T = n_train + 2);
    05 pairs it with free training of the same task."""
    base = profile_base(profile)
    experiment = "smoke" if profile == "smoke" else "calibration"
    return tuple(replace(base, experiment=experiment, schedule="streaming", T_train=base.n_train + 2, seed=s)
                 for s in seeds)


# ---------------------------------------------------------------------------------------------
# The operator wall's runs (05), whose A5 operator-first runs 04's untied A5 control matches.

CURRICULA = {   # how a run meets the operator g∘h (length-2 words) and the iteration (longer words)
    # operator first: length-2 words only until position-2 accuracy >= first_acc (the Cayley table),
    # then +1 length whenever the windowed last-position accuracy >= promote_acc
    "operator_first": dict(curriculum_start=2),
    # joint: every batch at full length from step 0 (operator and iteration learned together)
    "joint": dict(curriculum_start=None),
}
WALL_GROUPS = {"smoke": ("A4", "S3"), "quick": ("A5", "S5"), "paper": ("A5", "S5")}


def wall_base(profile: str) -> RunConfig:
    """The wall's recipe: fixed T = n_train. Quick: 20k steps (A5 and S5 tables are 3,600 and 14,400
    products against S4's 576)."""
    if profile == "smoke":
        return replace(SMOKE_BASE, T_train=4, plateau_stop=10)
    if profile == "quick":
        return replace(QUICK_BASE, experiment="operator_wall", T_train=QUICK_BASE.n_train, max_steps=20000)
    return replace(PAPER_BASE, experiment="operator_wall", T_train=PAPER_BASE.n_train, max_steps=100000, **PRESETS["s"])


def wall_runs(base: RunConfig, group: str, curriculum: str, seeds) -> tuple[RunConfig, ...]:
    """One cell of the wall: `group` under `curriculum`, one run a seed. Joint runs stop when the loss
    has not improved 2 % in plateau_stop steps (a measured deadlock); operator-first runs get every step."""
    start = CURRICULA[curriculum]["curriculum_start"] or base.n_train
    plateau = (base.plateau_stop or 4000) if curriculum == "joint" else 0
    return tuple(replace(base, task=group, curriculum_start=start, plateau_stop=plateau, seed=s) for s in seeds)


# ---------------------------------------------------------------------------------------------
# The prefix-sums runs (08), whose grid 09 varies.

E2H_SEEDS = {"smoke": (0,), "quick": (0, 1), "paper": (0,)}   # the paper profile's one seed keeps its GPU plan
# The quick prefix-sums run every candidate of searches/prefix_sums_search.py changes (held apart, so a
# pick applied to 08 does not move the search's own runs)
PREFIX_SUMS_SEARCH_BASE = RunConfig(experiment="easy_to_hard", task="prefix_sums", n_train=16, T_train=16, n_layers=1,
                                    d_model=32, n_heads=2, batch=128, max_steps=8000, polish_steps=200)
# 08's quick recipe: the search's pick by its logged rule, (name, changes to the base) as
# searches/prefix_sums_search.py's RECIPES has it (tests/test_easy_to_hard.py holds it against the log's
# decision); None while the search has not decided: 08 trains the base
PREFIX_SUMS_PICK: tuple[str, dict] | None = ("settled_local", {"schedule": "proportional", "T_jitter": 2.0,
                                                                 "outer_norm": True, "loss_loops": "tail",
                                                                 "attn_window": 5})
PREFIX_SUMS_EVAL_COUNT = {"smoke": 64, "quick": 512, "paper": 1024}


def prefix_sums_runs(profile: str, seeds) -> tuple[RunConfig, ...]:
    """Prefix sums by the benchmark's recipe, one run a seed: the paper profile at 32 bits (size s), quick
    at 16 by the search's pick (`PREFIX_SUMS_PICK`), smoke at 4."""
    if profile == "smoke":
        base = replace(SMOKE_BASE, task="prefix_sums", n_train=4, T_train=4)
    elif profile == "quick":
        base = PREFIX_SUMS_SEARCH_BASE if PREFIX_SUMS_PICK is None else replace(PREFIX_SUMS_SEARCH_BASE, **PREFIX_SUMS_PICK[1])
    else:
        base = replace(PAPER_BASE, experiment="easy_to_hard", task="prefix_sums", n_train=32, T_train=32, **PRESETS["s"])
    return tuple(replace(base, seed=s) for s in seeds)


def prefix_sums_lengths(profile: str) -> tuple[int, ...]:
    """The prefix sums' test lengths (the last is the 4x claim's, or more): to 512 as Schwarzschild et
    al. in the paper profile, to 8x (128) on a CPU once the search has picked."""
    if profile == "smoke":
        return (4, 8)
    if profile == "quick":
        return (16, 32, 64) if PREFIX_SUMS_PICK is None else (16, 32, 64, 128)
    return (32, 64, 128, 512)
