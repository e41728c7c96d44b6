"""Where the points run: `local` (default; a process pool sized to the machine), `slurm` (a
submitit job array), and submitit's `submitit-local` (subprocesses) and `debug` (in this process)
for tests. Each executor hands every point's status to `report` as the point finishes.

Waiting on submitit jobs is bounded (`max_wait_min`) and notices jobs that ended without a result
(cancelled, time limit, out of memory, node failure) through the scheduler's accounting (`sacct`).
"""
from __future__ import annotations

import concurrent.futures
import multiprocessing
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from .errors import SweepError
from .point import ended_without_result, run_point

EXECUTORS = ("local", "slurm", "submitit-local", "debug")
# Slurm states of a job that has ended without (necessarily) writing a result.
SLURM_ENDED = ("COMPLETED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "FAILED", "NODE_FAIL", "BOOT_FAIL",
               "DEADLINE", "PREEMPTED", "REVOKED", "SPECIAL_EXIT")
# submitit-local's states of a subprocess that has ended.
LOCAL_ENDED = ("FINISHED", "INTERRUPTED", "NO PROCESS AND NO RESULT")


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


def check_options(executor: str, workers, slurm: SlurmOptions, max_wait_min) -> None:
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


def run_local_pool(specs: list[dict], workers: int, report) -> None:
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
                report(spec, ended_without_result(spec, "failed", f"worker process died: {type(err).__name__}: {err}"))


def run_submitit(specs: list[dict], executor: str, folder: Path, slurm: SlurmOptions, name: str,
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
                    report(spec, ended_without_result(
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
            outcome = ended_without_result(spec, "failed", f"job {job.job_id} raised outside the notebook: "
                                                            f"{str(err).strip().splitlines()[-1][:300]}")
        if outcome["status"] == "done" or first_word in ("COMPLETED", "FINISHED"):
            return outcome
        # A failed point may have failed *because* its job was cancelled or hit a limit: Slurm signals
        # every process of the job, the kernel dies first and the worker still records "Kernel died".
        # The scheduler's final state decides; it normally says so at once (bounded wait for it).
        if not ended and now - ended_at.setdefault(job.job_id, now) < grace_s:
            return None
        if ended and first_word not in ("COMPLETED", "FINISHED"):
            outcome = ended_without_result(
                spec, "cancelled" if first_word == "CANCELLED" else "failed",
                f"job {job.job_id} ended {state}; the notebook stopped with {outcome.get('ename')}: "
                f"{outcome.get('evalue')}", scheduler_state=first_word, wall_s=outcome.get("wall_s"))
        return outcome
    if not ended:
        return None
    if now - ended_at.setdefault(job.job_id, now) < grace_s:
        return None
    status = "cancelled" if first_word == "CANCELLED" else "failed"
    return ended_without_result(spec, status, f"job {job.job_id} ended without a result (state {state})",
                                scheduler_state=first_word)
