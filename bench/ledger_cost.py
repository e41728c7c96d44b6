"""The cost of the ledger: CPU-hours to rebuild every quick-profile run from an empty cache.

    .venv/bin/python -m bench.ledger_cost            # print the table
    .venv/bin/python -m bench.ledger_cost --update   # and write it into bench/README.md

Per section (the plans of `profiles.SECTIONS`, quick profile): runs, optimiser steps, and the
training time recorded in each run's DONE: CPU seconds (seconds x threads) where it recorded them by
resource (`train_spent`), else its wall time (`train_wall_s`, one thread per run); a population's time
is split evenly over its seeds. Runs trained before DONE recorded a time are estimated from
their steps x T_train at the median seconds per step and loop of the recorded runs of the same
model shape (layers, width, batch) in any section (marked as estimated).
Runs in the store that no quick plan lists (the recipe search's candidates) are counted apart.
"""
from __future__ import annotations

import argparse
import json
import statistics

from lib.cli import plan_configs
from lib.config import config_hash
from lib.paths import outputs_dir
from lib.profiles import SECTIONS
from lib.store import cpu_seconds



def run_record(cfg) -> dict | None:
    d = outputs_dir() / "runs" / cfg.experiment / config_hash(cfg)
    if not (d / "DONE").exists():
        return None
    done = json.loads((d / "DONE").read_text())
    return {"steps": json.loads((d / "metrics.json").read_text())["steps"], "wall_s": cpu_seconds(done),
            "shape": (cfg.n_layers, cfg.d_model, cfg.batch), "loops": cfg.T_train}


def section_costs() -> list[dict]:
    plans = {section: plan_configs(section, "quick") for section in SECTIONS}
    records = {c: run_record(c) for cfgs in plans.values() for c in cfgs}
    per_loop_step: dict = {}                     # shape -> seconds per step and loop, recorded runs
    for r in records.values():
        if r and r["wall_s"]:
            per_loop_step.setdefault(r["shape"], []).append(r["wall_s"] / (r["steps"] * r["loops"]))
    seen, rows = set(), []
    for section, cfgs in plans.items():
        cfgs = [c for c in cfgs if c not in seen]
        seen.update(cfgs)
        recs = [records[c] for c in cfgs if records[c] is not None]
        timed = [r for r in recs if r["wall_s"]]
        untimed = [r for r in recs if not r["wall_s"]]
        est = [r["steps"] * r["loops"] * statistics.median(per_loop_step[r["shape"]])
               for r in untimed if r["shape"] in per_loop_step]
        rows.append(dict(section=section, runs=len(cfgs), stored=len(recs), steps=sum(r["steps"] for r in recs),
                         recorded_h=sum(r["wall_s"] for r in timed) / 3600, estimated_h=sum(est) / 3600,
                         unknown=len(untimed) - len(est)))
    stored = {p.parent for p in (outputs_dir() / "runs").glob("*/*/DONE")}
    planned = {outputs_dir() / "runs" / c.experiment / config_hash(c) for c in seen}
    others = sorted(stored - planned)
    wall = [cpu_seconds(json.loads((d / "DONE").read_text())) or 0 for d in others]
    rows.append(dict(section="(in no quick plan)", runs=len(others), stored=len(others), steps=None,
                     recorded_h=sum(wall) / 3600, estimated_h=0.0, unknown=sum(1 for w in wall if not w)))
    return rows


def table(rows: list[dict]) -> str:
    out = ["| section | runs | stored | steps | recorded CPU-h | estimated CPU-h (no time recorded) | total |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        unknown = f" (+{r['unknown']} unknown)" if r["unknown"] else ""
        steps = "–" if r["steps"] is None else f"{r['steps']:,}"
        out.append(f"| {r['section']} | {r['runs']} | {r['stored']} | {steps} | {r['recorded_h']:.2f} | "
                   f"{r['estimated_h']:.2f}{unknown} | {r['recorded_h'] + r['estimated_h']:.2f} |")
    plan = [r for r in rows if r["steps"] is not None]
    total = sum(r["recorded_h"] + r["estimated_h"] for r in plan)
    out.append(f"\nEvery quick run from an empty cache: **{total:.1f} CPU-hours** (one thread per run; "
               f"about {total / 2:.1f} h of wall time on 2 cores with two 1-thread processes).")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--update", action="store_true", help="write the table into bench/README.md")
    a = ap.parse_args(argv)
    text = table(section_costs())
    print(text)
    if a.update:
        from bench.readme_blocks import write_block
        write_block("ledger-cost", "## The cost of the ledger (quick profile, from the DONE records)\n\n"
                    f"`.venv/bin/python -m bench.ledger_cost --update`\n\n{text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
