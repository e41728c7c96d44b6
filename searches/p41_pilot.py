"""P41-pilot (issue 41): the contests' test lengths and the annealing contract, on exploratory seeds.

    OMP_NUM_THREADS=1 python -m lib.cli train pilot:P41 --queue      # train the queue (several processes share it)
    python -m lib.cli train pilot:P41 --dry-run                     # list the queue and what is stored
    OMP_NUM_THREADS=1 python -m searches.p41_pilot --read            # read the stored runs, log them, print the picks

After --read, the picks are copied into the confirmatory plans (entries C41-contests and C41-annealing,
committed before this pilot trained): the contest pick's `pick` dict into
`lib/sections/s07_seed_contests/plan.py` CONFIRM_TARGETS, the annealing pick ("a", "b", or None written
as "none") into `lib/sections/s06_portability/plan.py` LOTTERY_PICK; tests/test_contest_confirm.py and
tests/test_portability_confirm.py hold them equal to the logs.

The rule, as committed in paper/PREREGISTRATION.md ("P41-pilot", 2026-12-04), unchanged:

  For issue 41. Pilot seeds are exploratory and used by nothing else: 40-47 (contests) and 50-57
  (annealing); not reserved, not any search's or earlier notebook's.
  - Contest lengths. For each contest contract (`profiles.contest_contracts("quick")`: S4, n_train = 8,
    the settled recipe, T = 8, 6, 4), train seeds 40-47. For every test length L in {10, 12, 14, 16, 18,
    20, 22} read whole-word accuracy with the contest's OOD loops (`ContestPlan.T_ood` rule at L) on the
    `contest_target` set, over the pilot seeds that learned (>= 0.9 in distribution). The contract's test
    length is the L whose median pilot accuracy is nearest the threshold 0.5 (ties: the shorter L). A
    contract with fewer than 4 learned pilot seeds, or whose medians all lie below 0.1 or above 0.9, is
    reported as "no split" and its contest is not run.
  - Annealing contract. From-scratch runs of the fixed-T recipe (the annealing chain's) at n_train = 8:
    (a) T = 3 with 12,000 steps, (b) T = 2 with 24,000 steps, seeds 50-57 each. The annealing contract is
    the candidate whose learned fraction lies in [1/4, 3/4], the one nearer 1/2 if both do (ties: (a)).
    If neither does, the lottery claim has no contract: the confirmatory annealing study is then written
    for transfer only and says so.
  - The pilot's log (every run, every reading, the pick) is committed beside its rule; the confirmatory
    entry C41 is written from the picks and committed before any of its runs (reserved seeds) trains.
  - Cost from the DONE records: contest runs ~ 0.1-0.7 CPU-h each (24 runs, ~ 6 CPU-h); annealing
    candidates ~ 0.2 (a) and ~ 0.4 (b) CPU-h each (~ 5 CPU-h).

How this module reads the rule where it leaves a choice (the plainest reading, fixed before any pilot run
trained):
- "learned (>= 0.9 in distribution)" and the annealing candidates' "learned fraction" both read the run's
  own final evaluation (`metrics["final_eval"]["seq_acc"]`: whole-word accuracy at n_train after T_train
  loops, the run's eval_count = 512 words) against 0.9 (`LEARNED`, the quick profile's `LAW_LEARNED_ACC`);
  the learned fraction is over all 8 seeds of a candidate.
- The OOD reading: `head.accuracy_by_loops` at length L after `cfg.loops_at(L)` loops (what
  `ContestPlan.T_ood` computes at its target), on `probe_seed("contest_target", 0)`, 512 words (the quick
  contests' eval_count), as searches/contest_pilot.py and `contest.seed_metrics` read it. Every seed is read
  and logged; the medians use the learned seeds only. A median of an even count is the mean of the two
  middle values (numpy).
- "medians all lie below 0.1 or above 0.9": every median is outside [0.1, 0.9] (each one below 0.1 or above
  0.9; a median of exactly 0.1 or 0.9 is inside). This covers all below, all above, and a jump across.
- "nearer 1/2": |fraction - 1/2|; [1/4, 3/4] is closed.
Seeds and names: contest runs are `contest_config(contract, seed)` stored under experiment
`pilot_p41_contest`; annealing runs are `sections.common.law_fixed`'s fixed-T recipe (`QUICK_BASE` at T, loss at
the last loop) under `pilot_p41_annealing`. No execution mode (pilots are exploratory); no reserved seed.
Logs: searches/results/pilot_p41_contest.jsonl and pilot_p41_annealing.jsonl (one row per run, then one
pick row), written by searches/search_log.py's `append_row`.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from searches.search_log import append_row, read_rows

RESULTS = Path(__file__).parent / "results"
CONTEST = "pilot_p41_contest"
ANNEALING = "pilot_p41_annealing"
PARTS = (CONTEST, ANNEALING)

CONTEST_SEEDS = tuple(range(40, 48))
ANNEALING_SEEDS = tuple(range(50, 58))
LENGTHS = (10, 12, 14, 16, 18, 20, 22)
THRESHOLD = 0.5           # the contests' threshold (profiles.CONTEST_THRESHOLD)
LEARNED = 0.9             # "learned": in-distribution whole-word accuracy >= this
MIN_LEARNED = 4           # fewer learned pilot seeds: "no split"
SPLIT_BAND = (0.1, 0.9)   # every median outside this band: "no split"
COUNT = 512               # OOD words a length (the quick contests' eval_count)
# the annealing candidates: name -> (T_train, max_steps), in the rule's order ((a) wins ties)
CANDIDATES = {"a": (3, 12000), "b": (2, 24000)}
FRACTION_BAND = (0.25, 0.75)


def log_path(part: str) -> Path:
    return RESULTS / f"{part}.jsonl"


# ---------------------------------------------------------------------------------------------
# the runs

def contest_runs() -> dict:
    """contract name -> its pilot runs (seeds 40-47), in `contest_contracts("quick")` order (T = 8, 6, 4)."""
    from lib import profiles
    return {name: tuple(replace(profiles.contest_config(base, s), experiment=CONTEST) for s in CONTEST_SEEDS)
            for name, base in profiles.contest_contracts("quick").items()}


def annealing_runs() -> dict:
    """candidate -> its from-scratch runs (seeds 50-57): the annealing chain's fixed-T recipe
    (`profiles.annealing("quick")`'s from-scratch runs are `law_fixed`'s) at n_train = 8 with the
    candidate's T and step budget."""
    from lib.sections.common import law_fixed
    base = law_fixed("quick", seeds=(0,))[0]
    return {k: tuple(replace(base, experiment=ANNEALING, T_train=T, max_steps=steps, seed=s) for s in ANNEALING_SEEDS)
            for k, (T, steps) in CANDIDATES.items()}


def queue() -> tuple:
    """The pilot's runs in the order `lib.cli train pilot:P41 --queue` trains them: the contests seed by
    seed (each contract has a seed early), then the annealing candidates seed by seed."""
    contests, annealing = contest_runs(), annealing_runs()
    q = [cfgs[i] for i in range(len(CONTEST_SEEDS)) for cfgs in contests.values()]
    q += [cfgs[i] for i in range(len(ANNEALING_SEEDS)) for cfgs in annealing.values()]
    return tuple(dict.fromkeys(q))


def part_runs(part: str) -> tuple:
    if part == CONTEST:
        return tuple(c for cfgs in contest_runs().values() for c in cfgs)
    if part == ANNEALING:
        return tuple(c for cfgs in annealing_runs().values() for c in cfgs)
    raise ValueError(f"part: unknown {part!r}; allowed: {PARTS}")


# ---------------------------------------------------------------------------------------------
# the pick rules, on readings

def contest_length(seeds: list[dict]) -> dict:
    """seeds: one dict per pilot seed, {"in_acc": float, "ood": {L: accuracy}}. The rule: medians over the
    learned seeds per L; "no split" with < MIN_LEARNED learned seeds or every median outside SPLIT_BAND;
    else the L whose median is nearest THRESHOLD (ties: the shorter L)."""
    learned = [s for s in seeds if s["in_acc"] >= LEARNED]
    out = {"learned": len(learned), "of": len(seeds), "medians": None, "length": None, "no_split": None}
    if len(learned) < MIN_LEARNED:
        out["no_split"] = f"{len(learned)} learned pilot seeds (< {MIN_LEARNED})"
        return out
    lengths = sorted({int(L) for s in learned for L in s["ood"]})
    medians = {L: float(np.median([s["ood"][L] for s in learned])) for L in lengths}
    out["medians"] = medians
    lo, hi = SPLIT_BAND
    if all(m < lo or m > hi for m in medians.values()):
        out["no_split"] = f"every median outside [{lo}, {hi}]"
        return out
    out["length"] = min(lengths, key=lambda L: (abs(medians[L] - THRESHOLD), L))
    return out


def annealing_contract(fractions: dict) -> str | None:
    """fractions: candidate -> learned fraction, in the rule's order. The candidate in FRACTION_BAND
    nearer 1/2 (ties: the earlier, (a)); None when neither is (no lottery contract)."""
    lo, hi = FRACTION_BAND
    inside = [k for k, f in fractions.items() if lo <= f <= hi]
    if not inside:
        return None
    return min(inside, key=lambda k: (abs(fractions[k] - 0.5), list(fractions).index(k)))


# ---------------------------------------------------------------------------------------------
# reading the stored runs

def missing(part: str) -> tuple:
    """The part's runs not finished in the store (its reading waits until there are none)."""
    from lib import store
    return tuple(c for c in part_runs(part) if not store.is_done(c))


def diverged_note(cfgs) -> str:
    """' (k of them diverged: ...)' where some runs carry the store's FAILED marker: the rule does not say how a
    diverged run reads, so the reader stops there too and says so."""
    from lib import store
    k = sum((store.run_dir(c) / "FAILED").exists() for c in cfgs)
    return f" ({k} of them diverged: FAILED marker; the rule does not say how such a run reads)" if k else ""


def _run_row(part: str, name: str, cfg, run) -> dict:
    from lib.config import run_id
    done = json.loads((run.path / "DONE").read_text())
    return {"kind": "run", "part": part, "name": name, "seed": cfg.seed, "run": run_id(cfg),
            "T_train": cfg.T_train, "max_steps": cfg.max_steps, "steps": run.metrics["steps"],
            "train_wall_s": done.get("train_wall_s"), "train_spent": done.get("train_spent"),
            "compiled": bool(run.metrics.get("compiled", False)),
            "in_acc": float(run.metrics["final_eval"]["seq_acc"])}


def measure_contest(name: str, cfg) -> dict:
    from lib import store
    from lib.instruments import head
    from lib.probes import probe_seed
    run = store.load_run(cfg)
    row = _run_row(CONTEST, name, cfg, run)
    row["loops"] = {str(L): cfg.loops_at(L) for L in LENGTHS}
    row["ood"] = {str(L): float(head.accuracy_by_loops(run.model, cfg.task_obj(), L, cfg.loops_at(L), count=COUNT,
                                                       seed=probe_seed("contest_target", 0)).seq_acc[-1])
                  for L in LENGTHS}
    return row


def measure_annealing(name: str, cfg) -> dict:
    from lib import store
    return _run_row(ANNEALING, name, cfg, store.load_run(cfg))


def decide(part: str, rows: list[dict]) -> dict:
    """The pick of `part` from its logged run rows (every run of the part must be there)."""
    runs = [r for r in rows if r.get("kind") == "run"]
    if part == CONTEST:
        out = {}
        for name in contest_runs():
            mine = [{"in_acc": r["in_acc"], "ood": {int(L): a for L, a in r["ood"].items()}}
                    for r in runs if r["name"] == name]
            out[name] = contest_length(mine)
        return {"kind": "pick", "part": part, "contracts": out,
                "pick": {name: v["length"] for name, v in out.items()}}
    fractions = {k: float(np.mean([r["in_acc"] >= LEARNED for r in runs if r["name"] == k])) for k in CANDIDATES}
    pick = annealing_contract(fractions)
    return {"kind": "pick", "part": part, "learned_fraction": fractions,
            "contracts": {k: {"T_train": T, "max_steps": s} for k, (T, s) in CANDIDATES.items()},
            "pick": pick, "note": None if pick is not None else
            "no lottery contract: the confirmatory annealing study is written for transfer only"}


def read(part: str) -> dict:
    """Read every run of `part` not yet in its log (appending one row each), then the pick (appended once).
    Refuses (FileNotFoundError, naming how many) while any run of the part is missing from the store."""
    lacking = missing(part)
    if lacking:
        raise FileNotFoundError(f"{part}: {len(lacking)} of {len(part_runs(part))} runs are not in the store"
                                f"{diverged_note(lacking)}; "
                                f"train them first (python -m lib.cli train pilot:P41 --queue)")
    log = log_path(part)
    log.parent.mkdir(parents=True, exist_ok=True)
    groups = contest_runs() if part == CONTEST else annealing_runs()
    measure = measure_contest if part == CONTEST else measure_annealing
    for name, cfgs in groups.items():
        for cfg in cfgs:
            if (name, cfg.seed) not in {(r["name"], r["seed"]) for r in read_rows(log) if r.get("kind") == "run"}:
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
