"""The shared plumbing of the recipe searches (bench/*_search.py): a queue of keys split among
1-thread workers, each key measured once and logged as one JSON line, so a stopped search resumes
where it stopped and its log is the record of every configuration tried."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import torch


def read_rows(log: Path) -> list[dict]:
    """Every logged row, in the order written ([] before the first)."""
    return [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []


def run_queue(queue: list[tuple], measure: Callable[..., dict], log: Path, worker: str,
              key_of: Callable[[dict], tuple]) -> int:
    """worker "i/k": measure every k-th queue entry from i whose key is not logged yet (key_of(row)
    names a logged row's key), appending each row to `log` as it is measured."""
    try:
        i, k = (int(x) for x in worker.split("/"))
        assert 0 <= i < k
    except (ValueError, AssertionError):
        raise SystemExit(f"--worker: expected i/k with 0 <= i < k, got {worker!r}") from None
    torch.set_num_threads(1)
    for j, key in enumerate(queue):
        if j % k != i or key in {key_of(r) for r in read_rows(log)}:
            continue
        row = measure(*key)
        print(json.dumps(row), flush=True)
        with open(log, "a") as f:
            f.write(json.dumps(row) + "\n")
    return 0
