"""Readings of a stored run kept beside it, so a notebook re-reads a costly instrument only when the run
or the reader changes.

A reading is a JSON-able dict. It is kept at `<run dir>/readings/<name>.json` with the reader's
`version` and the sha256 of the weights it read (the run's DONE record), and used only when both
match; otherwise it is computed and written there (a finished run's folder is committed with its
readings). `recompute=True` computes it afresh and raises if it differs from the kept one: the check
that a kept number is still what the stored run gives (tests/test_reading_cache.py; for a study,
`python -m lib.cli verify-readings`-style checks call `reading(..., recompute=True)` run by run).
"""
from __future__ import annotations

import json
from typing import Callable

from .paths import atomic_write_json


def _weights_sha(run) -> str:
    return json.loads((run.path / "DONE").read_text())["model_sha256"]


def reading(run, name: str, version: int, compute: Callable[[], dict], recompute: bool = False) -> dict:
    """`run`: a `store.Run` read from the store; `compute()` gives the reading of that run."""
    if not name or not name.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"name: letters, digits, '-' and '_' only, got {name!r}")
    path = run.path / "readings" / f"{name}.json"
    sha = _weights_sha(run)
    kept = json.loads(path.read_text()) if path.exists() else None
    fresh = kept is not None and kept.get("version") == version and kept.get("model_sha256") == sha
    if fresh and not recompute:
        return kept["value"]
    value = json.loads(json.dumps(compute()))          # as it reads back: tuples become lists
    same = lambda a, b: json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)   # noqa: E731  (NaN == NaN)
    if fresh and not same(value, kept["value"]):
        raise ValueError(f"reading {name!r} of {run.path}: recomputed {value} differs from the kept {kept['value']}")
    if not fresh:
        path.parent.mkdir(exist_ok=True)
        atomic_write_json(path, {"version": version, "model_sha256": sha, "value": value})
    return value
