"""The run store's command line: fill the store for a section, train one run, list, verify.

    python -m lib.cli train budget_law --profile quick --shard 0/2
    python -m lib.cli train confirm:C05-wall --queue      # a pre-registered study (lib/confirmatory.py)
    python -m lib.cli run --config '{"task": "S4", ...}'
    python -m lib.cli list
    python -m lib.cli verify

It sits above the plans (`profiles.SECTIONS`: each plan lists its own runs with `configs()`) and
the store, so neither needs the other's command line.
"""
from __future__ import annotations

import argparse
import json
import time

import torch

from . import confirmatory, store
from .config import RunConfig
from .paths import outputs_dir
from .profiles import SECTIONS


def plan_configs(section: str, profile: str, seeds=None) -> list[RunConfig]:
    """Every run of a section's plan, parents before children (a warm start needs its parent); or,
    for 'confirm:<entry>', a pre-registered study's runs in its queue order (its seeds, its mode)."""
    if section.startswith("confirm:"):
        if seeds is not None:
            raise ValueError("--seeds: a pre-registered study's seeds are fixed by its entry; allowed: none")
        return list(confirmatory.study(section.partition(":")[2]))
    if section not in SECTIONS:
        raise ValueError(f"section: unknown {section!r}; allowed: {sorted(SECTIONS)}")
    plan = SECTIONS[section](profile) if seeds is None else SECTIONS[section](profile, seeds=seeds)
    return list(plan.configs())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lib.cli", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train", help="train every missing run of a section's plan (k processes can split it "
                                     "with --shard; not 'annealing', whose warm starts need their parents first)")
    t.add_argument("section")
    t.add_argument("--profile", default="quick")
    t.add_argument("--seeds", default=None, help="comma-separated seeds (default: the plan's own)")
    t.add_argument("--shard", default="0/1", help="i/k: this process trains runs i, i+k, ...")
    t.add_argument("--threads", type=int, default=1)
    t.add_argument("--compile", action="store_true", help="train with one loop compiled (CPU: ~1.3x a quick S4 step; "
                                                         "a compiled run is not a bit-identical replay of an eager one)")
    t.add_argument("--queue", action="store_true", help="take the next run no other process is training (several "
                                                       "processes share one plan this way); wait for the rest at the end")
    r = sub.add_parser("run", help="get or train one run given as a JSON RunConfig")
    r.add_argument("--config", required=True, help="JSON object of RunConfig fields")
    r.add_argument("--lock-timeout", type=float, default=3600.0)
    sub.add_parser("list", help="list finished and running runs")
    sub.add_parser("verify", help="check every finished run's weights against its recorded sha256")
    a = ap.parse_args(argv)
    if a.cmd == "run":
        torch.set_num_threads(1)
        cfg = RunConfig.from_dict(json.loads(a.config))
        t0 = time.time()
        run = store.get_or_train(cfg, lock_timeout=a.lock_timeout)
        print(json.dumps({"path": str(run.path), "trained_here": run.trained_here, "start": t0, "end": time.time()}))
        return 0
    if a.cmd == "verify":
        problems = store.verify()
        for p in problems:
            print(p)
        n = len(list((outputs_dir() / "runs").glob("*/*/DONE")))
        print(f"{n} finished runs checked, {len(problems)} problems")
        return 1 if problems else 0
    if a.cmd == "list":
        return list_runs()
    i, k = (int(x) for x in a.shard.split("/"))
    cfgs = plan_configs(a.section, a.profile, None if a.seeds is None else [int(s) for s in a.seeds.split(",")])
    torch.set_num_threads(a.threads)
    todo = cfgs[i::k]
    while todo:
        busy = []
        for cfg in todo:
            t0 = time.time()
            try:
                run = store.get_or_train(cfg, progress=True, compile=a.compile or None,
                                         lock_timeout=0 if a.queue else 3600.0)
            except TimeoutError:
                busy.append(cfg)                       # another process holds it: take the next one
                continue
            print(json.dumps({"run": str(run.path.relative_to(outputs_dir())), "task": cfg.task, "T_train": cfg.T_train,
                              "seed": cfg.seed, "steps": run.metrics["steps"], "wall_s": round(time.time() - t0, 1),
                              "seq_acc": run.metrics["final_eval"]["seq_acc"]}), flush=True)
        todo = busy
        if todo:
            time.sleep(30)
    return 0


def list_runs() -> int:
    for d in sorted(p for p in (outputs_dir() / "runs").glob("*/*") if p.is_dir()):
        name = d.relative_to(outputs_dir())
        if (d / "DONE").exists():
            m = json.loads((d / "metrics.json").read_text())
            print(f"{name}  done     steps {m['steps']:6d}  seq_acc {m['final_eval']['seq_acc']:.3f}")
        elif (d / "checkpoint.pt").exists():
            c = torch.load(d / "checkpoint.pt", weights_only=True)
            last = c["log"][-1] if c["log"] else {}
            print(f"{name}  running  step  {c['step']:6d}  length {c['curriculum']['length']}  "
                  f"loss {last.get('loss', float('nan')):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
