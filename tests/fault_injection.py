"""Fault-injection run: trainings under random kills, concurrent duplicates and failing writes.

    python tests/fault_injection.py --runs 6 --seed 0

Every run is first trained undisturbed into a reference store. Then, in a second store, each run
is driven to completion through faults: SIGKILL at a random moment, two workers started at once,
or a worker whose writes (checkpoint, weights, metadata) fail at random as on a full disk. A
failed attempt is simply retried. At the end every completed run is compared with its twin,
bit for bit. `tests/test_fault_injection.py` runs this at a small size in CI.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASE = dict(experiment="faults", task="S3", n_train=4, T_train=3, n_layers=1, d_model=16, n_heads=2,
            batch=16, max_steps=300, warmup=5, checkpoint_every=15, eval_count=32, final_acc=1.0)

# A worker: optionally make writes fail with probability p (ENOSPC), then get or train the run.
WORKER = r"""
import errno, json, os, random, sys, torch
from lib import store, train
from lib.config import RunConfig
p = float(os.environ.get("FAULT_WRITE_P", "0"))
rng = random.Random(os.getpid())
def failing(fn):
    def wrapped(*a, **kw):
        if rng.random() < p:
            raise OSError(errno.ENOSPC, "No space left on device (injected)")
        return fn(*a, **kw)
    return wrapped
if p:
    store.atomic_write = failing(store.atomic_write)
    store.atomic_write_json = failing(store.atomic_write_json)
    train._save_checkpoint = failing(train._save_checkpoint)
    store.torch.save = failing(store.torch.save)
torch.set_num_threads(1)
run = store.get_or_train(RunConfig(**json.loads(sys.argv[1])), lock_timeout=120)
print(json.dumps({"trained_here": run.trained_here}))
"""


def launch(cfg: dict, outputs: Path, write_p: float = 0.0) -> subprocess.Popen:
    env = {**os.environ, "LOOPS_OUTPUTS": str(outputs), "OMP_NUM_THREADS": "1", "FAULT_WRITE_P": str(write_p)}
    return subprocess.Popen([sys.executable, "-c", WORKER, json.dumps(cfg)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def weights(outputs: Path, cfg: dict):
    os.environ["LOOPS_OUTPUTS"] = str(outputs)
    from lib import store
    from lib.config import RunConfig
    try:
        run = store.load_run(RunConfig(**cfg))
        return run.model.state_dict(), run.metrics
    finally:
        del os.environ["LOOPS_OUTPUTS"]


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-attempts", type=int, default=12)
    a = ap.parse_args(argv)
    import torch
    rng = random.Random(a.seed)
    work = Path(tempfile.mkdtemp(prefix="faults-"))
    ref, faulty = work / "reference", work / "faulty"
    configs = [{**BASE, "seed": s} for s in range(a.runs)]
    for p in [launch(c, ref) for c in configs]:
        p.communicate(timeout=600)
    faults = {"sigkill": 0, "concurrent_duplicate": 0, "write_failure_attempts": 0}
    completed, attempts = 0, 0
    for cfg in configs:
        # every run meets a kill and failing writes in random order, then two workers at once, then
        # clean attempts until it is done
        plan = rng.sample(["sigkill", "write_failure"], 2) + ["concurrent_duplicate"]
        for attempt in range(a.max_attempts):
            attempts += 1
            kind = plan[attempt] if attempt < len(plan) else "none"
            if kind == "sigkill":
                p = launch(cfg, faulty)
                time.sleep(rng.uniform(0.3, 2.5))      # interpreter start-up is ~1 s; training ~1-2 s
                if p.poll() is None:
                    p.send_signal(signal.SIGKILL)
                    faults["sigkill"] += 1
                p.communicate(timeout=60)
            elif kind == "concurrent_duplicate":
                ps = [launch(cfg, faulty), launch(cfg, faulty)]
                faults["concurrent_duplicate"] += 1
                outs = [p.communicate(timeout=600) for p in ps]
                trained = [json.loads(o[0].strip().splitlines()[-1])["trained_here"] for o in outs if o[0].strip()]
                assert trained.count(True) <= 1, "two processes trained the same run"
            elif kind == "write_failure":
                p = launch(cfg, faulty, write_p=0.3)
                faults["write_failure_attempts"] += 1
                p.communicate(timeout=600)
            else:
                p = launch(cfg, faulty)
                out, err = p.communicate(timeout=600)
                if p.returncode:
                    raise RuntimeError(f"a fault-free attempt failed: {err[-2000:]}")
            run_dirs = list(faulty.glob("runs/faults/*/DONE"))
            if any(json.loads((d.parent / "config.json").read_text())["seed"] == cfg["seed"] for d in run_dirs):
                completed += 1
                break
    mismatches = 0
    for cfg in configs:
        (wa, ma), (wb, mb) = weights(ref, cfg), weights(faulty, cfg)
        if not (all(torch.equal(wa[k], wb[k]) for k in wa) and ma == mb):
            mismatches += 1
    summary = {"runs": a.runs, "faults_injected": sum(faults.values()), **faults, "attempts": attempts,
               "runs_completed": completed, "mismatches_vs_uninterrupted_twin": mismatches}
    print(json.dumps(summary, indent=1))
    return summary


if __name__ == "__main__":
    s = main()
    sys.exit(0 if s["runs_completed"] == s["runs"] and s["mismatches_vs_uninterrupted_twin"] == 0 else 1)
