"""Search for the quick profile: train one configuration, time it, measure its frontier.

    OMP_NUM_THREADS=1 python searches/quick_profile_search.py key=value ...   (RunConfig fields)

Appends one JSON line per run to searches/results/quick_profile_search.jsonl.
"""
import json
import sys
import time
from pathlib import Path

import torch

from lib.instruments import head
from lib.config import RunConfig
from lib.train import train


def main(argv):
    kw = {}
    for a in argv:
        k, v = a.split("=", 1)
        kw[k] = v if k in ("task", "schedule", "injection", "experiment", "lengths") else (float(v) if "." in v or "e-" in v else int(v))
    torch.set_num_threads(1)
    cfg = RunConfig(experiment="search", **kw)
    t0 = time.time()
    model, metrics = train(cfg)
    wall = time.time() - t0
    r = head.tau(model, cfg.task_obj(), cfg.n_train, cfg.T_train, count=512, seed=cfg.seed)
    row = {"config": {k: v for k, v in kw.items()}, "wall_s": round(wall, 1), "steps": metrics["steps"],
           "reached": metrics["reached_length"], "polished": metrics["polished"],
           "seq_acc": round(metrics["final_eval"]["seq_acc"], 3), "token_acc": round(metrics["final_eval"]["token_acc"], 3),
           "v_tau": round(r.v_tau.v, 3), "v_frontier": round(r.v_frontier, 3), "demand": cfg.demand,
           "tau": [round(x, 2) for x in r.tau_curve.tolist()]}
    print(json.dumps(row), flush=True)
    with open(Path(__file__).parent / "results" / "quick_profile_search.jsonl", "a") as f:
        f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
