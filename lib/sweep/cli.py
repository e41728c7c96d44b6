"""The command line, `python -m lib.sweep --help`:

    # four seeds of the budget law in the smoke profile, on a local process pool
    python -m lib.sweep notebooks/03_budget_law.ipynb --param PROFILE=smoke --seeds 0-3

    # a grid (YAML or JSON: values are lists, a scalar is one value) on Slurm, one GPU per point
    python -m lib.sweep notebooks/03_budget_law.ipynb --grid grid.yaml --name budget-paper \\
        --executor slurm --partition gpu --account myproject --gpus 1 --time-min 240 --mem-gb 16

    where grid.yaml is e.g.
        grid:
          PROFILE: [paper]
        seeds: [0, 1, 2, 3]

Exit status: 0 all points done, 1 some point not done, 2 bad input (a SweepError, printed).
"""
from __future__ import annotations

import argparse
import sys

from .executors import EXECUTORS, SlurmOptions
from .errors import SweepError
from .grid import load_grid_file, parse_param
from .run import run_sweep

DESCRIPTION = "Batches of papermill runs across seeds and parameters, on this machine or on a Slurm cluster."


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lib.sweep", description=DESCRIPTION,
                                 epilog="Exit status: 0 all points done, 1 some point not done, 2 bad input.")
    ap.add_argument("notebook", nargs="?", help="the .ipynb to run (or `notebook:` in the grid file)")
    ap.add_argument("--grid", help="YAML/JSON file: {grid: {PARAM: [values]}, seeds: [..], name: .., notebook: ..}")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUES",
                    help="a grid parameter; VALUES is YAML, a list sweeps (e.g. T=[8,16]); repeatable")
    ap.add_argument("--seeds", help="seeds, e.g. 0-3 or 0,2,5 (passed as SEEDS=[s] or SEED=s)")
    ap.add_argument("--name", help="sweep name: outputs/sweeps/<name>/ (default: the notebook's name)")
    ap.add_argument("--executor", default="local", help=f"one of {list(EXECUTORS)} (default local)")
    ap.add_argument("--workers", type=int, help="local pool size (default: the machine's CPUs)")
    ap.add_argument("--cell-timeout-min", type=float, help="bound on any one notebook cell")
    slurm = ap.add_argument_group("Slurm (--executor slurm)")
    slurm.add_argument("--partition")
    slurm.add_argument("--account")
    slurm.add_argument("--time-min", type=int, default=60, help="time limit of each point's job (default 60)")
    slurm.add_argument("--cpus", type=int, default=1, help="CPUs per point (default 1)")
    slurm.add_argument("--mem-gb", type=float, default=4, help="memory per point (default 4)")
    slurm.add_argument("--gpus", type=int, default=0, help="GPUs per point (default 0; notebooks use DEVICE='auto')")
    slurm.add_argument("--max-parallel", type=int, default=256, help="job array tasks running at once")
    slurm.add_argument("--slurm-extra", action="append", default=[], metavar="KEY=VALUE",
                       help="any other sbatch option, e.g. qos=high or constraint=a100; repeatable")
    slurm.add_argument("--max-wait-min", type=float, help="stop waiting for jobs after this long "
                       "(default: time limit x waves + 60)")
    slurm.add_argument("--poll-s", type=float, default=5.0, help="seconds between sacct polls")
    a = ap.parse_args(argv)
    try:
        spec = load_grid_file(a.grid) if a.grid else {}
        notebook = a.notebook or spec.get("notebook")
        if not notebook:
            raise SweepError("notebook: give the notebook as the first argument or as `notebook:` in --grid")
        grid = dict(spec.get("grid") or {})
        for text in a.param:
            param, values = parse_param(text)
            grid[param] = values
        extra = {}
        for text in a.slurm_extra:
            key, sep, value = text.partition("=")
            if not sep or not key:
                raise SweepError(f"--slurm-extra: expected KEY=VALUE (an sbatch option), got {text!r}")
            extra[key] = value
        options = SlurmOptions(partition=a.partition, account=a.account, time_min=a.time_min, cpus=a.cpus,
                               mem_gb=a.mem_gb, gpus=a.gpus, extra=extra, max_parallel=a.max_parallel)
        result = run_sweep(notebook, grid, a.seeds if a.seeds is not None else spec.get("seeds"),
                           a.name or spec.get("name"), a.executor, a.workers, options, a.max_wait_min, a.poll_s,
                           a.cell_timeout_min)
    except SweepError as err:
        print(f"python -m lib.sweep: error: {err}", file=sys.stderr)
        return 2
    return 0 if result.ok else 1
