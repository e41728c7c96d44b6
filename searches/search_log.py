"""The shared plumbing of the recipe searches (searches/*.py): a queue of keys split among
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


def append_row(log: Path, row: dict) -> None:
    """Print one measured row and append it to `log` as a JSON line."""
    print(json.dumps(row), flush=True)
    with open(log, "a") as f:
        f.write(json.dumps(row) + "\n")


def parse_share(text: str, option: str) -> tuple[int, int]:
    """"i/k" (this process takes every k-th entry from i) -> (i, k); a clear error naming `option`."""
    try:
        i, k = (int(x) for x in text.split("/"))
    except ValueError:
        raise SystemExit(f"{option}: expected i/k with 0 <= i < k, got {text!r}") from None
    if not 0 <= i < k:
        raise SystemExit(f"{option}: expected i/k with 0 <= i < k, got {text!r}")
    return i, k


def failed(rows: list[dict], recipe: str, metric: str, bar: float) -> bool:
    """Whether some logged seed of `recipe` has row[metric] below `bar`: under a rule that asks every
    seed to reach the bar, the recipe is then decided (it does not learn) whatever its other seeds do."""
    return any(r["recipe"] == recipe and not r[metric] >= bar for r in rows)     # NaN misses the bar


def first_passing(verdicts: dict) -> str | None:
    """The first candidate, in `verdicts`' order, that passes (True), provided every candidate before it
    has been measured (False); None while an earlier one is unmeasured (None) or when none passes."""
    for name, ok in verdicts.items():
        if ok is None or ok:              # the order decides: wait for an earlier candidate, or pick this one
            return name if ok else None
    return None


def run_queue(queue: list[tuple], measure: Callable[..., dict], log: Path, worker: str,
              key_of: Callable[[dict], tuple],
              decided: Callable[[list[dict], tuple], bool] = lambda rows, key: False) -> int:
    """worker "i/k": measure every k-th queue entry from i whose key is not logged yet (key_of(row)
    names a logged row's key) and whose outcome is not already decided by the logged rows
    (decided(rows, key): e.g. another seed of the same recipe failed), appending each row to `log`
    as it is measured. Rows are re-read before each entry, so workers see each other's results."""
    i, k = parse_share(worker, "--worker")
    torch.set_num_threads(1)
    for j, key in enumerate(queue):
        rows = read_rows(log)
        if j % k != i or key in {key_of(r) for r in rows} or decided(rows, key):
            continue
        append_row(log, measure(*key))
    return 0


def search_main(argv, description: str, queue: list[tuple], measure: Callable[..., dict], log: Path,
                table: Callable[[list[dict]], None], decide: Callable[[list[dict]], dict],
                decided: Callable[[list[dict], tuple], bool] = lambda rows, key: False) -> int:
    """The command line every (recipe, seed) search shares: --worker i/k [--compile] measures its share
    of the queue (measure(recipe, seed, compile)), skipping entries `decided` by the log; --table
    prints the log; --decide applies the rule."""
    import argparse
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--worker", default="0/1", help="i/k: this process takes every k-th queue entry from i")
    ap.add_argument("--table", action="store_true", help="print the log as a table and exit")
    ap.add_argument("--decide", action="store_true", help="apply the search's rule to the log and exit")
    ap.add_argument("--compile", action="store_true", help="train with the compiled CPU step")
    args = ap.parse_args(argv)
    if args.table:
        table(read_rows(log))
        return 0
    if args.decide:
        print(json.dumps(decide(read_rows(log)), indent=1))
        return 0
    return run_queue(queue, lambda recipe, seed: measure(recipe, seed, args.compile), log, args.worker,
                     lambda row: (row["recipe"], row["seed"]), decided)
