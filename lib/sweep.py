"""Batches of papermill runs across seeds and parameters, on this machine or on a Slurm cluster.

A sweep is one notebook and a grid: every combination of the grid's parameter values and seeds is a
*point*; each point is one papermill run of the notebook. A point writes everything it produces into
its own folder of the store (`outputs/` or $LOOPS_OUTPUTS):

    outputs/sweeps/<sweep-name>/<point-id>/
        params.json       the notebook parameters of this point
        notebook.ipynb    the executed notebook (written even when a cell failed)
        results/*.json    what the notebook measured (lib.claims.record, via LOOPS_POINT_DIR)
        figures/          what it drew (lib.plots.save)
        status.json       done / failed / cancelled / unfinished, wall seconds, and for a failure
                          the failing cell (index, source excerpt) and the error name and message
        DONE              written last: a point with DONE is finished and is skipped on restart
    outputs/sweeps/<sweep-name>/summary.csv   one row per point: params, status, wall_s, results
    outputs/sweeps/<sweep-name>/slurm_logs/   submitit's job files and logs (submitit executors)

Training runs the notebooks need stay in the shared run store `outputs/runs/` (its file locks make
parallel points that need the same run train it once). A restart skips points with DONE and runs
the rest again, failed ones included. A failed point reports its cell and error; the others go on.

Command line (`python -m lib.sweep --help`):

    # four seeds of the budget law in the smoke profile, on a local process pool
    python -m lib.sweep notebooks/03_budget_law.ipynb --param PROFILE=smoke --seeds 0-3

    # a grid (YAML or JSON: values are lists, a scalar is one value) on Slurm, one GPU per point
    python -m lib.sweep notebooks/03_budget_law.ipynb --grid grid.yaml --name budget-paper \\
        --executor slurm --partition gpu --account myproject --gpus 1 --time-min 240 --mem-gb 16

    where grid.yaml is e.g.
        grid:
          PROFILE: [paper]
        seeds: [0, 1, 2, 3]

Python:

    from lib.sweep import run_sweep
    result = run_sweep("notebooks/03_budget_law.ipynb", {"PROFILE": ["smoke"]}, seeds=[0, 1])
    result.rows            # one dict per point, as in summary.csv

Executors: `local` (default; a process pool sized to the machine), `slurm` (submitit job array),
and submitit's `submitit-local` (subprocesses) and `debug` (in this process) for tests. Waiting on
submitit jobs is bounded (`max_wait_min`) and notices jobs that ended without a result (cancelled,
time limit, out of memory, node failure) through the scheduler's accounting (`sacct`).
"""
from __future__ import annotations

import argparse
import concurrent.futures
import csv
import hashlib
import io
import itertools
import json
import math
import multiprocessing
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

EXECUTORS = ("local", "slurm", "submitit-local", "debug")
STATUSES = ("done", "failed", "cancelled", "unfinished")
SEED_PARAMETERS = ("SEEDS", "SEED")          # a list of seeds (SEEDS=[s]) or one seed (SEED=s)
KERNEL = "python3"                           # the Jupyter kernel papermill starts (ipykernel in .venv)
# Slurm states of a job that has ended without (necessarily) writing a result.
SLURM_ENDED = ("COMPLETED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "FAILED", "NODE_FAIL", "BOOT_FAIL",
               "DEADLINE", "PREEMPTED", "REVOKED", "SPECIAL_EXIT")
# submitit-local's states of a subprocess that has ended.
LOCAL_ENDED = ("FINISHED", "INTERRUPTED", "NO PROCESS AND NO RESULT")


class SweepError(ValueError):
    """Bad input to a sweep: raised before any point runs, naming the parameter and what is allowed."""


def _outputs_dir() -> Path:
    from .paths import outputs_dir
    return outputs_dir()


# ---------------------------------------------------------------------------------------------
# Input: the grid, the seeds, checked against the notebook's own parameter cell

@dataclass(frozen=True)
class Point:
    """One papermill run: a notebook and the parameters injected into it."""
    notebook: Path
    params: dict
    folder: Path

    @property
    def id(self) -> str:
        return self.folder.name


def point_id(notebook: Path, params: dict) -> str:
    """Short sha256 of the notebook's name and the sorted parameters: stable across restarts and
    machines (the notebook's folder does not enter, so a moved checkout finds its points again)."""
    blob = json.dumps({"notebook": Path(notebook).name, "params": params}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def parse_seeds(text) -> list[int]:
    """'0-3' -> [0, 1, 2, 3]; '0,2,5' -> [0, 2, 5]; a list of ints passes through (checked)."""
    if isinstance(text, (list, tuple)):
        seeds = list(text)
    else:
        seeds = []
        for part in str(text).split(","):
            part = part.strip()
            m = re.fullmatch(r"(\d+)-(\d+)", part)
            if m and int(m[1]) <= int(m[2]):
                seeds.extend(range(int(m[1]), int(m[2]) + 1))
            elif re.fullmatch(r"\d+", part):
                seeds.append(int(part))
            else:
                raise SweepError(f"--seeds: cannot read {part!r} in {text!r}; allowed: integers >= 0 "
                                 "separated by commas, or a range like 0-3")
    if not seeds or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds):
        raise SweepError(f"--seeds: must be a non-empty list of integers >= 0, got {text!r}")
    if len(set(seeds)) != len(seeds):
        raise SweepError(f"--seeds: a seed is listed twice in {text!r}")
    return seeds


def parse_param(text: str) -> tuple[str, list]:
    """'NAME=VALUES' from the command line; VALUES is read as YAML: a list is the values to sweep,
    anything else is one value. `PROFILE=smoke`, `T=[8,16]`, `SEEDS=[[0,1],[2,3]]` (two points)."""
    import yaml
    name, sep, values = text.partition("=")
    if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name.strip()):
        raise SweepError(f"--param: expected NAME=VALUES (e.g. PROFILE=smoke or T=[8,16]), got {text!r}")
    try:
        value = yaml.safe_load(values)
    except yaml.YAMLError as err:
        raise SweepError(f"--param {name}: cannot read {values!r} as YAML: {err}") from None
    return name.strip(), value if isinstance(value, list) else [value]


def load_grid_file(path) -> dict:
    """A small YAML or JSON file: {notebook?, name?, seeds?, grid: {PARAM: [values...]}}."""
    import yaml
    path = Path(path)
    if not path.is_file():
        raise SweepError(f"--grid: no such file {str(path)!r}")
    try:
        spec = yaml.safe_load(path.read_text())        # YAML is a superset of JSON: one reader for both
    except yaml.YAMLError as err:
        raise SweepError(f"--grid: {path} is not valid YAML/JSON: {err}") from None
    allowed = {"notebook", "name", "seeds", "grid"}
    if not isinstance(spec, dict) or set(spec) - allowed:
        extra = sorted(set(spec) - allowed) if isinstance(spec, dict) else type(spec).__name__
        raise SweepError(f"--grid: {path}: unknown keys {extra}; allowed: {sorted(allowed)}")
    if not isinstance(spec.get("grid", {}), dict):
        raise SweepError(f"--grid: {path}: 'grid' must map parameter names to lists of values")
    return spec


def notebook_parameters(notebook: Path) -> list[str]:
    """Names assigned in the notebook's `parameters` cell. papermill.inspect_notebook gives them,
    except for lines its parser gives up on (a comment with parentheses and a colon, e.g.), which it
    drops with a warning; a plain scan of `NAME =` lines catches those."""
    import logging
    import nbformat
    import papermill
    logger = logging.getLogger("papermill.translators")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        names = list(papermill.inspect_notebook(str(notebook)))
    finally:
        logger.setLevel(level)
    for cell in nbformat.read(notebook, as_version=4).cells:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            names += re.findall(r"^([A-Za-z_][A-Za-z0-9_]*)\s*(?::[^=]*)?=(?!=)", cell.source, re.M)
    return list(dict.fromkeys(names))


def expand_grid(notebook, grid: dict | None = None, seeds=None, name: str | None = None,
                root: Path | None = None) -> list[Point]:
    """Every point of the grid, checked against the notebook's parameters before any work.

    Order: the product of the grid's values in the order the parameters are given, seeds innermost.
    A grid value that is a list is the values to sweep; a scalar is one value."""
    import papermill

    notebook = Path(notebook)
    if notebook.suffix != ".ipynb" or not notebook.is_file():
        raise SweepError(f"notebook: {str(notebook)!r} is not an existing .ipynb file")
    allowed = notebook_parameters(notebook)
    if not allowed:
        raise SweepError(f"notebook: {notebook.name} has no cell tagged 'parameters'; nothing to sweep")
    grid = {k: (v if isinstance(v, list) else [v]) for k, v in (grid or {}).items()}
    for param, values in grid.items():
        if param not in allowed:
            raise SweepError(f"grid: unknown parameter {param!r} for {notebook.name}; allowed: {allowed}")
        if not values:
            raise SweepError(f"grid: parameter {param!r} has an empty list of values")
    if seeds is not None:
        seeds = parse_seeds(seeds)
        seed_param = next((p for p in SEED_PARAMETERS if p in allowed), None)
        if seed_param is None:
            raise SweepError(f"--seeds: {notebook.name} has no SEED or SEEDS parameter; its parameters: {allowed}")
        if seed_param in grid:
            raise SweepError(f"--seeds: the grid also sets {seed_param}; give the seeds one way only")
        grid[seed_param] = [[s] if seed_param == "SEEDS" else s for s in seeds]
    name = name or notebook.stem
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        raise SweepError(f"--name: {name!r} is not a usable folder name; allowed: letters, digits, '.', '_', '-'")
    sweep_dir = (root or _outputs_dir()) / "sweeps" / name
    points = []
    for values in itertools.product(*grid.values()):
        params = dict(zip(grid, values))
        points.append(Point(notebook.resolve(), params, sweep_dir / point_id(notebook, params)))
    if len({p.id for p in points}) != len(points):
        raise SweepError("grid: two points have the same parameters (a value is listed twice)")
    return points


# ---------------------------------------------------------------------------------------------
# One point: runs in a worker (a pool process, a Slurm job, or this process for `debug`)

def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)


def _write_json(path: Path, obj) -> None:
    _atomic_write(path, json.dumps(obj, indent=1, sort_keys=True) + "\n")


def run_point(spec: dict) -> dict:
    """Execute one point with papermill and record it. Never raises: every outcome becomes a
    status dict (also written to status.json), so one bad point cannot stop the sweep or, under
    submitit's debug executor, drop into a debugger. DONE is written last, only on success."""
    import papermill

    folder, notebook = Path(spec["folder"]), Path(spec["notebook"])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "DONE").unlink(missing_ok=True)
    for stale in ("results", "figures"):          # a re-run must not mix in an earlier attempt's files
        shutil.rmtree(folder / stale, ignore_errors=True)
    _write_json(folder / "params.json", {"notebook": notebook.name, "params": spec["params"]})
    status = {"point": folder.name, "params": spec["params"], "status": "failed", "host": os.uname().nodename}
    # The kernel papermill starts inherits this process's environment: that is how each point's
    # results and figures land in its own folder, and how slider cells are skipped.
    env = {"LOOPS_POINT_DIR": str(folder), "LOOPS_HEADLESS": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1",
           "OMP_NUM_THREADS": str(spec["threads"]), "MKL_NUM_THREADS": str(spec["threads"])}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    t0 = time.time()
    try:
        papermill.execute_notebook(str(notebook), str(folder / "notebook.ipynb"), parameters=spec["params"],
                                   cwd=str(notebook.parent), kernel_name=KERNEL, progress_bar=False,
                                   log_output=False, execution_timeout=spec.get("cell_timeout_s"))
        status["status"] = "done"
    except papermill.PapermillExecutionError as err:
        lines = [l for l in (err.source or "").splitlines() if l.strip()]
        status.update(cell_index=err.cell_index, execution_count=err.exec_count,
                      cell_source="\n".join(lines[:3])[:300], ename=err.ename, evalue=str(err.evalue)[:500])
    except Exception as err:                      # kernel died, cell timeout, missing kernel, ...
        status.update(cell_index=None, ename=type(err).__name__, evalue=str(err)[:500])
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    status["wall_s"] = round(time.time() - t0, 1)
    status["results"] = read_results(folder)
    _write_json(folder / "status.json", status)
    if status["status"] == "done":
        _atomic_write(folder / "DONE", f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {status['wall_s']} s\n")
    return status


def read_results(folder: Path) -> dict:
    """The point's results files, {file stem: content} (Infinity/NaN are valid here, as json writes them)."""
    out = {}
    for path in sorted((Path(folder) / "results").glob("*.json")):
        try:
            out[path.stem] = json.loads(path.read_text())
        except ValueError as err:
            out[path.stem] = {"unreadable": str(err)}
    return out


# ---------------------------------------------------------------------------------------------
# Executors

@dataclass
class SlurmOptions:
    """What a user sets for a Slurm cluster. `gpus` is per point (one job per point); notebooks with
    DEVICE="auto" use the GPU Slurm gives the job. `extra` goes to sbatch as --KEY=VALUE."""
    partition: str | None = None
    account: str | None = None
    time_min: int = 60
    cpus: int = 1
    mem_gb: float = 4
    gpus: int = 0
    extra: dict = field(default_factory=dict)
    max_parallel: int = 256


def _check_options(executor: str, workers, slurm: SlurmOptions, max_wait_min) -> None:
    if executor not in EXECUTORS:
        raise SweepError(f"--executor: unknown {executor!r}; allowed: {list(EXECUTORS)}")
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise SweepError(f"--workers: must be an integer >= 1, got {workers!r}")
    for name in ("time_min", "cpus", "max_parallel"):
        v = getattr(slurm, name)
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise SweepError(f"--{name.replace('_', '-')}: must be an integer >= 1, got {v!r}")
    if not isinstance(slurm.gpus, int) or slurm.gpus < 0:
        raise SweepError(f"--gpus: must be an integer >= 0, got {slurm.gpus!r}")
    if not (isinstance(slurm.mem_gb, (int, float)) and slurm.mem_gb > 0):
        raise SweepError(f"--mem-gb: must be a number > 0, got {slurm.mem_gb!r}")
    if max_wait_min is not None and not max_wait_min > 0:
        raise SweepError(f"--max-wait-min: must be > 0, got {max_wait_min!r}")
    if executor != "slurm":
        slurm_only = {"--partition": slurm.partition, "--account": slurm.account, "--gpus": slurm.gpus,
                      "--slurm-extra": slurm.extra}
        for option, value in slurm_only.items():
            if value:
                raise SweepError(f"{option}: only for --executor slurm (got --executor {executor})")
    if executor != "local" and workers is not None:
        raise SweepError(f"--workers: only for --executor local (got --executor {executor})")
    if executor == "slurm" and shutil.which("sbatch") is None:
        raise SweepError("--executor slurm: `sbatch` is not on PATH (run the sweep on a Slurm login node); "
                         f"allowed here: {[e for e in EXECUTORS if e != 'slurm']}")


def _run_local_pool(specs: list[dict], workers: int, report) -> None:
    """A process pool on this machine. Fresh (spawned) workers: the runner's own threads and imports
    never leak into a point."""
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = {pool.submit(run_point, spec): spec for spec in specs}
        for future in concurrent.futures.as_completed(futures):
            spec = futures[future]
            try:
                report(spec, future.result())
            except Exception as err:          # the worker process itself died (killed, out of memory)
                report(spec, _ended_without_result(spec, "failed", f"worker process died: {type(err).__name__}: {err}"))


def _make_submitit_executor(executor: str, folder: Path, slurm: SlurmOptions, name: str, n_points: int):
    import submitit
    cluster = {"slurm": "slurm", "submitit-local": "local", "debug": "debug"}[executor]
    ex = submitit.AutoExecutor(folder=folder, cluster=cluster)
    # Parameters prefixed slurm_ are ignored by the local and debug executors.
    sbatch_extra = {k.replace("_", "-"): v for k, v in slurm.extra.items()}
    if slurm.account:
        sbatch_extra["account"] = slurm.account
    params = dict(timeout_min=slurm.time_min, name=f"sweep-{name}", cpus_per_task=slurm.cpus,
                  slurm_array_parallelism=min(slurm.max_parallel, n_points),
                  slurm_additional_parameters=sbatch_extra)
    if executor == "slurm":
        params["mem_gb"] = slurm.mem_gb
        if slurm.partition:
            params["slurm_partition"] = slurm.partition
        if slurm.gpus:
            params["gpus_per_node"] = slurm.gpus    # one job is one point on one node
    ex.update_parameters(**params)
    return ex


def job_outcome(job, spec: dict, state: str, ended_at: dict, grace_s: float = 10.0) -> dict | None:
    """The point's status if its job has ended, else None. Never blocks on a running job: the
    result is read only once its file exists; a job whose scheduler `state` says it ended without a
    result file (cancelled, timed out, out of memory, ...) becomes a status after a short grace
    period (shared filesystems can show the file late). `ended_at` remembers when each job was
    first seen ended or with a result."""
    state = state or "UNKNOWN"
    first_word = state.split()[0].upper()     # sacct says e.g. "CANCELLED by 0"
    ended = first_word in SLURM_ENDED or state.upper() in LOCAL_ENDED
    now = time.time()
    if job.paths.result_pickle.exists():
        try:
            outcome = job.result()
        except Exception as err:              # run_point never raises; this is the job wrapper failing
            outcome = _ended_without_result(spec, "failed", f"job {job.job_id} raised outside the notebook: "
                                                             f"{str(err).strip().splitlines()[-1][:300]}")
        if outcome["status"] == "done" or first_word in ("COMPLETED", "FINISHED"):
            return outcome
        # A failed point may have failed *because* its job was cancelled or hit a limit: Slurm signals
        # every process of the job, the kernel dies first and the worker still records "Kernel died".
        # The scheduler's final state decides; it normally says so at once (bounded wait for it).
        if not ended and now - ended_at.setdefault(job.job_id, now) < grace_s:
            return None
        if ended and first_word not in ("COMPLETED", "FINISHED"):
            outcome = _ended_without_result(
                spec, "cancelled" if first_word == "CANCELLED" else "failed",
                f"job {job.job_id} ended {state}; the notebook stopped with {outcome.get('ename')}: "
                f"{outcome.get('evalue')}", scheduler_state=first_word, wall_s=outcome.get("wall_s"))
        return outcome
    if not ended:
        return None
    if now - ended_at.setdefault(job.job_id, now) < grace_s:
        return None
    status = "cancelled" if first_word == "CANCELLED" else "failed"
    return _ended_without_result(spec, status, f"job {job.job_id} ended without a result (state {state})",
                                 scheduler_state=first_word)


def _run_submitit(specs: list[dict], executor: str, folder: Path, slurm: SlurmOptions, name: str,
                  max_wait_min: float | None, poll_s: float, report) -> None:
    ex = _make_submitit_executor(executor, folder, slurm, name, len(specs))
    jobs = ex.map_array(run_point, specs)
    ids = sorted({str(j.job_id).split("_")[0] for j in jobs})
    if executor == "slurm":
        print(f"[sweep] submitted {len(jobs)} points as Slurm job array {', '.join(ids)} "
              f"(logs: {folder})", flush=True)
    if executor == "debug":                   # runs in this process, one after another
        for job, spec in zip(jobs, specs):
            report(spec, job.result())
        return
    deadline = None if max_wait_min is None else time.time() + 60 * max_wait_min
    pending = dict(zip(jobs, specs))
    ended_at: dict = {}
    try:
        while pending:
            if executor == "slurm":          # one sacct call per poll for every job still pending
                watcher = jobs[0].watcher
                for job in pending:
                    watcher.get_info(job.job_id, mode="cache")      # registers the job, no call
                watcher.update()
            for job, spec in list(pending.items()):
                state = job.watcher.get_state(job.job_id, mode="cache") if executor == "slurm" else job.state
                outcome = job_outcome(job, spec, state, ended_at)
                if outcome is not None:
                    del pending[job]
                    report(spec, outcome)
            if pending and deadline is not None and time.time() > deadline:
                for job, spec in pending.items():
                    if executor != "slurm":   # a local subprocess would outlive the runner; a Slurm job may finish
                        job.cancel(check=False)
                    report(spec, _ended_without_result(
                        spec, "unfinished", f"job {job.job_id} still {job.state} after {max_wait_min} min; "
                        "it writes its own results into the store when it ends (re-running the sweep "
                        "resubmits it: cancel it first, or wait and re-run)"))
                return
            if pending:
                time.sleep(poll_s)
    except KeyboardInterrupt:
        print(f"\n[sweep] interrupted; {len(pending)} jobs still queued or running ({', '.join(ids)}): they "
              "write their results into the store themselves; re-run the sweep later to collect them "
              f"(or cancel them: scancel {' '.join(ids)})", flush=True)
        raise


def _ended_without_result(spec: dict, status: str, message: str, scheduler_state: str | None = None,
                          wall_s: float | None = None) -> dict:
    """Status of a point whose worker never recorded one, or whose record the scheduler overrules
    (its job was cancelled, timed out, killed, ...)."""
    folder = Path(spec["folder"])
    folder.mkdir(parents=True, exist_ok=True)
    out = {"point": folder.name, "params": spec["params"], "status": status, "wall_s": wall_s,
           "cell_index": None, "ename": scheduler_state or "WorkerError", "evalue": message,
           "results": read_results(folder)}
    if scheduler_state:
        out["scheduler_state"] = scheduler_state
    _write_json(folder / "status.json", out)
    return out


# ---------------------------------------------------------------------------------------------
# The sweep, and its table

@dataclass
class SweepResult:
    name: str
    folder: Path
    rows: list[dict]                  # one per point, the columns of summary.csv
    ran: int                          # points run now
    skipped: int                      # points already DONE
    wall_s: float

    @property
    def ok(self) -> bool:
        return all(r["status"] == "done" for r in self.rows)


def run_sweep(notebook, grid: dict | None = None, seeds=None, name: str | None = None, executor: str = "local",
              workers: int | None = None, slurm: SlurmOptions | None = None, max_wait_min: float | None = None,
              poll_s: float = 5.0, cell_timeout_min: float | None = None, root: Path | None = None) -> SweepResult:
    """Run every point of the grid not yet DONE; write summary.csv; return the table.

    executor: local (process pool; `workers` defaults to the machine's CPUs, each point's kernel then
    gets cpus // workers threads), slurm, submitit-local, debug. `max_wait_min` bounds the wait for
    submitit jobs (default: Slurm time limit x the number of waves of jobs, plus an hour of queueing).
    `cell_timeout_min` bounds any single notebook cell (default: none locally, the time limit on Slurm)."""
    t0 = time.time()
    slurm = slurm or SlurmOptions()
    _check_options(executor, workers, slurm, max_wait_min)
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
            line += f"  {_error_text(status)}"
        print(line, flush=True)

    if todo:
        sweep_dir.mkdir(parents=True, exist_ok=True)
        if executor == "local":
            _run_local_pool(specs, workers, report)
        else:
            if max_wait_min is None:
                waves = math.ceil(len(todo) / slurm.max_parallel)
                max_wait_min = slurm.time_min * waves + 60 if executor == "slurm" else slurm.time_min * waves
            _run_submitit(specs, executor, sweep_dir / "slurm_logs", slurm, sweep_name, max_wait_min, poll_s, report)
    rows = [_row(p) for p in points]
    write_summary(rows, sweep_dir / "summary.csv")
    result = SweepResult(sweep_name, sweep_dir, rows, ran=len(todo), skipped=len(points) - len(todo),
                         wall_s=time.time() - t0)
    print(format_table(rows, list(points[0].params)), flush=True)
    counts = {s: sum(r["status"] == s for r in rows) for s in STATUSES}
    print(f"[sweep] {sweep_name}: " + ", ".join(f"{n} {s}" for s, n in counts.items() if n)
          + f" in {result.wall_s:.1f} s; table: {sweep_dir / 'summary.csv'}"
          + ("" if result.ok else "; re-run the same command to run the points not done"), flush=True)
    return result


def _error_text(status: dict) -> str:
    where = f"cell {status['cell_index']}: " if status.get("cell_index") is not None else ""
    return f"{where}{status.get('ename')}: {status.get('evalue')}"


def _flatten(obj, prefix: str = "") -> dict:
    """Scalars of a nested results dict as {'a.b': value}; lists are left out (not one cell's worth)."""
    out = {}
    for k, v in obj.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "."))
        elif v is None or isinstance(v, (bool, int, float, str)):
            out[key] = v
    return out


def _row(point: Point) -> dict:
    """A point's line of the table, from its status.json (points never started read 'unfinished')."""
    try:
        status = json.loads((point.folder / "status.json").read_text())
    except (OSError, ValueError):
        status = {"status": "unfinished", "evalue": "never ran"}
    if status.get("status") == "done" and not (point.folder / "DONE").exists():
        status["status"] = "unfinished"        # status written, DONE not: killed in between
    row = {"point": point.id}
    row.update({k: json.dumps(v) if isinstance(v, (list, dict)) else v for k, v in point.params.items()})
    row.update(status=status["status"], wall_s=status.get("wall_s"),
               error="" if status["status"] == "done" else _error_text(status))
    results = read_results(point.folder)
    for stem, content in results.items():
        prefix = f"{stem}." if len(results) > 1 else ""
        if isinstance(content, dict):
            row.update(_flatten(content, prefix))
    return row


def write_summary(rows: list[dict], path: Path) -> None:
    columns = list(dict.fromkeys(k for r in rows for k in r))
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    _atomic_write(path, buf.getvalue())


def read_summary(path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def format_table(rows: list[dict], param_names: list[str], max_result_columns: int = 4) -> str:
    """The printed summary: point, params, status, wall time, then the first few numeric results
    (every column is in summary.csv) and, for a point not done, its error."""
    if not rows:
        return "(no points)"
    shown = ["point", *param_names, "status", "wall_s"]
    numeric = [k for k in dict.fromkeys(k for r in rows for k in r) if k not in shown and k != "error"
               and any(isinstance(r.get(k), (int, float)) and not isinstance(r.get(k), bool) for r in rows)]
    columns = shown + numeric[:max_result_columns]

    def cell(v) -> str:
        if v is None or v == "":
            return "-"
        return f"{v:.3g}" if isinstance(v, float) else str(v)

    table = [columns] + [[cell(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(columns))]
    lines = ["  ".join(v.ljust(w) for v, w in zip(line, widths)).rstrip() for line in table]
    for i, r in enumerate(rows):
        if r.get("error"):
            lines[i + 1] += f"  {r['error'][:100]}"
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Command line

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lib.sweep", description=__doc__.split("\n\n")[0],
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


if __name__ == "__main__":
    # Import the module under its own name, so workers and Slurm jobs unpickle `lib.sweep.run_point`
    # (functions of `__main__` would be pickled by value or not found).
    from lib.sweep import main as _main
    raise SystemExit(_main())
