"""Batches of papermill runs across seeds and parameters, on this machine or on a Slurm cluster.

A sweep is one notebook and a grid: every combination of the grid's parameter values and seeds is a
*point*; each point is one papermill run of the notebook. A point writes everything it produces into
its own folder of the store (`outputs/` or $LOOPS_OUTPUTS), outputs/sweeps/<sweep-name>/<point-id>/
(see lib.sweep.point); outputs/sweeps/<sweep-name>/summary.csv holds one row per point, with the same
columns for every point: params, seed, status, wall_s, error, results (lib.sweep.table);
summary_by_config.csv beside it one row per configuration, each numeric result's seeds combined into
n, mean and a 95 % t interval (lib.sweep.aggregate); slurm_logs/, submitit's job files and logs.

Training runs the notebooks need stay in the shared run store `outputs/runs/` (its file locks make
parallel points that need the same run train it once).

Python:

    from lib.sweep import run_sweep
    result = run_sweep("notebooks/03_budget_law.ipynb", {"PROFILE": ["smoke"]}, seeds=[0, 1])
    result.rows            # one dict per point, as in summary.csv
    result.configs         # one dict per configuration, as in summary_by_config.csv

Command line: `python -m lib.sweep --help` (lib.sweep.cli).

The modules, each importing only those above it: errors (SweepError), values (the PROFILE, DEVICE
and seed values notebooks accept), grid (the input: grid, seeds, points, all checked before any
point runs), point (one papermill run and its folder), executors (local pool, Slurm and submitit's
local/debug), table (summary.csv), aggregate (summary_by_config.csv), run (run_sweep), cli (the
command line).
"""
from .errors import SweepError
from .values import check_grid_values, check_seed, seed_range
from .grid import SEED_PARAMETERS, Point, expand_grid, load_grid_file, notebook_parameters, \
    parse_param, parse_seeds, point_id
from .point import KERNEL, STATUSES, read_results, run_point
from .executors import EXECUTORS, LOCAL_ENDED, SLURM_ENDED, SlurmOptions, job_outcome
from .table import format_table, read_summary, summary_rows, write_summary
from .aggregate import by_config, seed_interval
from .run import SweepResult, run_sweep
from .cli import main

__all__ = ["EXECUTORS", "KERNEL", "LOCAL_ENDED", "SEED_PARAMETERS", "SLURM_ENDED", "STATUSES", "Point",
           "SlurmOptions", "SweepError", "SweepResult", "by_config", "check_grid_values", "check_seed",
           "expand_grid", "format_table", "job_outcome", "load_grid_file", "main", "notebook_parameters",
           "parse_param", "parse_seeds", "point_id", "read_results", "read_summary", "run_point", "run_sweep",
           "seed_interval", "seed_range", "summary_rows", "write_summary"]
