"""Content-addressed run store.

A run lives in `outputs/runs/<experiment>/<hash>/`, where hash = sha256 of the run's config
(its non-default fields) and `train.CODE_VERSION`. Files: `config.json`, `model.pt` (a plain state dict, loaded with
`weights_only=True`), `metrics.json`, and `DONE`, written last, holding the sha256 of
`model.pt`. Every file is written to a temporary name and moved into place with `os.replace`,
so a run without DONE is unfinished (its `checkpoint.pt` lets training resume) and is never
read as done. A file lock per run keeps two processes from training the same run at once.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path

import torch
from filelock import FileLock, Timeout

from .model import LoopedTransformer
from .train import CODE_VERSION, Diverged, RunConfig, train

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def outputs_dir() -> Path:
    """`outputs/` of the project (override with the LOOPS_OUTPUTS environment variable)."""
    return Path(os.environ.get("LOOPS_OUTPUTS", PROJECT_ROOT / "outputs"))


def artifacts_dir(kind: str) -> Path:
    """Where notebooks write their `results` (measured numbers) and `figures`: outputs/<kind>/, or,
    inside a sweep point, that point's own folder (LOOPS_POINT_DIR, set by lib.sweep), so parallel
    points never overwrite each other's or the committed files. Runs stay shared in outputs/runs/."""
    point = os.environ.get("LOOPS_POINT_DIR")
    return Path(point) / kind if point else outputs_dir() / kind


def config_hash(cfg: RunConfig) -> str:
    """sha256 of the config's NON-DEFAULT fields and the code version.

    Leaving default-valued fields out lets a later feature add a field (whose default keeps the old
    behaviour) without orphaning every cached run. The price is a rule: a field's default never
    changes (tests/test_train_store.py pins one hash to catch it)."""
    defaults = RunConfig()
    changed = {k: v for k, v in cfg.to_dict().items() if v != getattr(defaults, k)}
    blob = json.dumps({"config": changed, "code_version": CODE_VERSION}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def run_dir(cfg: RunConfig) -> Path:
    return outputs_dir() / "runs" / cfg.experiment / config_hash(cfg)


def run_id(cfg: RunConfig) -> str:
    """'experiment/hash': how a child run names its parent (RunConfig.init_from)."""
    return f"{cfg.experiment}/{config_hash(cfg)}"


def warm_start(parent: RunConfig, **changes) -> RunConfig:
    """A run initialised from `parent`'s stored weights and trained under `changes` (e.g. a new
    T_train: budget annealing). The child starts at the full length (curriculum_start = n_train, the
    parent already knows the task) unless `changes` says otherwise; its hash includes the parent's id,
    so the lineage is part of the recipe."""
    changes.setdefault("curriculum_start", changes.get("n_train", parent.n_train))
    return replace(parent, init_from=run_id(parent), **changes)


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


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _atomic_write_json(path: Path, obj) -> None:
    _atomic_write_bytes(path, (json.dumps(obj, indent=1, sort_keys=True) + "\n").encode())


def is_done(cfg: RunConfig) -> bool:
    return (run_dir(cfg) / "DONE").exists()


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
    model = LoopedTransformer(cfg.model_config())
    model.load_state_dict(torch.load(d / "model.pt", weights_only=True))
    model.eval()
    return Run(cfg, model, json.loads((d / "metrics.json").read_text()), d)


def save_run(cfg: RunConfig, model: LoopedTransformer, metrics: dict, wall_s: float | None = None) -> Path:
    """Write a finished run; `wall_s` (training wall time, not part of the deterministic metrics) goes
    into DONE."""
    d = run_dir(cfg)
    d.mkdir(parents=True, exist_ok=True)
    _atomic_write_json(d / "config.json", cfg.to_dict())
    tmp = d / f".model.pt.tmp{os.getpid()}"
    torch.save({k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}, tmp)
    os.replace(tmp, d / "model.pt")
    _atomic_write_json(d / "metrics.json", metrics)
    _atomic_write_json(d / "DONE", {"model_sha256": _sha256(d / "model.pt"), "code_version": CODE_VERSION,
                                    "train_wall_s": None if wall_s is None else round(wall_s, 1)})
    (d / "checkpoint.pt").unlink(missing_ok=True)
    return d


def get_or_train(cfg: RunConfig, progress: bool = False, train_if_missing: bool = True,
                 lock_timeout: float = 3600.0, device: str = "cpu") -> Run:
    """The finished run for `cfg`: from the store if cached, else trained now (on `device`) and stored.
    Loaded runs live on the CPU (instruments run there)."""
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
            t0 = time.time()
            try:
                model, metrics = train(cfg, workdir=d, progress=progress, device=device, init_state=init_state)
                if lineage is not None:
                    metrics = {**metrics, "lineage": lineage}
            except Diverged as err:
                _atomic_write_json(d / "FAILED", {"error": str(err), "step": err.step})
                raise
            save_run(cfg, model, metrics, wall_s=time.time() - t0)
    except Timeout:
        raise TimeoutError(f"run: waited {lock_timeout:.0f} s for another process training {d}; "
                           f"is another process still training it?") from None
    run = load_run(cfg)
    run.trained_here = True
    return run


def get_or_train_many(cfgs, progress: bool = False, train_if_missing: bool = True,
                      lock_timeout: float = 3600.0, device: str = "cpu") -> list[Run]:
    """Runs for many configs. Missing runs that differ only in their seed are trained together as
    one population program (`population.py`); the rest one by one. Order follows `cfgs`."""
    from dataclasses import replace
    from .population import supports, train_population
    cfgs = list(cfgs)
    missing = [c for c in cfgs if not is_done(c)]
    if missing and not train_if_missing:
        raise FileNotFoundError(f"run: {len(missing)} runs not in the store and train_if_missing=False, e.g. "
                                f"{missing[0].experiment}/{config_hash(missing[0])}")
    groups: dict = {}
    for c in missing:
        groups.setdefault(replace(c, seed=0), []).append(c)
    for group in groups.values():
        poolable = len(group) > 1 and supports(group[0])
        if not poolable or any((run_dir(c) / "FAILED").exists() for c in group):
            continue                                   # trained (or reported) one by one below
        locks = [FileLock(str(run_dir(c)) + ".lock", timeout=lock_timeout) for c in group]
        for c in group:
            run_dir(c).mkdir(parents=True, exist_ok=True)
        try:
            for lock in locks:
                lock.acquire()
            todo = [c for c in group if not is_done(c)]
            if todo:
                t0 = time.time()
                trained = train_population(todo, progress=progress, device=device, workdir=run_dir(todo[0]))
                for c, (model, metrics) in zip(todo, trained):
                    save_run(c, model, metrics, wall_s=(time.time() - t0) / len(todo))
                (run_dir(todo[0]) / "population.pt").unlink(missing_ok=True)
        except Timeout:
            raise TimeoutError(f"run: waited {lock_timeout:.0f} s for another process training one of "
                               f"{len(group)} seeds; is another process still training them?") from None
        finally:
            for lock in locks:
                lock.release()
    return [get_or_train(c, progress=progress, lock_timeout=lock_timeout, device=device) for c in cfgs]


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


def _plan_configs(section: str, profile: str, seeds) -> list[RunConfig]:
    """Every run of a section's plan, parents before children (a warm start needs its parent)."""
    from . import profiles
    seeds = {} if seeds is None else {"seeds": seeds}
    def calibration():
        plan = profiles.calibration(profile, **seeds)
        return plan.streaming + plan.shortcut
    def architecture_prior():
        plan = profiles.architecture_prior(profile, **seeds)
        return plan.tied + plan.untied + plan.tied_scan + plan.untied_scan + plan.untied_a5 + plan.extra
    def operator_wall():
        plan = profiles.operator_wall(profile, **seeds)
        return tuple(c for cfgs in plan.runs.values() for c in cfgs) + plan.free + plan.streaming
    def annealing():
        plan = profiles.annealing(profile, **seeds)
        return plan.start + tuple(c for col in plan.scratch for c in col) + tuple(c for ch in plan.chains for c in ch)
    plans = {"budget_law": lambda: profiles.budget_law(profile, **seeds).runs, "calibration": calibration,
             "architecture_prior": architecture_prior, "operator_wall": operator_wall, "annealing": annealing,
             "contests": lambda: tuple(c for cfgs in profiles.contests(profile, **seeds).contests.values() for c in cfgs),
             "easy_to_hard": lambda: profiles.easy_to_hard(profile, **seeds).runs,
             "stability": lambda: tuple(c for plan in [profiles.stability(profile, **seeds)]
                                        for cfgs in list(plan.runs.values()) + list(plan.sudoku.values()) for c in cfgs)}
    if section not in plans:
        raise ValueError(f"section: unknown {section!r}; allowed: {sorted(plans)}")
    return list(dict.fromkeys(plans[section]()))          # a run shared by two lists is trained once


def main(argv=None) -> int:
    """`python -m lib.store train <section> [--profile quick] [--shard i/k]`: fill the store for a
    section's plan (k processes can split it with --shard; not for "annealing", whose warm starts need
    their parents first), or `python -m lib.store list`."""
    import argparse
    ap = argparse.ArgumentParser(prog="python -m lib.store")
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train", help="train every missing run of a section's plan")
    t.add_argument("section")
    t.add_argument("--profile", default="quick")
    t.add_argument("--seeds", default=None, help="comma-separated seeds (default: the plan's own)")
    t.add_argument("--shard", default="0/1", help="i/k: this process trains runs i, i+k, ...")
    t.add_argument("--threads", type=int, default=1)
    r = sub.add_parser("run", help="get or train one run given as a JSON RunConfig")
    r.add_argument("--config", required=True, help="JSON object of RunConfig fields")
    r.add_argument("--lock-timeout", type=float, default=3600.0)
    sub.add_parser("list", help="list finished and running runs")
    sub.add_parser("verify", help="check every finished run's weights against its recorded sha256")
    a = ap.parse_args(argv)
    if a.cmd == "run":
        torch.set_num_threads(1)
        cfg = RunConfig.from_dict(json.loads(a.config))
        t0 = time.time()
        run = get_or_train(cfg, lock_timeout=a.lock_timeout)
        print(json.dumps({"path": str(run.path), "trained_here": run.trained_here, "start": t0, "end": time.time()}))
        return 0
    if a.cmd == "verify":
        problems = verify()
        for p in problems:
            print(p)
        n = len(list((outputs_dir() / "runs").glob("*/*/DONE")))
        print(f"{n} finished runs checked, {len(problems)} problems")
        return 1 if problems else 0
    if a.cmd == "list":
        for d in sorted(p for p in (outputs_dir() / "runs").glob("*/*") if p.is_dir()):
            name = d.relative_to(outputs_dir())
            if (d / "DONE").exists():
                m = json.loads((d / "metrics.json").read_text())
                print(f"{name}  done     steps {m['steps']:6d}  seq_acc {m['final_eval']['seq_acc']:.3f}")
            elif (d / "checkpoint.pt").exists():
                c = torch.load(d / "checkpoint.pt", weights_only=True)
                last = c["log"][-1] if c["log"] else {}
                print(f"{name}  running  step  {c['step']:6d}  length {c['curriculum']['length']}  "
                      f"loss {last.get('loss', float('nan')):.3f}")
        return 0
    i, k = (int(x) for x in a.shard.split("/"))
    torch.set_num_threads(a.threads)
    cfgs = _plan_configs(a.section, a.profile, None if a.seeds is None else [int(s) for s in a.seeds.split(",")])
    for cfg in cfgs[i::k]:
        t0 = time.time()
        run = get_or_train(cfg, progress=True)
        print(json.dumps({"run": str(run.path.relative_to(outputs_dir())), "T_train": cfg.T_train,
                          "seed": cfg.seed, "steps": run.metrics["steps"], "wall_s": round(time.time() - t0, 1),
                          "seq_acc": run.metrics["final_eval"]["seq_acc"]}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
