"""Content-addressed run store.

A run lives in `outputs/runs/<experiment>/<hash>/`, where hash = sha256 of the run's config
(its non-default fields) and `config.CODE_VERSION`. Files: `config.json`, `model.pt` (a plain state dict, loaded with
`weights_only=True`), `metrics.json`, and `DONE`, written last, holding the sha256 of
`model.pt`. Every file is written with `paths.atomic_write` (a temporary name moved into place),
so a run without DONE is unfinished (its `checkpoint.pt` lets training resume) and is never
read as done. A file lock per run keeps two processes from training the same run at once.
"""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path

import torch
from filelock import FileLock, Timeout

from .model import LoopedTransformer
from .config import CODE_VERSION, RunConfig, config_hash, execution
from .paths import atomic_write, atomic_write_json, outputs_dir
from .step import Diverged
from .train import add_spent, resource, train

def run_dir(cfg: RunConfig) -> Path:
    return outputs_dir() / "runs" / cfg.experiment / config_hash(cfg)


def parent_state(cfg: RunConfig) -> tuple[dict, dict]:
    """The verified weights of cfg.init_from and its lineage record. Raises before any work if the
    parent is missing, unfinished, corrupt, or of another architecture."""
    d = outputs_dir() / "runs" / cfg.init_from
    if not (d / "DONE").exists():
        raise FileNotFoundError(f"init_from: {cfg.init_from!r} is not a finished run in {outputs_dir() / 'runs'}; "
                                "train the parent first")
    done = json.loads((d / "DONE").read_text())
    if _sha256(d / "model.pt") != done["model_sha256"]:
        raise ValueError(f"init_from: {d / 'model.pt'} does not match the sha256 recorded in DONE; refusing to load")
    parent_cfg = RunConfig.from_dict(json.loads((d / "config.json").read_text()))
    if parent_cfg.model_config() != cfg.model_config():
        raise ValueError(f"init_from: {cfg.init_from!r} has another architecture ({parent_cfg.model_config()}); "
                         f"allowed: a parent with this run's model config ({cfg.model_config()})")
    state = torch.load(d / "model.pt", weights_only=True)
    parent_metrics = json.loads((d / "metrics.json").read_text())
    lineage = {"init_from": cfg.init_from, "parent_sha256": done["model_sha256"],
               "parent_lineage": parent_metrics.get("lineage"), "optimizer_state": "fresh (weights only)"}
    return state, lineage


@dataclass
class Run:
    config: RunConfig
    model: LoopedTransformer
    metrics: dict
    path: Path
    trained_here: bool = False     # True when this call trained it (False: read from the store)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def is_done(cfg: RunConfig) -> bool:
    return (run_dir(cfg) / "DONE").exists()


def is_diverged(cfg: RunConfig) -> bool:
    """Training stopped on a non-finite loss (the FAILED marker): never stored as done, never retried unasked."""
    return (run_dir(cfg) / "FAILED").exists()


def study_progress(entry: str, cfgs, waiting) -> str:
    """The line a confirmatory reader prints before it reads: how many of its runs are stored, diverged or
    left untrained after a divergence (a warm start whose ancestor diverged), and whether it waits."""
    done, diverged = sum(map(is_done, cfgs)), sum(map(is_diverged, cfgs))
    untrained = len(cfgs) - done - diverged - len(waiting)
    return (f"{entry}: {done} of {len(cfgs)} runs stored" + (f"; {diverged} diverged" if diverged else "")
            + (f"; {untrained} left untrained after a divergence" if untrained else "")
            + ("" if not waiting else "; the reading waits for the rest (no verdict recorded)"))


def load_run(cfg: RunConfig) -> Run:
    """Load a finished run; refuses unfinished runs and weights whose bytes disagree with DONE."""
    d = run_dir(cfg)
    if not (d / "DONE").exists():
        raise FileNotFoundError(f"run: no finished run for this config at {d} (no DONE marker)")
    done = json.loads((d / "DONE").read_text())
    if _sha256(d / "model.pt") != done["model_sha256"]:
        raise ValueError(f"run: {d / 'model.pt'} does not match the sha256 recorded in DONE; refusing to load")
    stored = RunConfig.from_dict(json.loads((d / "config.json").read_text()))
    if stored != cfg:
        raise ValueError(f"run: config stored at {d} differs from the requested config")
    if cfg.mode and done.get("mode") != cfg.mode:
        raise ValueError(f"run: {d} was trained in mode {done.get('mode') or 'unrecorded'!r}, not its recipe's "
                         f"{cfg.mode!r}; refusing to read it as this recipe's run")
    model = LoopedTransformer(cfg.model_config())
    model.load_state_dict(torch.load(d / "model.pt", weights_only=True))
    model.eval()
    return Run(cfg, model, json.loads((d / "metrics.json").read_text()), d)


def trained_before(checkpoint: Path, seeds: list[int] | None = None) -> dict[str, float] | None:
    """Training seconds by resource spent before `checkpoint` was written (`train.RunProgress.spent`): {}
    without a checkpoint (or with a population checkpoint of other `seeds`, which training ignores), None
    for one that did not record them. A population checkpoint holds the whole program's time."""
    if not checkpoint.exists():
        return {}
    state = torch.load(checkpoint, weights_only=True, map_location="cpu")
    if seeds is not None:
        return state["runs"][0].get("spent") if state.get("seeds") == seeds else {}
    return state.get("spent")


def save_run(cfg: RunConfig, model: LoopedTransformer, metrics: dict, spent: dict[str, float] | None = None,
             wall_s: float | None = None) -> Path:
    """Write a finished run. DONE records what training cost (not part of the deterministic metrics):
    `train_spent`, seconds by resource ("cpu x<threads>", "cuda") over every checkpointed stretch, and
    `train_wall_s`, their sum; when a resumption lost the time before it (`spent` None), `train_wall_s`
    is `wall_s`, the last stretch only, and `train_wall_partial: true` says so. `compiled: true` when
    some of its steps ran compiled (metrics say so: not a bit-identical replay of its recipe's eager run)."""
    if spent is not None:
        cost = {"train_wall_s": round(sum(spent.values()), 1), "train_spent": {k: round(v, 1) for k, v in spent.items()}}
    else:
        cost = {"train_wall_s": None if wall_s is None else round(wall_s, 1),
                **({"train_wall_partial": True} if wall_s is not None else {})}
    d = run_dir(cfg)
    d.mkdir(parents=True, exist_ok=True)
    atomic_write_json(d / "config.json", cfg.to_dict())
    weights = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    atomic_write(d / "model.pt", lambda tmp: torch.save(weights, tmp))
    atomic_write_json(d / "metrics.json", metrics)
    started = json.loads((d / "STARTED").read_text()) if (d / "STARTED").exists() else {}
    atomic_write_json(d / "DONE", {"model_sha256": _sha256(d / "model.pt"), "code_version": CODE_VERSION, **cost,
                                    **({"compiled": True} if metrics.get("compiled") else {}),
                                    **({"mode": cfg.mode} if cfg.mode else {}), **started})
    (d / "checkpoint.pt").unlink(missing_ok=True)
    return d


def cpu_stretch_seconds(spent: dict[str, float]) -> float:
    """CPU seconds (wall x threads) of the CPU stretches of a `train_spent` record (labels from
    `train.resource`: "cpu x<threads>"); its GPU stretches are left out."""
    return sum(seconds * int(where[len("cpu x"):]) for where, seconds in spent.items() if where.startswith("cpu x"))


def cpu_seconds(done: dict) -> float | None:
    """A run's CPU seconds from its DONE record: seconds x threads per CPU stretch where it recorded them
    by resource (`train_spent`), else its wall time (one thread per run); None for a run with a GPU
    stretch or no time."""
    spent = done.get("train_spent")
    if spent is None:
        return done.get("train_wall_s")
    if any(not where.startswith("cpu x") for where in spent):
        return None
    return cpu_stretch_seconds(spent)


def mark_started(cfg: RunConfig) -> None:
    """Record when a run's training first started (`STARTED`, copied into DONE: a pre-registered run's
    start must be later than the commit of its entry, tests/test_preregistration.py) and its config
    (so an unfinished run is listed by what it is)."""
    d = run_dir(cfg)
    if not (d / "STARTED").exists():
        atomic_write_json(d / "STARTED", {"started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    if not (d / "config.json").exists():
        atomic_write_json(d / "config.json", cfg.to_dict())


def get_or_train(cfg: RunConfig, progress: bool = False, train_if_missing: bool = True,
                 lock_timeout: float = 3600.0, device: str | None = None, compile: bool | None = None) -> Run:
    """The finished run for `cfg`: from the store if cached, else trained now and stored. A run whose
    recipe fixes an execution mode (`cfg.mode`) trains in it; otherwise on `device` (default CPU), with
    a compiled step if `compile` (see `train.train`). Loaded runs live on the CPU (instruments run there)."""
    device, compile = execution(cfg, device, compile)      # a request against the run's mode fails here
    if is_done(cfg):
        return load_run(cfg)
    if not train_if_missing:
        raise FileNotFoundError(f"run: {cfg.experiment}/{config_hash(cfg)} is not in the store and "
                                "train_if_missing=False")
    d = run_dir(cfg)
    init_state, lineage = parent_state(cfg) if cfg.init_from else (None, None)   # fails before any write
    if (d / "FAILED").exists():
        raise RuntimeError(f"run: {d} failed before: {json.loads((d / 'FAILED').read_text())['error']} "
                           f"(delete {d / 'FAILED'} to retry)")
    d.mkdir(parents=True, exist_ok=True)
    # fcntl lock: the kernel releases it when its holder dies, so a dead trainer never leaves a
    # stale lock behind (the empty .lock file may stay; it is not a lock by itself).
    try:
        with FileLock(str(d) + ".lock", timeout=lock_timeout):
            if is_done(cfg):                 # another process finished it while we waited
                return load_run(cfg)
            t0, before = time.time(), trained_before(d / "checkpoint.pt")
            mark_started(cfg)
            try:
                model, metrics = train(cfg, workdir=d, progress=progress, device=device, compile=compile,
                                       init_state=init_state)
                if lineage is not None:
                    metrics = {**metrics, "lineage": lineage}
            except Diverged as err:
                atomic_write_json(d / "FAILED", {"error": str(err), "step": err.step})
                raise
            stretch = time.time() - t0
            save_run(cfg, model, metrics, None if before is None else add_spent(before, resource(device), stretch),
                     wall_s=stretch)
    except Timeout:
        raise TimeoutError(f"run: waited {lock_timeout:.0f} s for another process training {d}; "
                           f"is another process still training it?") from None
    run = load_run(cfg)
    run.trained_here = True
    return run


def get_or_train_many(cfgs, progress: bool = False, train_if_missing: bool = True,
                      lock_timeout: float = 3600.0, device: str | None = None) -> list[Run]:
    """Runs for many configs. Missing runs that differ only in their seed are trained together as
    one population program (`population.py`); the rest one by one. Order follows `cfgs`. Runs whose
    recipe fixes an execution mode train one by one in it (a population is another program)."""
    from dataclasses import replace
    from .population import supports, train_population
    cfgs = list(cfgs)
    pool_device = device or "cpu"      # populations are trained only for runs without a mode
    missing = [c for c in cfgs if not is_done(c)]
    if missing and not train_if_missing:
        raise FileNotFoundError(f"run: {len(missing)} runs not in the store and train_if_missing=False, e.g. "
                                f"{missing[0].experiment}/{config_hash(missing[0])}")
    groups: dict = {}
    for c in missing:
        groups.setdefault(replace(c, seed=0), []).append(c)
    for group in groups.values():
        poolable = len(group) > 1 and supports(group[0]) and not group[0].mode
        if not poolable or any((run_dir(c) / "FAILED").exists() for c in group):
            continue                                   # trained (or reported) one by one below
        # taken in one global order (by path), so two processes wanting overlapping seeds cannot deadlock
        locks = [FileLock(str(d) + ".lock", timeout=lock_timeout) for d in sorted(run_dir(c) for c in group)]
        for c in group:
            run_dir(c).mkdir(parents=True, exist_ok=True)
        try:
            for lock in locks:
                lock.acquire()
            todo = [c for c in group if not is_done(c)]
            if todo:
                t0 = time.time()
                before = trained_before(run_dir(todo[0]) / "population.pt", [c.seed for c in todo])
                for c in todo:
                    mark_started(c)
                try:
                    trained = train_population(todo, progress=progress, device=pool_device, workdir=run_dir(todo[0]))
                except Diverged as err:                # the diverged seed is marked; the others retrain alone
                    bad = next(c for c in todo if c.seed == err.seed)
                    atomic_write_json(run_dir(bad) / "FAILED", {"error": str(err), "step": err.step})
                    raise
                for c, (model, metrics) in zip(todo, trained):
                    stretch = (time.time() - t0) / len(todo)       # each seed's share of the program
                    share = None if before is None else {k: v / len(todo) for k, v in before.items()}
                    save_run(c, model, metrics, None if share is None else add_spent(share, resource(pool_device), stretch),
                             wall_s=stretch)
                (run_dir(todo[0]) / "population.pt").unlink(missing_ok=True)
        except Timeout:
            raise TimeoutError(f"run: waited {lock_timeout:.0f} s for another process training one of "
                               f"{len(group)} seeds; is another process still training them?") from None
        finally:
            for lock in locks:
                lock.release()
    return [get_or_train(c, progress=progress, lock_timeout=lock_timeout, device=device) for c in cfgs]


def training_cost(runs) -> dict:
    """What training `runs` cost, from their DONE records (`save_run`). Over the runs that recorded it by
    resource (`train_spent`): CPU seconds (wall x threads) and GPU seconds. The rest, counted apart with
    their wall summed (`<kind>_wall_s`): `legacy`, recorded before costs were kept by resource (a wall
    time only, and only the last stretch if the run was ever resumed: a lower bound); `partial`, resumed
    from a checkpoint without the time before it (a lower bound); `unknown`, no time at all."""
    out = {"runs": 0, "cpu_s": 0.0, "gpu_s": 0.0, "by_resource": 0, "legacy": 0, "legacy_wall_s": 0.0,
           "partial": 0, "partial_wall_s": 0.0, "unknown": 0}
    for run in runs:
        done = json.loads((run.path / "DONE").read_text())
        out["runs"] += 1
        if "train_spent" in done:
            out["by_resource"] += 1
            out["cpu_s"] += cpu_stretch_seconds(done["train_spent"])
            out["gpu_s"] += done["train_spent"].get("cuda", 0.0)
            continue
        kind = "unknown" if done.get("train_wall_s") is None else "partial" if done.get("train_wall_partial") else "legacy"
        out[kind] += 1
        if kind != "unknown":
            out[f"{kind}_wall_s"] += done["train_wall_s"]
    return out


def verify() -> list[str]:
    """Check every finished run: weights match DONE's sha256 and load as plain tensors."""
    problems = []
    for done in sorted((outputs_dir() / "runs").glob("*/*/DONE")):
        d = done.parent
        try:
            cfg = RunConfig.from_dict(json.loads((d / "config.json").read_text()))
            if d.name != config_hash(cfg):
                raise ValueError(f"directory name is not the hash of its config ({config_hash(cfg)})")
            load_run(cfg)
        except Exception as err:      # report every bad run, then fail
            problems.append(f"{d.relative_to(outputs_dir())}: {err}")
    return problems
