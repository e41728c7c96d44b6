"""P43-pilots (issue 43): easy-to-hard learning rate and sudoku recall tuning, on exploratory seeds.

    OMP_NUM_THREADS=1 python -m lib.cli train pilot:P43 --queue      # train the queue (several processes share it)
    python -m lib.cli train pilot:P43 --dry-run                     # list the queue and what is stored
    OMP_NUM_THREADS=1 python -m searches.p43_pilots --read           # read the stored runs, log them, print the picks

After --read, the picks are copied into the confirmatory plans (entries C43-easy-to-hard, C43-recall and
C43-sudoku, committed before this pilot trained): the prefix-sums pick into
`lib/sections/s08_easy_to_hard/plan.py` E2H_CONFIRM_PICK, the sudoku pick's {recall: candidate} into
`lib/sections/s09_stability/plan.py` SUDOKU_CONFIRM_PICKS; tests/test_e2h_confirm.py holds them equal to
the logs.

The rule, as committed in paper/PREREGISTRATION.md ("P43-pilots", 2026-12-04), unchanged:

  For issue 43. Exploratory seeds used by nothing else: 60-63 (prefix sums) and 70-72 (sudoku).
  - Prefix sums (08). Candidates, each the current pick (`profiles.PREFIX_SUMS_PICK`: settled loops,
    local attention of width 5; n_train = 16, T_train = 16, 1 layer, d = 32) with only the learning rate
    and budget changed: lr 1e-3 at 8,000 steps (today's), lr 3e-4 at 16,000, lr 1e-4 at 32,000 (Paper B's
    public code trains at 1e-4). Seeds 60-63 each. Reading: whole-word accuracy at 4 n_train = 64 after
    exactly `loops_at(64)` loops (64; no search over loops), on the `extrapolation` set. Pick: the
    candidate with the highest median over its 4 seeds; ties or a margin under 0.05 go to the cheaper
    candidate. The best loop of a scan to 2 loops_at(64) is logged as an upper bound only.
  - Sudoku (09). External and internal recall get the same tuning: for each recall, candidates
    {lr 1e-3, lr 3e-4} x {4,000, 8,000 steps} on the pick's recipe (`profiles.SUDOKU_PICK`: grid cell
    positions), seeds 70-72. Reading: whole-board accuracy on the in-distribution (34 givens) set after
    T_train loops. Pick per recall: the highest median over its seeds (ties: cheaper). The confirmatory
    entry then compares the two picks on reserved seeds.
  - Cost: prefix-sums candidates ~ 0.1 / 0.2 / 0.4 CPU-h a seed (~ 3 CPU-h); sudoku ~ 0.35-0.7 CPU-h a
    run (24 runs, ~ 12 CPU-h: the costliest pilot; its 8,000-step arm runs only if a 4,000-step arm reads
    any whole board).

How this module reads the rule where it leaves a choice (the plainest reading, fixed before any pilot run
trained):
- "cheaper" is the smaller step budget (the rule's costs scale with it: 0.1 / 0.2 / 0.4 CPU-h a seed);
  two sudoku candidates of one budget differ only in learning rate and cost the same, and a tie between
  them goes to the earlier in the rule's order (lr 1e-3, then 3e-4).
- Prefix sums, "ties or a margin under 0.05 go to the cheaper candidate": the pick is the cheapest candidate
  whose median is within 0.05 of the highest median (highest - median < 0.05; the highest itself qualifies),
  margins measured against the highest, not chained between neighbours.
- The prefix-sums reading: `head.accuracy_by_loops` at n = 64 on `probe_seed("extrapolation", 64)`, 512
  words (the quick plan's eval_count), one scan of loops 1..2 loops_at(64) = 128; the reading is the scan's
  loop loops_at(64) = 64, and the scan's best loop (value, loop) is logged as an upper bound only.
- The sudoku reading is the run's final evaluation (`metrics["final_eval"]["seq_acc"]`: whole boards of
  unseen 34-given boards after T_train loops, eval_count = 256 boards), as searches/sudoku_pilot.py read it.
- The 8,000-step gate (from the rule's cost line): the sudoku pilot's 8,000-step arm, for both recalls (the
  same tuning for both), is trained and read only if some 4,000-step run of either recall and either learning
  rate reads a whole board (board accuracy > 0). While no 4,000-step run reads one and some are missing, the
  gate is undecided and the 8,000-step runs are not queued; once all 12 read none, the 8,000-step arm is not
  run and each recall's pick is among its 4,000-step candidates. `lib.cli train pilot:P43` decides the gate
  from the store when it starts, so it is run again once the 4,000-step runs are stored.
- The sudoku recipe is `profiles.stability("quick")`'s sudoku run (`sudoku_base("quick")` with SUDOKU_PICK's
  changes) at each recall (`RECALLS`: external = "add", internal = "internal"), lr and max_steps changed.
Names: experiments `pilot_p43_prefix_sums` and `pilot_p43_sudoku`; no execution mode; no reserved seed.
Logs: searches/results/pilot_p43_prefix_sums.jsonl and pilot_p43_sudoku.jsonl (one row per run, then one
pick row), written by searches/search_log.py's `append_row`.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from searches.p41_pilot import diverged_note
from searches.search_log import append_row, read_rows

RESULTS = Path(__file__).parent / "results"
PREFIX_SUMS = "pilot_p43_prefix_sums"
SUDOKU = "pilot_p43_sudoku"
PARTS = (PREFIX_SUMS, SUDOKU)

PREFIX_SUMS_SEEDS = tuple(range(60, 64))
SUDOKU_SEEDS = tuple(range(70, 73))
# name -> (lr, max_steps), cheapest first (the rule's order)
PREFIX_SUMS_CANDIDATES = {"lr1e-3_8k": (1e-3, 8000), "lr3e-4_16k": (3e-4, 16000), "lr1e-4_32k": (1e-4, 32000)}
SUDOKU_CANDIDATES = {"lr1e-3_4k": (1e-3, 4000), "lr3e-4_4k": (3e-4, 4000),
                     "lr1e-3_8k": (1e-3, 8000), "lr3e-4_8k": (3e-4, 8000)}
SUDOKU_RECALLS = ("external", "internal")
GATE_STEPS = 4000         # the arm whose whole boards open the 8,000-step arm
TEST_N = 64               # 4 n_train
MARGIN = 0.05
COUNT = 512               # prefix-sums words at n = 64 (the quick plan's eval_count)


def log_path(part: str) -> Path:
    return RESULTS / f"{part}.jsonl"


# ---------------------------------------------------------------------------------------------
# the runs

def prefix_sums_runs() -> dict:
    """candidate -> its runs (seeds 60-63): 08's quick run (`PREFIX_SUMS_PICK` on the search's base) with
    only lr and max_steps changed."""
    from lib.sections.common import prefix_sums_runs as runs
    base = runs("quick", (0,))[0]
    return {k: tuple(replace(base, experiment=PREFIX_SUMS, lr=lr, max_steps=steps, seed=s) for s in PREFIX_SUMS_SEEDS)
            for k, (lr, steps) in PREFIX_SUMS_CANDIDATES.items()}


def sudoku_runs() -> dict:
    """(recall, candidate) -> its runs (seeds 70-72): 09's quick sudoku (SUDOKU_PICK) at the recall, lr and
    max_steps changed."""
    from lib import profiles
    board = profiles.stability("quick").sudoku
    return {(recall, k): tuple(replace(board[recall][0], experiment=SUDOKU, lr=lr, max_steps=steps, seed=s)
                               for s in SUDOKU_SEEDS)
            for k, (lr, steps) in SUDOKU_CANDIDATES.items() for recall in SUDOKU_RECALLS}


def _gate_runs() -> tuple:
    return tuple(c for (recall, k), cfgs in sudoku_runs().items() if SUDOKU_CANDIDATES[k][1] == GATE_STEPS for c in cfgs)


def sudoku_gate(readings: list[float | None]) -> bool | None:
    """readings: the 4,000-step runs' board accuracies (None: not stored). True once one reads a whole
    board; False when all are stored and none does; None while undecided."""
    if any(r is not None and r > 0 for r in readings):
        return True
    return None if any(r is None for r in readings) else False


def stored_gate() -> bool | None:
    """The gate from the store's 4,000-step sudoku runs (their final evaluation, read from metrics.json)."""
    from lib import store
    readings = [json.loads((store.run_dir(c) / "metrics.json").read_text())["final_eval"]["seq_acc"]
                if store.is_done(c) else None for c in _gate_runs()]
    return sudoku_gate(readings)


def queue(gate: bool | None = None) -> tuple:
    """The pilots' runs in the order `lib.cli train pilot:P43 --queue` trains them: prefix sums seed by
    seed (cheapest candidate first), then the sudoku 4,000-step runs seed by seed, then, when the gate is
    open (`gate` True; None: read it from the store), the 8,000-step runs."""
    gate = stored_gate() if gate is None else gate
    ps, su = prefix_sums_runs(), sudoku_runs()
    q = [cfgs[i] for i in range(len(PREFIX_SUMS_SEEDS)) for cfgs in ps.values()]
    arms = [key for key in su if SUDOKU_CANDIDATES[key[1]][1] == GATE_STEPS]
    if gate:
        arms += [key for key in su if SUDOKU_CANDIDATES[key[1]][1] != GATE_STEPS]
    short = [key for key in arms if SUDOKU_CANDIDATES[key[1]][1] == GATE_STEPS]
    long_ = [key for key in arms if key not in short]
    for keys in (short, long_):
        q += [su[key][i] for i in range(len(SUDOKU_SEEDS)) for key in keys]
    return tuple(dict.fromkeys(q))


def part_runs(part: str, gate: bool | None = None) -> tuple:
    """The runs a part's reading needs: every prefix-sums run; the sudoku 4,000-step runs, and the
    8,000-step ones unless the gate is closed (False)."""
    if part == PREFIX_SUMS:
        return tuple(c for cfgs in prefix_sums_runs().values() for c in cfgs)
    if part == SUDOKU:
        gate = stored_gate() if gate is None else gate
        return tuple(c for (recall, k), cfgs in sudoku_runs().items()
                     if gate is not False or SUDOKU_CANDIDATES[k][1] == GATE_STEPS for c in cfgs)
    raise ValueError(f"part: unknown {part!r}; allowed: {PARTS}")


# ---------------------------------------------------------------------------------------------
# the pick rules, on readings

def prefix_sums_pick(medians: dict) -> str:
    """medians: candidate -> median reading, candidates cheapest first. The cheapest candidate within
    MARGIN of the highest median (a tie is within it)."""
    top = max(medians.values())
    return next(k for k, m in medians.items() if top - m < MARGIN)


def sudoku_pick(medians: dict) -> str:
    """medians: candidate -> median reading, in the rule's order. The highest median; ties go to the
    cheaper (fewer steps), then to the earlier in the order."""
    order = list(medians)
    top = max(medians.values())
    tied = [k for k in order if medians[k] == top]
    return min(tied, key=lambda k: (SUDOKU_CANDIDATES[k][1], order.index(k)))


# ---------------------------------------------------------------------------------------------
# reading the stored runs

def missing(part: str) -> tuple:
    from lib import store
    return tuple(c for c in part_runs(part) if not store.is_done(c))


def _run_row(part: str, name: str, cfg, run) -> dict:
    from lib.config import run_id
    done = json.loads((run.path / "DONE").read_text())
    return {"kind": "run", "part": part, "name": name, "seed": cfg.seed, "run": run_id(cfg), "lr": cfg.lr,
            "max_steps": cfg.max_steps, "steps": run.metrics["steps"], "train_wall_s": done.get("train_wall_s"),
            "train_spent": done.get("train_spent"), "compiled": bool(run.metrics.get("compiled", False)),
            "in_acc": float(run.metrics["final_eval"]["seq_acc"])}


def measure_prefix_sums(name: str, cfg) -> dict:
    from lib import store
    from lib.instruments import head
    from lib.instruments.extrapolation import best_loop
    from lib.probes import probe_seed
    run = store.load_run(cfg)
    T = cfg.loops_at(TEST_N)
    acc = head.accuracy_by_loops(run.model, cfg.task_obj(), TEST_N, 2 * T, count=COUNT,
                                 seed=probe_seed("extrapolation", TEST_N)).seq_acc
    best, at = best_loop(acc)
    row = _run_row(PREFIX_SUMS, name, cfg, run)
    row.update(n=TEST_N, loops=T, acc=float(acc[T - 1]), scan_loops=2 * T, best_upper_bound=[best, at])
    return row


def measure_sudoku(name: str, cfg) -> dict:
    from lib import store
    run = store.load_run(cfg)
    row = _run_row(SUDOKU, name, cfg, run)
    row.update(recall=name.split("/")[0], board_acc=row["in_acc"],
               cell_acc=float(run.metrics["final_eval"]["token_acc"]))     # over all 81 cells, givens included
    return row


def decide(part: str, rows: list[dict]) -> dict:
    """The pick of `part` from its logged run rows (every run the part needs must be there)."""
    runs = [r for r in rows if r.get("kind") == "run"]
    if part == PREFIX_SUMS:
        medians = {k: float(np.median([r["acc"] for r in runs if r["name"] == k])) for k in PREFIX_SUMS_CANDIDATES}
        return {"kind": "pick", "part": part, "medians": medians, "margin": MARGIN, "pick": prefix_sums_pick(medians),
                "candidates": {k: {"lr": lr, "max_steps": s} for k, (lr, s) in PREFIX_SUMS_CANDIDATES.items()}}
    gate = sudoku_gate([r["board_acc"] for r in runs if SUDOKU_CANDIDATES[r["name"].split("/")[1]][1] == GATE_STEPS])
    out = {}
    for recall in SUDOKU_RECALLS:
        medians = {k: float(np.median([r["board_acc"] for r in runs if r["name"] == f"{recall}/{k}"]))
                   for k, (_, steps) in SUDOKU_CANDIDATES.items() if gate or steps == GATE_STEPS}
        out[recall] = {"medians": medians, "pick": sudoku_pick(medians)}
    return {"kind": "pick", "part": part, "gate_8000": gate, "recalls": out,
            "pick": {recall: v["pick"] for recall, v in out.items()},
            "candidates": {k: {"lr": lr, "max_steps": s} for k, (lr, s) in SUDOKU_CANDIDATES.items()}}


def read(part: str) -> dict:
    """Read every run of `part` not yet in its log (appending one row each), then the pick (appended once).
    Refuses (FileNotFoundError, naming how many) while any run the part needs is missing from the store,
    or while the sudoku gate is undecided."""
    runs = part_runs(part)
    lacking = missing(part)
    if lacking:
        raise FileNotFoundError(f"{part}: {len(lacking)} of {len(runs)} runs are not in the store"
                                f"{diverged_note(lacking)}; "
                                f"train them first (python -m lib.cli train pilot:P43 --queue)")
    log = log_path(part)
    log.parent.mkdir(parents=True, exist_ok=True)
    if part == PREFIX_SUMS:
        groups, measure = prefix_sums_runs(), measure_prefix_sums
    else:
        groups, measure = {f"{r}/{k}": cfgs for (r, k), cfgs in sudoku_runs().items()}, measure_sudoku
    needed = set(runs)
    for name, cfgs in groups.items():
        for cfg in cfgs:
            if cfg in needed and (name, cfg.seed) not in {(r["name"], r["seed"]) for r in read_rows(log)
                                                            if r.get("kind") == "run"}:
                append_row(log, measure(name, cfg))
    rows = read_rows(log)
    pick = decide(part, rows)
    logged = [r for r in rows if r.get("kind") == "pick"]
    if not logged:
        append_row(log, pick)
    elif json.loads(json.dumps(pick)) != logged[-1]:
        raise ValueError(f"{part}: the logged pick differs from the pick read now from the same log ({log})")
    return pick


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--read", action="store_true", help="read the stored runs, log them, print the picks")
    args = ap.parse_args(argv)
    if not args.read:
        from lib import store
        for part in PARTS:
            runs = part_runs(part)
            print(f"{part}: {sum(store.is_done(c) for c in runs)} of {len(runs)} runs stored")
        print(f"sudoku 8,000-step arm: {({True: 'open', False: 'closed'}).get(stored_gate(), 'undecided')}")
        return 0
    import torch
    torch.set_num_threads(1)
    status = 0
    for part in PARTS:
        try:
            pick = read(part)
        except FileNotFoundError as err:
            print(f"refused: {err}", file=sys.stderr)
            status = 1
            continue
        print(json.dumps(pick, indent=1))
    return status


if __name__ == "__main__":
    sys.exit(main())
