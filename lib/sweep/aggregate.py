"""A sweep's table of configurations: outputs/sweeps/<sweep-name>/summary_by_config.csv, one row
per configuration (the grid's parameters other than the seed parameter, SEED or SEEDS), combining
its seeds.

Columns, in order: the configuration's parameters; `n_points` (its points in the grid) and
`n_done` (those done); then for each numeric result column C of summary.csv (lib.sweep.table):

    C.n          the number of seeds with a value (done points only)
    C.mean       their mean
    C.ci95_low   a 95 % interval for the mean across seeds: Student's t interval,
    C.ci95_high  scipy.stats.t.interval(0.95, n - 1, loc=mean, scale=scipy.stats.sem(values))

The t interval rather than scipy.stats.bootstrap: a sweep has a handful of seeds per configuration,
too few for a bootstrap's resamples to describe the spread. Empty where it says nothing: n = 1 (no
spread to measure) or a value that is not finite (inf or NaN, which the mean shows). Seeds that all
gave the same value have the interval [mean, mean] (the t interval of zero spread, which scipy
returns as NaN for a zero scale).

Only points that are done count: a failed or unfinished point's partial results are not a measure
of its configuration, and n_done < n_points says seeds are missing. `n` counts points, which are
seeds when each point runs one seed (as --seeds gives them); a grid of SEEDS=[[0, 1], [2, 3]]
counts its two points.
"""
from __future__ import annotations

import math

from .grid import SEED_PARAMETERS
from .table import numeric_columns, result_columns

LEVEL = 0.95


def by_config(rows: list[dict], param_names: list[str]) -> list[dict]:
    """summary_by_config.csv's rows from summary.csv's (lib.sweep.table.summary_rows), one per
    configuration in the order the grid first gives it."""
    config_params = [p for p in param_names if p not in SEED_PARAMETERS]
    numeric = numeric_columns(rows, result_columns(rows, param_names))
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        groups.setdefault(tuple(row.get(p) for p in config_params), []).append(row)
    out = []
    for key, group in groups.items():
        done = [r for r in group if r["status"] == "done"]
        line = dict(zip(config_params, key))
        line.update(n_points=len(group), n_done=len(done))
        for column in numeric:
            values = [float(r[column]) for r in done if r.get(column) is not None]
            line.update({f"{column}.{k}": v for k, v in seed_interval(values).items()})
        out.append(line)
    return out


def seed_interval(values: list[float]) -> dict:
    """{n, mean, ci95_low, ci95_high} of one result across seeds (None where there is nothing to say).
    numpy and scipy are imported here, not with the package, which every worker imports."""
    import numpy as np
    from scipy import stats
    n = len(values)
    with np.errstate(invalid="ignore"):          # inf - inf: NaN, shown as such
        mean = float(np.mean(values)) if n else None
    low = high = None
    if n >= 2 and all(math.isfinite(v) for v in values):
        sem = float(stats.sem(values))
        if sem == 0:
            low = high = mean
        else:
            low, high = (float(x) for x in stats.t.interval(LEVEL, n - 1, loc=mean, scale=sem))
    return {"n": n, "mean": mean, "ci95_low": low, "ci95_high": high}
