"""Batches of papermill runs across seeds and parameters, on this machine or on a Slurm cluster.

A sweep is one notebook and a grid: every combination of the grid's parameter values and seeds is a
*point*; each point is one papermill run of the notebook. A point writes everything it produces into
its own folder of the store (`outputs/` or $LOOPS_OUTPUTS), outputs/sweeps/<sweep-name>/<point-id>/
(see lib.sweep.point); outputs/sweeps/<sweep-name>/summary.csv holds one row per point: params,
status, wall_s, results (lib.sweep.table); slurm_logs/ beside it, submitit's job files and logs.

Training runs the notebooks need stay in the shared run store `outputs/runs/` (its file locks make
parallel points that need the same run train it once).

Python:

    from lib.sweep import run_sweep
    result = run_sweep("notebooks/03_budget_law.ipynb", {"PROFILE": ["smoke"]}, seeds=[0, 1])
    result.rows            # one dict per point, as in summary.csv

Command line: `python -m lib.sweep --help` (lib.sweep.cli).

The modules, each importing only those above it: grid (the input: grid, seeds, points), point (one
papermill run and its folder), executors (local pool, Slurm and submitit's local/debug), table
(summary.csv), run (run_sweep), cli (the command line).
"""
from .grid import SEED_PARAMETERS, Point, SweepError, expand_grid, load_grid_file, notebook_parameters, \
    parse_param, parse_seeds, point_id
from .point import KERNEL, STATUSES, read_results, run_point
from .executors import EXECUTORS, LOCAL_ENDED, SLURM_ENDED, SlurmOptions, job_outcome
from .table import format_table, read_summary, write_summary
from .run import SweepResult, run_sweep
from .cli import main

__all__ = ["EXECUTORS", "KERNEL", "LOCAL_ENDED", "SEED_PARAMETERS", "SLURM_ENDED", "STATUSES", "Point",
           "SlurmOptions", "SweepError", "SweepResult", "expand_grid", "format_table", "job_outcome",
           "load_grid_file", "main", "notebook_parameters", "parse_param", "parse_seeds", "point_id",
           "read_results", "read_summary", "run_point", "run_sweep", "write_summary"]
