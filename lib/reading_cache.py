"""Readings of a stored run kept beside it, so a notebook re-reads a costly instrument only when the run
or the reader changes.

A reading is a JSON-able dict. It is kept at `<run dir>/readings/<name>.json` (`<name>-<params hash>.json`
when the reader takes parameters: one file per parameter set, the parameters written inside) with the
reader's `version` and the sha256 of the weights it read (the run's DONE record), and used only when
all of them match; otherwise it is computed and written there (a finished run's folder is committed with
its readings). `recompute=True`, or the environment variable LOOPS_RECOMPUTE_READINGS=1 for every reading
at once, computes it afresh and raises if it differs from the kept one: the check that a kept number is
still what the stored run gives (`LOOPS_RECOMPUTE_READINGS=1 make all` re-derives every notebook from
the weights alone). "Differs" means another structure, another count, string or flag, or a number off by
more than float32 rounding (relative 1e-5, or absolute 1e-6, about 8 float32 steps at 1): a reading is
bit-identical on the CPU that kept it, but another CPU's kernels round the last float32 digits
differently, and instruments that difference nearby states (a relative step of 1e-3 between loops)
carry that absolute rounding into small numbers (kept on one machine and recomputed on another: gradient
norms agreed to 2e-7 relative, a relative step of 0.000996 to 1.3e-7 absolute). That is not a changed
reading; a changed reader or weights move numbers far more. The price: a number below 1e-6 (a relative
step between loops late in a settled run) is checked only to that absolute size, about the float32 noise
such a number carries itself; no rule reads one (the convergence cut-offs are 1e-3 and 1e-2).
"""
from __future__ import annotations

import hashlib
import json
import math
import os
from typing import Callable

from .paths import atomic_write_text

RECOMPUTE_ENV = "LOOPS_RECOMPUTE_READINGS"
RTOL, ATOL = 1e-5, 1e-6        # float32 rounding on another CPU; see the module docstring


def _weights_sha(run) -> str:
    return json.loads((run.path / "DONE").read_text())["model_sha256"]


def _canonical(value) -> str:
    return json.dumps(value, sort_keys=True)


def _agree(new, kept) -> bool:
    """The same JSON reading up to float rounding: equal keys, lengths, counts, strings and flags; floats
    (NaN and infinities included) within RTOL / ATOL."""
    if isinstance(new, dict) and isinstance(kept, dict):
        return new.keys() == kept.keys() and all(_agree(new[k], kept[k]) for k in new)
    if isinstance(new, list) and isinstance(kept, list):
        return len(new) == len(kept) and all(_agree(a, b) for a, b in zip(new, kept))
    if isinstance(new, float) and isinstance(kept, float):
        if math.isnan(new) or math.isnan(kept):
            return math.isnan(new) and math.isnan(kept)
        return math.isclose(new, kept, rel_tol=RTOL, abs_tol=ATOL)
    return type(new) is type(kept) and new == kept


def reading(run, name: str, version: int, compute: Callable[[], dict], recompute: bool = False,
            params: dict | None = None) -> dict:
    """`run`: a `store.Run` read from the store; `compute()` gives the reading of that run with the
    reader's arguments `params` (JSON-able; None: the reader takes none)."""
    if not name or not name.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"name: letters, digits, '-' and '_' only, got {name!r}")
    if params is not None:
        params = json.loads(json.dumps(params))         # as it reads back: tuples become lists
        name = f"{name}-{hashlib.sha256(_canonical(params).encode()).hexdigest()[:10]}"
    recompute = recompute or os.environ.get(RECOMPUTE_ENV) == "1"
    path = run.path / "readings" / f"{name}.json"
    sha = _weights_sha(run)
    kept = json.loads(path.read_text()) if path.exists() else None
    fresh = (kept is not None and kept.get("version") == version and kept.get("model_sha256") == sha
             and kept.get("params") == params)
    if fresh and not recompute:
        return kept["value"]
    value = json.loads(json.dumps(compute()))          # as it reads back: tuples become lists
    if fresh and not _agree(value, kept["value"]):
        raise ValueError(f"reading {name!r} of {run.path}: recomputed {value} differs from the kept {kept['value']}")
    if not fresh:
        path.parent.mkdir(exist_ok=True)
        record = {"version": version, "model_sha256": sha, "value": value}
        record = record if params is None else {**record, "params": params}
        atomic_write_text(path, json.dumps(record, indent=1) + "\n")      # keys in the reader's order: it reads back as computed
    return value
