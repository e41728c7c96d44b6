"""The paper profile, planned before it runs: every section's configs built, each trained for a
few steps on the CPU, and the whole profile's training FLOPs and estimated H200 hours.

    .venv/bin/python -m bench.paper_plan                 # all sections (make paper-plan)
    .venv/bin/python -m bench.paper_plan --no-train      # FLOPs only
    .venv/bin/python -m bench.paper_plan --no-train --update   # and write the table into bench/README.md

FLOPs per optimiser step: forward + backward of one word at the full training length n_train
with the most loops a batch can get (T_train x T_jitter), counted by torch's FlopCounterMode
(matrix products), plus attention's score and value products (4 n^2 d per layer and loop forward,
x3 with the backward; the CPU attention kernel is not counted by FlopCounterMode), times the batch.
Steps: `max_steps` (runs that learn stop earlier: an upper bound; so is training every step at
full length, which the length curriculum does not). Hours: FLOPs / throughput, the throughput
measured by bench/gpu_check.py where bench/results holds an H200 record, else the stated
assumption `--tflops` (effective bf16 TFLOP/s of these small models).
"""
from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import replace

import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

from lib.config import RunConfig
from lib.model import LoopedTransformer
from lib.paths import PROJECT_ROOT
from lib.profiles import SECTIONS
from lib.train import train

ASSUMED_TFLOPS = 100.0


def loops_max(cfg: RunConfig) -> int:
    T = cfg.n_train + 2 if cfg.streaming else cfg.T_train
    return math.ceil(cfg.T_jitter * T - 1e-9)


def flops_per_step(cfg: RunConfig) -> float:
    """Training FLOPs of one optimiser step at full length and the most loops (see module docstring)."""
    model = LoopedTransformer(cfg.model_config())
    tokens, labels = cfg.task_obj().sample(1, cfg.n_train, torch.Generator().manual_seed(0))
    T = loops_max(cfg)
    counter = FlopCounterMode(display=False)
    with counter:
        logits = model(tokens, T, streaming=cfg.streaming)
        F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=-100).backward()
    N = tokens.shape[1]
    layer_applications = cfg.n_layers * T
    attention = 3 * 4 * N * N * cfg.d_model * layer_applications
    return (counter.get_total_flops() + attention) * cfg.batch


def dry_train(cfg: RunConfig, steps: int = 2) -> float:
    """Train `steps` optimiser steps at batch 2 on the CPU (the config's whole code path); seconds."""
    tiny = replace(cfg, batch=2, max_steps=steps, warmup=1, polish_steps=1, eval_count=8, checkpoint_every=10 ** 6)
    init = LoopedTransformer(cfg.model_config()).state_dict() if cfg.init_from else None
    t0 = time.time()
    train(tiny, init_state=init)
    return time.time() - t0


def measured_tflops() -> tuple[float, str]:
    for path in sorted((PROJECT_ROOT / "bench" / "results").glob("gpu*.json")):
        rec = json.loads(path.read_text())
        rates = [t["ours_tflops"] for t in rec.get("throughput", []) if t.get("ours_tflops")]
        if rates and "H200" in json.dumps(rec.get("device", "")):
            return float(sorted(rates)[len(rates) // 2]), f"measured ({path.name}, median over sizes)"
    return ASSUMED_TFLOPS, f"assumed {ASSUMED_TFLOPS:g} TFLOP/s effective (no H200 record in bench/results)"


def plan(sections=None, train_steps: int = 2, tflops: float | None = None) -> list[dict]:
    rate, source = (tflops, "given on the command line") if tflops else measured_tflops()
    rows, seen = [], set()
    for section in sections or SECTIONS:
        # a run several sections read (the budget law's runs are 01's population) is counted once,
        # in the first section that lists it
        cfgs = [c for c in SECTIONS[section]("paper").configs() if c not in seen]
        seen.update(cfgs)
        if not cfgs:
            rows.append(dict(section=section, runs=0, pflop=0.0, h200_hours=0.0, dry_s=0.0,
                             largest="(every run counted in an earlier section)", rate=rate, source=source))
            continue
        flops = [flops_per_step(c) * c.max_steps for c in cfgs]
        secs = [dry_train(c, train_steps) for c in cfgs] if train_steps else []
        big = max(range(len(cfgs)), key=lambda i: flops[i])
        rows.append(dict(section=section, runs=len(cfgs), pflop=sum(flops) / 1e15,
                         h200_hours=sum(flops) / (rate * 1e12) / 3600, dry_s=sum(secs),
                         largest=f"{cfgs[big].task} n={cfgs[big].n_train} T={cfgs[big].T_train} "
                                 f"{cfgs[big].n_layers}x{cfgs[big].d_model}{'' if cfgs[big].tied else ' untied'}",
                         rate=rate, source=source))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sections", nargs="*", default=None, help=f"default: all of {sorted(SECTIONS)}")
    ap.add_argument("--no-train", action="store_true", help="count FLOPs only, no dry training steps")
    ap.add_argument("--tflops", type=float, default=None, help="effective H200 TFLOP/s to assume")
    ap.add_argument("--update", action="store_true", help="write the table into bench/README.md")
    a = ap.parse_args(argv)
    unknown = set(a.sections or ()) - set(SECTIONS)
    if unknown:
        raise SystemExit(f"--sections: unknown {sorted(unknown)}; allowed: {sorted(SECTIONS)}")
    torch.set_num_threads(1)
    rows = plan(a.sections, 0 if a.no_train else 2, a.tflops)
    lines = [f"paper profile; throughput: {rows[0]['source']}",
             f"{'section':20s} {'runs':>4s} {'PFLOP':>9s} {'H200 h':>7s} {'dry 2 steps s':>13s}  largest run"]
    lines += [f"{r['section']:20s} {r['runs']:4d} {r['pflop']:9.1f} {r['h200_hours']:7.2f} {r['dry_s']:13.1f}  "
              f"{r['largest']}" for r in rows]
    lines.append(f"{'total':20s} {sum(r['runs'] for r in rows):4d} {sum(r['pflop'] for r in rows):9.1f} "
                 f"{sum(r['h200_hours'] for r in rows):7.2f}   (upper bound: every step at full length, max_steps)")
    print("\n".join(lines))
    if a.update:
        write_readme(lines, a)
    return 0


def write_readme(lines: list[str], a) -> None:
    """The plan's table in its block of bench/README.md (bench/run.py keeps the block)."""
    from bench.readme_blocks import write_block
    cmd = "python -m bench.paper_plan" + (" --no-train" if a.no_train else "") + " --update"
    write_block("paper-plan", f"## The paper profile on one H200, planned (`make paper-plan`)\n\n`.venv/bin/{cmd}` "
                "(CI runs the plan with 2 training steps per config: tests/test_paper_plan.py)\n\n```\n"
                + "\n".join(lines) + "\n```")


if __name__ == "__main__":
    raise SystemExit(main())
