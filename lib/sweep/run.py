"""A whole sweep: expand the grid (checked before anything runs), run the points not yet DONE on an
executor, reporting each as it finishes, then write the tables (summary.csv, one row per point;
summary_by_config.csv, seeds combined per configuration) and print the first.

A restart skips points with DONE and runs the rest again, failed ones included. A failed point
reports its cell and error; the others go on.
"""
from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from .aggregate import by_config
from .executors import SlurmOptions, check_options, run_local_pool, run_submitit
from .grid import expand_grid
from .point import STATUSES
from .table import error_text, format_table, summary_rows, write_csv, write_summary


@dataclass
class SweepResult:
    name: str
    folder: Path
    rows: list[dict]                  # one per point, the columns of summary.csv
    ran: int                          # points run now
    skipped: int                      # points already DONE
    wall_s: float
    configs: list[dict] = field(default_factory=list)    # one per configuration, as in summary_by_config.csv

    @property
    def ok(self) -> bool:
        return all(r["status"] == "done" for r in self.rows)


def run_sweep(notebook, grid: dict | None = None, seeds=None, name: str | None = None, executor: str = "local",
              workers: int | None = None, slurm: SlurmOptions | None = None, max_wait_min: float | None = None,
              poll_s: float = 5.0, cell_timeout_min: float | None = None, root: Path | None = None) -> SweepResult:
    """Run every point of the grid not yet DONE; write summary.csv and summary_by_config.csv; return
    the tables.

    executor: local (process pool; `workers` defaults to the machine's CPUs, each point's kernel then
    gets cpus // workers threads), slurm, submitit-local, debug. `max_wait_min` bounds the wait for
    submitit jobs (default: Slurm time limit x the number of waves of jobs, plus an hour of queueing).
    `cell_timeout_min` bounds any single notebook cell (default: none locally, the time limit on Slurm)."""
    t0 = time.time()
    slurm = slurm or SlurmOptions()
    check_options(executor, workers, slurm, max_wait_min)
    points = expand_grid(notebook, grid, seeds, name, root)
    sweep_dir = points[0].folder.parent
    sweep_name = sweep_dir.name
    todo = [p for p in points if not (p.folder / "DONE").exists()]
    cpus = os.cpu_count() or 1
    workers = min(workers or cpus, max(1, len(todo)))
    threads = {"local": max(1, cpus // workers), "slurm": slurm.cpus,
               "submitit-local": max(1, cpus // max(1, len(todo))), "debug": cpus}[executor]
    if cell_timeout_min is None and executor == "slurm":
        cell_timeout_min = slurm.time_min
    specs = [{"notebook": str(p.notebook), "params": p.params, "folder": str(p.folder), "threads": threads,
              "cell_timeout_s": None if cell_timeout_min is None else int(60 * cell_timeout_min)} for p in todo]
    where = f"local pool of {workers} workers" if executor == "local" else executor
    print(f"[sweep] {sweep_name}: {len(points)} points, {len(points) - len(todo)} already done (skipped), "
          f"{len(todo)} to run on {where} -> {sweep_dir}", flush=True)

    finished = []

    def report(spec: dict, status: dict) -> None:         # one line per point as it finishes
        finished.append(status)
        params = " ".join(f"{k}={json.dumps(v)}" for k, v in spec["params"].items())
        wall = "" if status.get("wall_s") is None else f"{status['wall_s']:.1f} s"
        line = f"[sweep] {len(finished)}/{len(todo)} {status['status']:9s} {Path(spec['folder']).name}  {params}  {wall}"
        if status["status"] != "done":
            line += f"  {error_text(status)}"
        print(line, flush=True)

    if todo:
        sweep_dir.mkdir(parents=True, exist_ok=True)
        if executor == "local":
            run_local_pool(specs, workers, report)
        else:
            if max_wait_min is None:
                waves = math.ceil(len(todo) / slurm.max_parallel)
                max_wait_min = slurm.time_min * waves + 60 if executor == "slurm" else slurm.time_min * waves
            run_submitit(specs, executor, sweep_dir / "slurm_logs", slurm, sweep_name, max_wait_min, poll_s, report)
    rows = summary_rows(points)
    configs = by_config(rows, list(points[0].params))
    write_summary(rows, sweep_dir / "summary.csv")
    write_csv(configs, sweep_dir / "summary_by_config.csv")
    result = SweepResult(sweep_name, sweep_dir, rows, ran=len(todo), skipped=len(points) - len(todo),
                         wall_s=time.time() - t0, configs=configs)
    print(format_table(rows, list(points[0].params)), flush=True)
    counts = {s: sum(r["status"] == s for r in rows) for s in STATUSES}
    print(f"[sweep] {sweep_name}: " + ", ".join(f"{n} {s}" for s, n in counts.items() if n)
          + f" in {result.wall_s:.1f} s; tables: {sweep_dir / 'summary.csv'}, summary_by_config.csv"
          + ("" if result.ok else "; re-run the same command to run the points not done"), flush=True)
    return result
