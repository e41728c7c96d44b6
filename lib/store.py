"""Content-addressed run store.

A run lives in `outputs/runs/<experiment>/<hash>/`, where hash = sha256 of the run's config
and `train.CODE_VERSION`. Files: `config.json`, `model.pt` (a plain state dict, loaded with
`weights_only=True`), `metrics.json`, and `DONE`, written last, holding the sha256 of
`model.pt`. Every file is written to a temporary name and moved into place with `os.replace`,
so a run without DONE is unfinished (its `checkpoint.pt` lets training resume) and is never
read as done. A file lock per run keeps two processes from training the same run at once.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import torch
from filelock import FileLock, Timeout

from .model import LoopedTransformer
from .train import CODE_VERSION, RunConfig, train

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def outputs_dir() -> Path:
    """`outputs/` of the project (override with the LOOPS_OUTPUTS environment variable)."""
    return Path(os.environ.get("LOOPS_OUTPUTS", PROJECT_ROOT / "outputs"))


def config_hash(cfg: RunConfig) -> str:
    blob = json.dumps({"config": cfg.to_dict(), "code_version": CODE_VERSION}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def run_dir(cfg: RunConfig) -> Path:
    return outputs_dir() / "runs" / cfg.experiment / config_hash(cfg)


@dataclass
class Run:
    config: RunConfig
    model: LoopedTransformer
    metrics: dict
    path: Path


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


def save_run(cfg: RunConfig, model: LoopedTransformer, metrics: dict) -> Path:
    d = run_dir(cfg)
    d.mkdir(parents=True, exist_ok=True)
    _atomic_write_json(d / "config.json", cfg.to_dict())
    tmp = d / f".model.pt.tmp{os.getpid()}"
    torch.save({k: v.contiguous() for k, v in model.state_dict().items()}, tmp)
    os.replace(tmp, d / "model.pt")
    _atomic_write_json(d / "metrics.json", metrics)
    _atomic_write_json(d / "DONE", {"model_sha256": _sha256(d / "model.pt"), "code_version": CODE_VERSION})
    (d / "checkpoint.pt").unlink(missing_ok=True)
    return d


def get_or_train(cfg: RunConfig, progress: bool = False, train_if_missing: bool = True,
                 lock_timeout: float = 3600.0) -> Run:
    """The finished run for `cfg`: from the store if cached, else trained now and stored."""
    if is_done(cfg):
        return load_run(cfg)
    if not train_if_missing:
        raise FileNotFoundError(f"run: {cfg.experiment}/{config_hash(cfg)} is not in the store and "
                                "train_if_missing=False")
    d = run_dir(cfg)
    d.mkdir(parents=True, exist_ok=True)
    try:
        with FileLock(str(d) + ".lock", timeout=lock_timeout):
            if is_done(cfg):                 # another process finished it while we waited
                return load_run(cfg)
            model, metrics = train(cfg, workdir=d, progress=progress)
            save_run(cfg, model, metrics)
    except Timeout:
        raise TimeoutError(f"run: waited {lock_timeout:.0f} s for another process training {d}; "
                           f"remove {d}.lock if no such process exists") from None
    return load_run(cfg)
