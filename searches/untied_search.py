"""Recipe search for an untied control that learns S4 (issue: "Selection results at a fair budget"),
by measurement.

    OMP_NUM_THREADS=1 python -m searches.untied_search --worker 0/2 [--compile]   # two 1-thread workers
    python -m searches.untied_search --table
    python -m searches.untied_search --decide
    OMP_NUM_THREADS=1 python -m searches.untied_search --held-out [--compile]   # the pick's held-out seed 2

The control (`profiles.matched_untied` of the quick budget-law run n = 8, T = 8): the same depth, 16
layer applications (2 layers x 8 loops), each now its own layer, at the width whose parameter count is
closest to the tied model's (d = 24: 118k parameters against the tied model's 111k). Under the
quick recipe (lr 1e-3, warmup 100, 12,000 steps) it stalled at length 5 of 8. Each candidate changes
the recipe only, except "d32", which is labelled as a width-unmatched variant (207k parameters, 1.9x the tied
model's). Seeds 0 and 1 per candidate, through the store under notebook 04's experiment
(`outputs/runs/architecture_prior/`, so the picked candidate's runs are the notebook's untied control,
not trained twice);
read: whole-word accuracy at n_train with T_train loops and the length the curriculum reached. One JSON
line per (recipe, seed) to searches/results/untied_search.jsonl.

The rule the choice is made by (fixed before any candidate trained; each amendment was made before the
runs it touches trained, and when and on what knowledge: paper/DECISIONS.md):
1. a candidate *learns* when both seeds reach whole-word accuracy >= 0.9 at n_train (= 8);
2. the first learner in RECIPES order becomes the untied control of notebook 04 and its A5 run. The
   first round's candidates come cheapest and closest to the quick recipe first; "outer_norm" (the
   tied model's norm on the state after every block) and "depth8" (half the depth at matched
   parameters: labelled depth-unmatched) after them; then the second round's one candidate,
   depth_init_lr3e-4_60k (the budget raised again: depth_init_lr3e-4_30k's seed 0 learned at step
   28,469 of 30,000, its seed 1 reached length 6), parameter- and depth-matched; "d32"
   (width-unmatched) last, used only when no other candidate learns, and then says so;
3. if none learns, the untied claims stay *not measured* with this log as the reason;
4. the pick's seed 2, held out from the choice (`--held-out`), is trained afterwards and logged with
   `held_out: true`; its learned or not is reported beside the two seeds the pick was chosen on.
The queue trains no run that cannot change the verdict: a candidate one of whose seeds misses rule 1's
bar is decided then, and its other seed is not trained (depth_init_lr3e-4_60k's seed 1, the seed that
failed at 30,000 steps, trains first: `SEED_ORDER`); once rule 2 has a pick, no later candidate trains.
"""
from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

from searches.search_log import failed, first_passing, search_main

LOG = Path(__file__).parent / "results" / "untied_search.jsonl"
SEEDS = (0, 1)
LEARNED = 0.9             # rule 1's bar: whole-word accuracy at n_train with T_train loops
RECIPES = {
    "lr3e-4_warm1000": {"lr": 3e-4, "warmup": 1000},
    "depth_init": {"residual_init": "depth"},
    "depth_init_lr3e-4_warm1000": {"residual_init": "depth", "lr": 3e-4, "warmup": 1000},
    "depth_init_lr3e-4_30k": {"residual_init": "depth", "lr": 3e-4, "warmup": 1000, "max_steps": 30000},
    "outer_norm": {"outer_norm": True, "residual_init": "depth", "lr": 3e-4, "warmup": 1000},
    # half the depth (4 blocks of 2 layers) at the width whose parameter count is closest to the tied
    # model's (105k against 111k; `profiles.matched_untied` at T_train 4): depth-unmatched, labelled
    "depth8": {"T_train": 4, "d_model": 32, "residual_init": "depth", "lr": 3e-4, "warmup": 1000},
    "depth_init_lr3e-4_60k": {"residual_init": "depth", "lr": 3e-4, "warmup": 1000, "max_steps": 60000},
    "d32": {"d_model": 32, "residual_init": "depth", "lr": 3e-4, "warmup": 1000},       # width-unmatched
}
SEED_ORDER = {"depth_init_lr3e-4_60k": (1, 0)}     # the docstring's second round: the seed that failed first
QUEUE = [(r, s) for r in RECIPES for s in SEED_ORDER.get(r, SEEDS)]
HELD_OUT_SEED = 2


def control(seed: int = 0):
    """The quick profile's untied control for the budget-law run n = 8, T = 8 (notebook 04's)."""
    from lib import profiles
    from lib.sections.common import QUICK_BASE
    tied = replace(QUICK_BASE, T_train=QUICK_BASE.n_train, seed=seed)
    return profiles.matched_untied(tied)


def config(recipe: str, seed: int):
    return replace(control(seed), experiment="architecture_prior", **RECIPES[recipe])


def measure_one(recipe: str, seed: int, compile: bool = False) -> dict:
    from lib import store
    from lib.config import run_id
    cfg = config(recipe, seed)
    run = store.get_or_train(cfg, compile=compile)
    m = run.metrics
    return {"recipe": recipe, "seed": seed, "run": run_id(cfg), "changes": RECIPES[recipe],
            "d_model": cfg.d_model, "n_params": m["n_params"],
            "train_wall_s": json.loads((run.path / "DONE").read_text()).get("train_wall_s"),
            "compiled": bool(m.get("compiled", False)), "steps": m["steps"], "reached": m["reached_length"],
            "in_acc_T": round(m["final_eval"]["seq_acc"], 4)}


def decide(rows: list[dict]) -> dict:
    """The rule of the module docstring: recipe -> learns (None: seeds missing); the pick (None: no
    learner yet, or an earlier candidate still unmeasured)."""
    learns = {}
    for recipe in RECIPES:
        mine = [r for r in rows if r["recipe"] == recipe and not r.get("held_out")]   # rule 4's seed decides nothing
        learns[recipe] = (False if failed(mine, recipe, "in_acc_T", LEARNED)
                          else None if len(mine) < len(SEEDS) else True)
    return {"learns": learns, "pick": first_passing(learns)}


def print_table(rows: list[dict]) -> None:
    print(f"{'recipe':28} {'s':>2} {'d':>3} {'params':>7} {'steps':>6} {'reached':>7} {'in@T':>5} {'train s':>8}")
    for r in rows:
        print(f"{r['recipe']:28} {r['seed']:2} {r['d_model']:3} {r['n_params']:7} {r['steps']:6} {r['reached']:7} "
              f"{r['in_acc_T']:5.2f} {r['train_wall_s'] or 0:8.0f}")


def held_out(compile: bool) -> int:
    """Rule 4: train and log the pick's held-out seed (refused, before any work, without a pick)."""
    from searches.search_log import append_row, read_rows
    rows = read_rows(LOG)
    pick = decide(rows)["pick"]
    if pick is None:
        raise SystemExit("--held-out: no candidate picked yet (python -m searches.untied_search --decide)")
    if any(r["recipe"] == pick and r["seed"] == HELD_OUT_SEED for r in rows):
        return 0
    append_row(LOG, {**measure_one(pick, HELD_OUT_SEED, compile), "held_out": True})
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--held-out" in argv:
        import torch
        torch.set_num_threads(1)
        return held_out("--compile" in argv)
    return search_main(argv, __doc__.splitlines()[0], QUEUE, measure_one, LOG, print_table, decide, decided)


def decided(rows: list[dict], key: tuple) -> bool:
    """(recipe, seed) needs no training: another seed of the recipe failed, or rule 2 has picked already."""
    chosen = [r for r in rows if not r.get("held_out")]
    return failed(chosen, key[0], "in_acc_T", LEARNED) or decide(chosen)["pick"] is not None


if __name__ == "__main__":
    sys.exit(main())
