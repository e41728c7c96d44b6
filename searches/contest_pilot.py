"""Pilot for the seed contests (notebook 07, issue "The three 16-seed contests on group word problems").

    OMP_NUM_THREADS=1 python -m searches.contest_pilot [--compile]    # trains missing pilot runs, then reads them
    OMP_NUM_THREADS=1 python -m searches.contest_pilot --contests --shard 0/2 --compile   # then the contests' runs

The contests are 16-seed populations of the settled recipe (`profiles.SETTLED`) on S4 prefix products,
trained as independent runs; a
contest is informative only where its seeds split on out-of-distribution accuracy. This pilot reads
ONLY that accuracy (whole-word, at length n with the loops the run gets there, `cfg.loops_at(n)`: the
project's one rule) on a few pilot seeds per contract, at every n from n_train + 1 to 3 n_train. No
head or tail metric is computed here.

The rule, fixed before the pilot was read: a contest's target length is 2 n_train when the pilot's
seeds split there (at least one seed >= THRESHOLD and one below); otherwise the longest length in
(n_train, 3 n_train] at which they split; a contract whose pilot seeds split nowhere is dropped.
The pilot seeds are never contest seeds (`profiles.CONTEST_SEEDS` starts above them).

Pilot runs: the recipe search's runs of the settled recipe (seeds 0-2 at T = 8 and T = 4; their
speeds and these accuracies were already in the search log) and seeds 0-2 at T = 6, trained here.
Writes searches/results/contest_pilot.json. With --contests it reads that file instead and trains the
runs of every kept contract at the contest seeds (`profiles.CONTEST_SEEDS`), sharded like `lib.cli
train`, reading nothing from them: notebook 07 measures them.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

from searches.search_log import parse_share
from lib.profiles import CONTEST_PILOT_SEEDS as PILOT_SEEDS
from lib.profiles import CONTEST_THRESHOLD as THRESHOLD      # a seed "generalizes" at accuracy >= THRESHOLD

OUT = Path(__file__).parent / "results" / "contest_pilot.json"


def target_length(acc: dict, n_train: int, threshold: float = THRESHOLD) -> int | None:
    """acc: n -> the pilot seeds' accuracies at n. The rule of the module docstring."""
    split = [n for n, a in acc.items() if n_train < n <= 3 * n_train
             and any(x >= threshold for x in a) and any(x < threshold for x in a)]
    if 2 * n_train in split:
        return 2 * n_train
    return max(split) if split else None


def main(argv=None) -> int:
    from lib import profiles, store
    from lib.instruments import head
    from lib.probes import probe_seed
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--compile", action="store_true", help="train missing pilot runs with the compiled CPU step")
    ap.add_argument("--count", type=int, default=512, help="inputs per length")
    ap.add_argument("--contests", action="store_true", help="train the kept contracts' contest seeds and exit")
    ap.add_argument("--shard", default="0/1", help="with --contests: i/k, this process trains runs i, i+k, ...")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    if args.contests:
        return train_contests(args.shard, args.compile)
    out = {}
    for name, base in profiles.contest_contracts("quick").items():
        runs = [store.get_or_train(profiles.contest_config(base, s), compile=args.compile) for s in PILOT_SEEDS]
        c = base
        acc = {n: [float(head.accuracy_by_loops(r.model, c.task_obj(), n, c.loops_at(n), count=args.count,
                                                seed=probe_seed("contest_target", 0)).seq_acc[-1]) for r in runs]
               for n in range(c.n_train + 1, 3 * c.n_train + 1)}
        out[name] = dict(contract=c.contract, pilot_seeds=list(PILOT_SEEDS),
                         accuracy={n: [round(x, 4) for x in a] for n, a in acc.items()},    # rounded for the file only
                         in_distribution=[round(float(r.metrics["final_eval"]["seq_acc"]), 4) for r in runs],
                         target_n=target_length(acc, c.n_train))
        print(f"{name}: target n = {out[name]['target_n']}")
        for n, a in acc.items():
            print(f"  n={n:3d} T={c.loops_at(n):3d} " + " ".join(f"{x:6.3f}" for x in a))
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    return 0


def train_contests(shard: str, compile: bool) -> int:
    from lib import profiles, store
    if not OUT.exists():
        raise SystemExit(f"--contests: run the pilot first ({OUT} is missing)")
    kept = [name for name, r in json.loads(OUT.read_text()).items() if r["target_n"] is not None]
    contracts = profiles.contest_contracts("quick")
    cfgs = [profiles.contest_config(contracts[name], s) for name in kept for s in profiles.CONTEST_SEEDS]
    i, k = parse_share(shard, "--shard")
    for cfg in cfgs[i::k]:
        store.get_or_train(cfg, compile=compile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
