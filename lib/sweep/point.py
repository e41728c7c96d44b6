"""One point of a sweep: one papermill run of the notebook, in a worker (a pool process, a Slurm
job, or this process for `debug`), recorded in the point's own folder of the store:

    outputs/sweeps/<sweep-name>/<point-id>/
        params.json       the notebook parameters of this point
        notebook.ipynb    the executed notebook (written even when a cell failed)
        results/*.json    what the notebook measured (lib.rules.record, via LOOPS_POINT_DIR)
        figures/          what it drew (lib.plots.save)
        status.json       done / failed / cancelled / unfinished, wall seconds, and for a failure
                          the failing cell (index, source excerpt) and the error name and message
        DONE              written last: a point with DONE is finished and is skipped on restart

A worker receives its point as a plain dict (a spec: notebook, params, folder, threads,
cell_timeout_s), which pickles to any worker.
"""
from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

from ..paths import atomic_write_json, atomic_write_text

STATUSES = ("done", "failed", "cancelled", "unfinished")
KERNEL = "python3"                           # the Jupyter kernel papermill starts (ipykernel in .venv)


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
    atomic_write_json(folder / "params.json", {"notebook": notebook.name, "params": spec["params"]})
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
        lines = [line for line in (err.source or "").splitlines() if line.strip()]
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
    atomic_write_json(folder / "status.json", status)
    if status["status"] == "done":
        atomic_write_text(folder / "DONE", f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {status['wall_s']} s\n")
    return status


def ended_without_result(spec: dict, status: str, message: str, scheduler_state: str | None = None,
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
    atomic_write_json(folder / "status.json", out)
    return out


def read_results(folder: Path) -> dict:
    """The point's results files, {file stem: content} (Infinity/NaN are valid here, as json writes them)."""
    out = {}
    for path in sorted((Path(folder) / "results").glob("*.json")):
        try:
            out[path.stem] = json.loads(path.read_text())
        except ValueError as err:
            out[path.stem] = {"unreadable": str(err)}
    return out
