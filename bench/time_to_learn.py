"""CPU-seconds to learn a quick S4 run, by batch size and learning rate (issue 19, item 1).

    OMP_NUM_THREADS=1 python -m bench.time_to_learn --train --shard 0/2 --compile   # the candidates' runs
    OMP_NUM_THREADS=1 python -m bench.time_to_learn --cost                          # per-step CPU ms (~5 min)
    python -m bench.time_to_learn --report [--update]         # the table, from both (--update: into bench/README.md)

`bench.cpu_step_speed` measured what one training step can gain (compiled: 1.3x; the GEMM floor 2.1x).
The rest of "2x the CPU-seconds-to-learn" can only come from needing fewer FLOPs per learned model.
This bench measures that for the one lever the issue names, the batch / learning-rate pair, on the run
the science trains most: S4, n_train 8, T_train 8 under the settled recipe (`profiles.SETTLED`: the
budget law's demand 1, the tail population, the T = 8 contest).

Decided before any candidate was trained:
- candidates: batch 64 at lr 1e-3 (half the batch, same rate) and batch 256 at lr 2e-3 (twice the batch,
  the rate scaled with it); seeds 0 and 1 each, trained compiled (`store.get_or_train(compile=True)`);
- the recipe's own figure (batch 128, lr 1e-3) is read from every stored run of that config (the
  budget-law seeds 0-2 and the contest seeds trained so far): nothing is retrained for it;
- CPU-seconds to learn a run = sum over curriculum lengths L of (steps the run spent at L) x (CPU ms of
  one compiled training step at L for its batch size). Steps per length come from the run's promotion
  record (deterministic under the seed, whatever the load); CPU ms per step from `--cost`, which times
  the three batch sizes interleaved step by step on the same machine (process CPU time, median of
  rounds, every loop count of the jitter range [T_min, ceil(2 T_min)] weighted equally: the expected step).
  Left out, for every candidate alike: the final evaluation (512 inputs at the end of a run) and drawing
  the batches (`draw_batch`, whose cost grows with the batch; under 2 % of a step here);
- a candidate *learns* when every seed holds whole-word accuracy >= 0.9 in distribution at T_train;
  its speed-up is the recipe's mean CPU-seconds over its mean. Reported beside it, not judged: whole-word
  accuracy at 2 n_train with the loops the run gets there (a faster recipe that extrapolates worse is
  another recipe, and the science's runs keep theirs: nothing here changes a profile).
- a seed may be stopped by hand (`--stop`) once the CPU-seconds it has spent lift its candidate's mean
  above the recipe's mean, so the candidate can no longer learn in fewer CPU-seconds whatever the seed
  does next; it is reported as stopped (not learned by then), its spent CPU-seconds a lower bound, and
  its candidate gets no speed-up (when this was added, and why: paper/DECISIONS.md).
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

import torch

from searches.search_log import parse_share

OUT = Path(__file__).parent / "results" / "time_to_learn.json"
CANDIDATES = {"batch 64, lr 1e-3": {"batch": 64}, "batch 256, lr 2e-3": {"batch": 256, "lr": 2e-3}}
SEEDS = (0, 1)
BATCHES = (64, 128, 256)
RECIPE = "batch 128, lr 1e-3 (the recipe)"


def recipe_config(seed: int = 0):
    from lib import profiles
    return profiles.contest_config(profiles.contest_contracts("quick")["S4 n8 T8"], seed)


def candidate_configs() -> list:
    return [replace(recipe_config(s), **changes) for changes in CANDIDATES.values() for s in SEEDS]


def steps_per_length(metrics: dict, cfg) -> dict[int, int]:
    """Steps a run spent at each curriculum length, from its promotion steps (length start + i * step is
    left at promotions[i]) and its final step count (the last length runs to the end, polishing included)."""
    edges = [0] + list(metrics["promotions"]) + [metrics["steps"]]
    lengths = [min(cfg.curriculum_start + i * cfg.curriculum_step, cfg.n_train) for i in range(len(edges) - 1)]
    if any(b < a for a, b in zip(edges, edges[1:])):
        raise ValueError(f"promotions: must be increasing step counts within the run's {metrics['steps']} steps "
                         f"(seed {cfg.seed}, batch {cfg.batch}), got {list(metrics['promotions'])}")
    spent: dict[int, int] = {}
    for L, a, b in zip(lengths, edges, edges[1:]):
        spent[L] = spent.get(L, 0) + b - a
    return spent


def cpu_seconds(spent: dict[int, int], ms_at: dict[str, float]) -> float:
    """CPU-seconds of a run: steps spent at each length x one step's CPU ms at that length."""
    return round(sum(steps * ms_at[str(L)] for L, steps in spent.items()) / 1e3, 1)


def step_cost(rounds: int = 5) -> dict:
    """CPU ms of one compiled training step (train_step with model.step compiled, dynamic shapes: what
    train(compile=True) runs on the CPU), per batch size and curriculum length: at each length the same
    words' loop counts T_min..T_max each once (the jitter draws them uniformly, so their mean is the
    expected step), batch sizes interleaved step by step. Dynamo is made to fail rather than fall back to
    eager if it ran out of recompiles, and the number of graphs is recorded."""
    import torch._dynamo.config as dynamo_config
    from lib.model import LoopedTransformer
    from lib.step import draw_batch, train_step
    from lib.train import RunProgress, _param_groups
    from bench.cpu_step_speed import graphs
    dynamo_config.fail_on_recompile_limit_hit = True
    base = recipe_config()
    lengths = range(base.curriculum_start, base.n_train + 1)
    states, batches = {}, {}
    for B in BATCHES:
        cfg = replace(base, batch=B)
        torch.manual_seed(0)
        model = LoopedTransformer(cfg.model_config())
        model.step = torch.compile(model.step, dynamic=True)
        opt = torch.optim.AdamW(_param_groups(model, cfg.weight_decay), lr=cfg.lr, betas=(0.9, 0.98))
        for L in lengths:
            run = RunProgress(cfg)
            run.curriculum.length, run.step = L, cfg.warmup
            b = draw_batch(cfg, run, cfg.task_obj(), torch.Generator().manual_seed(L))
            T_max = math.ceil(cfg.T_jitter * b.T_min - 1e-9)
            batches[B, L] = [b._replace(T=T) for T in range(b.T_min, T_max + 1)]
            states[B, L] = (model, opt, run)
            for x in batches[B, L]:                      # compile and warm up
                train_step(model, opt, [run], [x])
    n_graphs = graphs()
    cpu = {key: [[] for _ in range(rounds)] for key in states}
    t0 = time.time()
    for r in range(rounds):
        for L in lengths:
            for i in range(len(batches[BATCHES[0], L])):
                for B in BATCHES[r % 3:] + BATCHES[:r % 3]:
                    model, opt, run = states[B, L]
                    c0 = time.process_time()
                    train_step(model, opt, [run], [batches[B, L][i]])
                    cpu[B, L][r].append((time.process_time() - c0) * 1e3)
        print(f"  round {r + 1}/{rounds}: {time.time() - t0:.0f} s", flush=True)
    ms = {B: {L: statistics.median(statistics.mean(x) for x in cpu[B, L]) for L in lengths} for B in BATCHES}
    return {"ms_per_step": {str(B): {str(L): round(v, 2) for L, v in d.items()} for B, d in ms.items()},
            "loops_per_length": {str(L): [x.T for x in batches[BATCHES[0], L]] for L in lengths},
            "graphs": n_graphs, "new_graphs_while_timing": graphs() - n_graphs, "rounds": rounds,
            "measured": time.strftime("%Y-%m-%d %H:%M"), "torch": torch.__version__}


def read_run(cfg, ms: dict) -> dict:
    from lib import store
    from lib.instruments import head
    from lib.probes import probe_seed
    run = store.load_run(cfg)
    m, n2 = run.metrics, 2 * cfg.n_train
    ood = head.accuracy_by_loops(run.model, cfg.task_obj(), n2, cfg.loops_at(n2), count=512,
                                 seed=probe_seed("contest_target", 0)).seq_acc[-1]
    return {"seed": cfg.seed, "steps": m["steps"], "compiled": bool(m.get("compiled", False)),
            "cpu_s_to_learn": cpu_seconds(steps_per_length(m, cfg), ms[str(cfg.batch)]),
            "in_distribution": round(float(m["final_eval"]["seq_acc"]), 4), "ood_2n": round(float(ood), 4)}


def stop(seed: int, candidate: str, why: str) -> int:
    """Record a candidate seed whose training was stopped by hand (its process killed first), from its
    last checkpoint: step, promotions and the reason. `report` reads it as not learned."""
    from lib import store
    if candidate not in CANDIDATES:
        raise SystemExit(f"--candidate: unknown {candidate!r}; allowed: {list(CANDIDATES)}")
    if seed not in SEEDS:
        raise SystemExit(f"--stop: seed must be one of {SEEDS}, got {seed}")
    cfg = replace(recipe_config(seed), **CANDIDATES[candidate])
    ckpt = store.run_dir(cfg) / "checkpoint.pt"
    if store.is_done(cfg) or not ckpt.exists():
        raise SystemExit(f"--stop: {candidate} seed {seed} is {'finished' if store.is_done(cfg) else 'not started'}")
    state = torch.load(ckpt, weights_only=True)
    res = json.loads(OUT.read_text()) if OUT.exists() else {}
    res.setdefault("stopped", {})[f"{candidate} | {seed}"] = {
        "step": state["step"], "promotions": state["curriculum"]["promotions"], "why": why,
        "log_tail": state["log"][-4:]}
    OUT.write_text(json.dumps(res, indent=1) + "\n")
    print(f"recorded: {candidate} seed {seed} stopped at step {state['step']}")
    return 0


def read_stopped(cfg, record: dict, ms: dict) -> dict:
    """A stopped seed: the CPU-seconds it spent (a lower bound on what learning would have cost)."""
    spent = steps_per_length({"promotions": record["promotions"], "steps": record["step"]}, cfg)
    return {"seed": cfg.seed, "steps": record["step"], "compiled": True, "stopped": record["why"],
            "cpu_s_to_learn": cpu_seconds(spent, ms[str(cfg.batch)]),
            "in_distribution": None, "ood_2n": None}


def report(update: bool = False) -> int:
    from lib import store
    if not OUT.exists() or "cost" not in json.loads(OUT.read_text()):
        raise SystemExit(f"--report: run --cost first ({OUT} has no per-step cost)")
    res = json.loads(OUT.read_text())
    ms = res["cost"]["ms_per_step"]
    from lib.profiles import CONTEST_SEEDS
    # every stored seed of the recipe's config: the budget law's 0-2 and the contest seeds trained so far
    recipe = [cfg for cfg in map(recipe_config, (0, 1, 2) + CONTEST_SEEDS) if store.is_done(cfg)]
    groups = {RECIPE: recipe}
    for name, changes in CANDIDATES.items():
        groups[name] = [replace(recipe_config(s), **changes) for s in SEEDS]
    stopped = res.get("stopped", {})
    missing = [f"{name} seed {c.seed}" for name, cs in groups.items() for c in cs
               if not store.is_done(c) and f"{name} | {c.seed}" not in stopped]
    if missing:
        raise SystemExit("--report: runs not trained yet: " + ", ".join(missing) + " (run --train)")
    rows = {name: [read_stopped(c, stopped[f"{name} | {c.seed}"], ms) if f"{name} | {c.seed}" in stopped
                   else read_run(c, ms) for c in cs] for name, cs in groups.items()}
    eager = [f"{name} seed {r['seed']}" for name, rs in rows.items() if name != RECIPE for r in rs if not r["compiled"]]
    if eager:     # compiled runs are other samples of a recipe: the candidates are compared as trained compiled
        raise SystemExit("--report: candidates trained eager (train them with --compile): " + ", ".join(eager))
    base = statistics.mean(r["cpu_s_to_learn"] for r in rows[RECIPE])
    table = {}
    for name, rs in rows.items():
        mean = statistics.mean(r["cpu_s_to_learn"] for r in rs)
        paired = [r for r in rows[RECIPE] if r["seed"] in SEEDS]
        learns = all(r["in_distribution"] is not None and r["in_distribution"] >= 0.9 for r in rs)
        table[name] = {"runs": rs, "learns": learns, "mean_cpu_s_to_learn": round(mean, 1),
                       "speedup_vs_recipe": round(base / mean, 2) if learns else None,
                       "speedup_vs_recipe_same_seeds": (round(statistics.mean(r["cpu_s_to_learn"] for r in paired)
                                                              / mean, 2) if learns and name != RECIPE else None),
                       "mean_ood_2n": (round(statistics.mean(r["ood_2n"] for r in rs), 3)
                                       if all(r["ood_2n"] is not None for r in rs) else None)}
    res["table"] = table
    OUT.write_text(json.dumps(res, indent=1) + "\n")
    lines = ["| batch / learning rate | seeds | learns | steps (mean) | CPU-s to learn (mean, range) | speed-up "
             "(over all the recipe's seeds / over its seeds 0-1) | whole-word at 2 n_train (mean) |",
             "|---|---|---|---|---|---|---|"]
    x = lambda v: "-" if v is None else f"{v:.2f}x"     # noqa: E731
    for name, t in table.items():
        cpu = [r["cpu_s_to_learn"] for r in t["runs"]]
        halted = [r for r in t["runs"] if "stopped" in r]
        learns = f"stopped (seed {', '.join(str(r['seed']) for r in halted)})" if halted else str(t["learns"])
        ood = "-" if t["mean_ood_2n"] is None else f"{t['mean_ood_2n']:.3f}"
        lines.append(f"| {name} | {', '.join(str(r['seed']) for r in t['runs'])} | {learns} | "
                     f"{statistics.mean(r['steps'] for r in t['runs']):,.0f} | {'>= ' if halted else ''}"
                     f"{t['mean_cpu_s_to_learn']:,.0f} "
                     f"({min(cpu):,.0f}-{max(cpu):,.0f}) | {x(t['speedup_vs_recipe'])} / {x(t['speedup_vs_recipe_same_seeds'])} | "
                     f"{ood} |")
    print("\n".join(lines))
    if update:
        from bench.readme_blocks import write_block
        c = res["cost"]
        cost = ", ".join(f"batch {B}: " + " / ".join(f"{v:.0f}" for v in d.values()) for B, d in c["ms_per_step"].items())
        write_block("time-to-learn", "## CPU-seconds to learn a quick S4 run, by batch and learning rate (issue 19, item 1)"
                    "\n\n`OMP_NUM_THREADS=1 .venv/bin/python -m bench.time_to_learn --train --compile; ... --cost; "
                    "... --report --update` (the rule and the accounting: the module's docstring). S4, n_train 8, "
                    "T_train 8, settled recipe; CPU-seconds = steps at each curriculum length x one compiled step's "
                    f"CPU ms there, timed interleaved ({c['measured']}; ms per step at lengths 2-8: {cost}).\n\n"
                    + "\n".join(lines))
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train", action="store_true", help="train the candidates' runs (through the store)")
    ap.add_argument("--shard", default="0/1", help="with --train: i/k, this process trains runs i, i+k, ...")
    ap.add_argument("--compile", action="store_true", help="with --train: the compiled CPU step")
    ap.add_argument("--cost", action="store_true", help="time one compiled step per batch size and length")
    ap.add_argument("--report", action="store_true", help="the table, from the stored runs and --cost")
    ap.add_argument("--update", action="store_true", help="with --report: write the table into bench/README.md")
    ap.add_argument("--stop", type=int, metavar="SEED", help="record a seed stopped by hand (kill it first), and exit")
    ap.add_argument("--candidate", help="with --stop: the candidate's name, as in CANDIDATES")
    ap.add_argument("--why", default="", help="with --stop: the reason, in words")
    args = ap.parse_args(argv)
    if args.stop is not None:
        return stop(args.stop, args.candidate, args.why)
    if not (args.train or args.cost or args.report):
        ap.error("one of --train, --cost, --report")
    if args.update and not args.report:
        ap.error("--update: only with --report")
    if (args.compile or args.shard != "0/1") and not args.train:
        ap.error("--compile and --shard: only with --train")
    i, k = parse_share(args.shard, "--shard")
    torch.set_num_threads(1)
    if args.train:
        from lib import store
        for cfg in candidate_configs()[i::k]:
            store.get_or_train(cfg, compile=args.compile)
    if args.cost:
        res = json.loads(OUT.read_text()) if OUT.exists() else {}
        res["cost"] = step_cost()
        OUT.write_text(json.dumps(res, indent=1) + "\n")
        print(json.dumps(res["cost"]["ms_per_step"]))
    if args.report:
        return report(args.update)
    return 0


if __name__ == "__main__":
    sys.exit(main())
