"""The values of the parameters the project's notebooks share, checked before any point runs.

Every section notebook takes PROFILE (one of lib.profiles.PROFILES), DEVICE (one of
lib.profiles.DEVICES) and its seeds (SEED=s or SEEDS=[..]); a notebook refuses a bad one in its
first cell, but only once a kernel per point has started. Checking the grid here turns a typo into
one error (SweepError, exit 2) before any kernel starts or anything is written.

Seeds a sweep may use are the integers 0-99, below lib.config.RESERVED_SEEDS (100-199): those belong
to pre-registered confirmatory runs (lib.confirmatory, `lib.cli train confirm:<entry>`), never to an
exploratory sweep. SEEDS=None is allowed (the notebook then uses its profile's seeds).

lib.profiles and lib.config import torch; they are imported only when a grid needs them, so the
workers that import this package to run a point stay light.
"""
from __future__ import annotations

from .errors import SweepError


def seed_range() -> range:
    """The seeds a sweep may use: 0 up to the first reserved seed."""
    from ..config import RESERVED_SEEDS
    return range(0, RESERVED_SEEDS.start)


def check_seed(seed, where: str) -> None:
    """`seed` is an integer in seed_range(); `where` names the input in the message (e.g. '--seeds')."""
    from ..config import RESERVED_SEEDS
    allowed = seed_range()
    allowed_text = f"allowed: integers {allowed.start}-{allowed.stop - 1}"
    reserved = f"{RESERVED_SEEDS.start}-{RESERVED_SEEDS.stop - 1}"
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise SweepError(f"{where}: seed {seed!r} is not an integer >= 0; {allowed_text}")
    if seed in RESERVED_SEEDS:
        raise SweepError(f"{where}: seed {seed} is reserved for pre-registered confirmatory runs "
                         f"(lib.config.RESERVED_SEEDS: {reserved}); {allowed_text}")
    if seed not in allowed:
        raise SweepError(f"{where}: seed {seed} is out of range; {allowed_text} ({reserved} are reserved "
                         "for pre-registered confirmatory runs)")


def check_grid_values(grid: dict[str, list]) -> None:
    """Every value of PROFILE, DEVICE, SEED and SEEDS in `grid` ({parameter: [values]}) is one the
    notebooks accept; other parameters are the notebook's own business."""
    for param, values in grid.items():
        if param in ("PROFILE", "DEVICE"):
            from .. import profiles
            allowed = list(profiles.PROFILES if param == "PROFILE" else profiles.DEVICES)
            for value in values:
                if not isinstance(value, str) or value not in allowed:
                    raise SweepError(f"grid: parameter {param!r} has unknown value {value!r}; allowed: {allowed}")
        elif param == "SEED":
            for value in values:
                check_seed(value, "grid: parameter 'SEED'")
        elif param == "SEEDS":
            for value in values:
                if value is None:
                    continue
                if not isinstance(value, list) or not value:
                    raise SweepError(f"grid: parameter 'SEEDS' takes lists of seeds (one list per point, e.g. "
                                     f"SEEDS=[[0],[1]]) or None, got {value!r}")
                for seed in value:
                    check_seed(seed, "grid: parameter 'SEEDS'")
