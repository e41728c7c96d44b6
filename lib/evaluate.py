"""One way to evaluate any stored run: accuracy per test length and loop count, never training.

    python -m lib.cli eval budget_law/1a2b3c4d5e6f7a8b --n 8,16,32 --loops 8,16,64

Each length n is read on its `extrapolation` probe set (the same words for every run), whole-word and
per position, after each asked loop count (an untied model has exactly its depth: larger counts are
refused, not clamped).
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from . import store
from .config import RunConfig
from .instruments import head
from .paths import outputs_dir
from .probes import probe_seed


def find_run(ref: str) -> store.Run:
    """A finished run by 'experiment/hash' or by a hash (or a unique prefix of one, ≥ 6 hex digits)."""
    if not isinstance(ref, str) or not ref:
        raise ValueError(f"run: give 'experiment/hash' or a hash prefix of at least 6 hex digits, got {ref!r}")
    root = outputs_dir() / "runs"
    if "/" in ref:
        matches = [root / ref] if (root / ref / "DONE").exists() else []
    else:
        if len(ref) < 6 or any(ch not in "0123456789abcdef" for ch in ref):
            raise ValueError(f"run: a hash prefix is at least 6 lowercase hex digits, got {ref!r}")
        matches = [d.parent for d in root.glob(f"*/{ref}*/DONE")]
    if len(matches) != 1:
        found = ", ".join(str(m.relative_to(root)) for m in matches[:5])
        raise ValueError(f"run: {ref!r} matches {len(matches)} finished runs in {root}"
                         + (f" ({found})" if found else "") + "; allowed: exactly one")
    cfg = RunConfig.from_dict(json.loads((matches[0] / "config.json").read_text()))
    return store.load_run(cfg)


@dataclass
class Evaluation:
    n: int
    loops: tuple[int, ...]
    whole_word: tuple[float, ...]                 # per loop count
    per_position: tuple[tuple[float, ...], ...]   # per loop count, per position


def evaluate(run: store.Run, ns, loops, count: int = 512) -> list[Evaluation]:
    """Whole-word and per-position accuracy of `run` at each length in `ns` after each count in `loops`."""
    ns, loops = _positive_ints(ns, "n"), _positive_ints(loops, "loops")
    c = run.config
    if not c.tied and max(loops) > c.T_train:
        raise ValueError(f"loops: an untied model has exactly {c.T_train} blocks; allowed: 1..{c.T_train}, got {max(loops)}")
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise ValueError(f"count: must be an integer >= 1, got {count!r}")
    out = []
    for n in ns:
        acc = head.accuracy_by_loops(run.model, c.task_obj(), n, max(loops), count=count,
                                     seed=probe_seed("extrapolation", n), streaming=c.streaming)
        out.append(Evaluation(n, tuple(loops), tuple(round(float(acc.seq_acc[t - 1]), 4) for t in loops),
                              tuple(tuple(np.round(acc.position_acc[t - 1], 4).tolist()) for t in loops)))
    return out


def _positive_ints(values, name: str) -> tuple[int, ...]:
    values = tuple(values)
    if not values or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in values):
        raise ValueError(f"{name}: a non-empty list of integers >= 1, got {values!r}")
    return values
