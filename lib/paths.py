"""Where the project writes, and the one way it writes a file.

`outputs_dir()` is `outputs/` (LOOPS_OUTPUTS overrides it); `artifacts_dir(kind)` is where a notebook's
results and figures go. `atomic_write` writes to a temporary name beside the target and moves it
into place with `os.replace`, so a reader never sees half a file and a crash leaves the old one.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def outputs_dir() -> Path:
    """`outputs/` of the project (override with the LOOPS_OUTPUTS environment variable)."""
    return Path(os.environ.get("LOOPS_OUTPUTS", PROJECT_ROOT / "outputs"))


def artifacts_dir(kind: str) -> Path:
    """Where notebooks write their `results` (measured numbers) and `figures`: outputs/<kind>/, or,
    inside a sweep point, that point's own folder (LOOPS_POINT_DIR, set by lib.sweep), so parallel
    points never overwrite each other's or the committed files; or LOOPS_ARTIFACTS/<kind> (`make test`
    sets it: the checks re-execute notebooks without rewriting the committed results and figures).
    Runs stay shared in outputs/runs/."""
    point = os.environ.get("LOOPS_POINT_DIR") or os.environ.get("LOOPS_ARTIFACTS")
    return Path(point) / kind if point else outputs_dir() / kind


def atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    """`write(tmp)` writes the content to a temporary path; it then replaces `path` in one step."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    def write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())           # on disk before the rename makes it visible
    atomic_write(path, write)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode())


def atomic_write_json(path: Path, obj) -> None:
    atomic_write_text(path, json.dumps(obj, indent=1, sort_keys=True) + "\n")
