"""The main job: execute every section notebook through papermill, then refresh the claims ledger.

    python -m lib.run_all --profile quick            # executed copies go to outputs/notebooks/
    python -m lib.run_all --profile quick --in-place # developers: refresh the committed notebooks
    python -m lib.run_all --jobs 1                   # one notebook at a time

Runs already in the store load from it; missing ones train (the quick profile fits a 2-core CPU).
Notebooks run `--jobs` at a time (default: one per core, at most 2), each kernel then on
cores / jobs threads: the instruments are small tensor programs that keep one core busy, so two
kernels side by side finish the suite in about half the wall time of one kernel with two threads.
Two notebooks that need the same missing run do not train it twice: the store locks each run.

The log stays quiet: kernels talk to papermill over local IPC sockets (not TCP, which made every kernel
warn "running over TCP without encryption"), and a finished kernel is asked to shut down without the
SIGINT jupyter_client sends first (it printed a KeyboardInterrupt traceback into the log).
With LOOPS_ARTIFACTS (or a sweep's LOOPS_POINT_DIR) set, results, figures and the ledger all go there
(the ledger as REPORT.md beside results/): nothing tracked is rewritten.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

from . import claims
from .profiles import PROFILES
from .paths import PROJECT_ROOT, artifacts_dir, outputs_dir

NOTEBOOKS = PROJECT_ROOT / "notebooks"


def section_notebooks() -> list[Path]:
    """Every section, by its .py source (a new section's .ipynb is created from it on first run)."""
    for src in NOTEBOOKS.glob("[0-9][0-9]_*.py"):
        if not src.with_suffix(".ipynb").exists():
            subprocess.run([sys.executable, "-m", "jupytext", "--quiet", "--to", "ipynb", str(src)], check=True)
    return sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def last_duration(nb: Path) -> float:
    """Seconds papermill recorded when `nb` was last executed (0 when it never was): run side by side,
    the longest notebooks start first, so no long one is left to run alone at the end."""
    try:
        return float(json.loads(nb.read_text())["metadata"]["papermill"]["duration"] or 0)
    except (KeyError, TypeError, ValueError):
        return 0.0


def quiet_kernel_manager():
    """The kernel manager papermill starts each kernel with: IPC transport, no interrupt at shutdown.
    Defined on first use (jupyter_client is imported only by the workers)."""
    import tempfile
    import uuid

    from jupyter_client.manager import AsyncKernelManager
    from traitlets import default

    class QuietKernelManager(AsyncKernelManager):
        @default("transport")
        def _transport_default(self) -> str:       # local sockets, not TCP
            return "ipc"

        @default("ip")
        def _ip_default(self) -> str:               # the sockets' path: one per kernel, beside its connection file
            return str(Path(tempfile.gettempdir()) / f"kernel-{uuid.uuid4()}-ipc")   # (the default is shared)

        async def _async_interrupt_kernel(self) -> None:
            if self.shutting_down:                 # a shutdown request follows: no SIGINT, no traceback
                return
            await super()._async_interrupt_kernel()

    return QuietKernelManager


def report_path() -> Path:
    """Where the ledger is written: paper/REPORT.md, or REPORT.md beside the results when they are
    redirected (LOOPS_ARTIFACTS / LOOPS_POINT_DIR), so a scratch run never rewrites the tracked ledger."""
    results = artifacts_dir("results")
    return PROJECT_ROOT / "paper" / "REPORT.md" if results == outputs_dir() / "results" else results.parent / "REPORT.md"


def default_jobs() -> int:
    return max(1, min(2, os.cpu_count() or 1))


def _execute(nb: str, target: str, profile: str, threads: int | None) -> tuple[float, str | None]:
    """Execute one notebook with papermill: (wall seconds, None) or (seconds, the error in one line).
    The error travels as text: papermill's exceptions do not survive the trip back from a worker."""
    import papermill as pm
    if threads:                                   # the kernel inherits it: one core's share per kernel
        os.environ["OMP_NUM_THREADS"] = str(threads)
    t0 = time.time()
    try:
        pm.execute_notebook(nb, target, parameters={"PROFILE": profile} if profile != "quick" else {},
                            cwd=str(NOTEBOOKS), progress_bar=False, kernel_name="python3",
                            kernel_manager_class=quiet_kernel_manager())
    except Exception as err:                      # noqa: BLE001 - reported by the caller, with the notebook
        last_line = (str(err).strip().splitlines() or [""])[-1]
        return time.time() - t0, f"{type(err).__name__}: {last_line[:300]}"
    return time.time() - t0, None


def sync_from_source(src: Path, nb: Path) -> None:
    """The .py is the source of truth: bring the .ipynb's cells (sources and tags, e.g. nbval-ignore-output)
    up to date, keeping its outputs and ids (`jupytext --update` keeps the old cells' metadata, so the
    tags are carried over here)."""
    import jupytext
    text = jupytext.read(src)
    key = lambda cells: [(c.source, c.metadata.get("tags", [])) for c in cells]     # noqa: E731
    if key(text.cells) == key(jupytext.read(nb).cells):
        return
    subprocess.run([sys.executable, "-m", "jupytext", "--quiet", "--update", "--to", "ipynb", str(src)], check=True)
    paired = jupytext.read(nb)
    for cell, source_cell in zip(paired.cells, text.cells, strict=True):
        cell.metadata["tags"] = list(source_cell.metadata.get("tags", []))
    jupytext.write(paired, nb)


def report(nb: Path, target: Path, seconds: float, error: str | None, failed: list) -> None:
    if error is None:
        print(f"[run_all] {nb.name} done in {seconds:.1f} s", flush=True)
    else:
        print(f"[run_all] {nb.name} FAILED after {seconds:.1f} s ({error}); executed copy: {target}", flush=True)
        failed.append(f"{nb.name}: {error}")


def run(profile: str = "quick", in_place: bool = False, only: list[str] | None = None,
        jobs: int | None = None) -> float:
    if profile not in PROFILES:
        raise ValueError(f"--profile: unknown profile {profile!r}; allowed: {PROFILES}")
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 1:
        raise ValueError(f"--jobs: the number of notebooks run at once must be >= 1, got {jobs}")

    out_dir = artifacts_dir("notebooks")          # outputs/notebooks/ (ignored), or beside redirected results
    out_dir.mkdir(parents=True, exist_ok=True)
    t_all = time.time()
    todo = []
    for nb in section_notebooks():
        if only and not any(nb.name.startswith(o) for o in only):
            continue
        src = nb.with_suffix(".py")
        if src.exists():
            sync_from_source(src, nb)
        todo.append((nb, nb if in_place else out_dir / nb.name))
    # a thread count set by the caller is kept; else each of `jobs` kernels gets its share of the cores
    threads = None if "OMP_NUM_THREADS" in os.environ or jobs == 1 else max(1, (os.cpu_count() or 1) // jobs)
    show = lambda p: p.relative_to(PROJECT_ROOT) if p.is_relative_to(PROJECT_ROOT) else p   # noqa: E731
    print(f"[run_all] {len(todo)} notebooks, {jobs} at a time, "
          f"{threads or os.environ.get('OMP_NUM_THREADS', 'all')} thread(s) per kernel", flush=True)
    failed = []
    # one path for any --jobs (a pool of one runs them in turn); spawn, not fork: a fresh interpreter
    # per worker, nothing inherited from this one's threads
    with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        running = {}
        for nb, target in sorted(todo, key=lambda t: -last_duration(t[0])):
            print(f"[run_all] {nb.name} -> {show(target)}", flush=True)
            running[pool.submit(_execute, str(nb), str(target), profile, threads)] = (nb, target)
        for done in concurrent.futures.as_completed(running):
            try:
                outcome = done.result()
            except Exception as err:              # noqa: BLE001 - the worker itself died (killed, out of memory)
                outcome = (float("nan"), f"worker process failed: {type(err).__name__}: {err}")
            report(*running[done], *outcome, failed)
    if failed:                                    # every notebook ran; the ledger is not refreshed over a failure
        raise RuntimeError(f"{len(failed)} notebook(s) failed: " + "; ".join(failed))
    path = claims.write_report(report_path())
    wall = time.time() - t_all
    print(f"[run_all] claims ledger refreshed: {show(path)}")
    print(f"[run_all] wall time: {wall:.1f} s ({wall / 60:.1f} min)")
    return wall


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="quick", choices=PROFILES)
    ap.add_argument("--in-place", action="store_true", help="execute the committed notebooks themselves")
    ap.add_argument("--only", nargs="*", help="notebook name prefixes, e.g. 03")
    ap.add_argument("--jobs", type=int, default=None,
                    help=f"notebooks run at once (default: one per core, at most 2; here {default_jobs()})")
    a = ap.parse_args(argv)
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    os.environ.setdefault("LOOPS_HEADLESS", "1")      # notebooks skip their slider cells in batch runs
    run(a.profile, a.in_place, a.only, a.jobs)


if __name__ == "__main__":
    sys.exit(main())
