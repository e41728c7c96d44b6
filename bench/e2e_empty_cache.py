"""End to end from an EMPTY run cache (performance issue, item 1): what a fresh clone costs when no
run is committed. Clones this repository at HEAD into a temporary folder, deletes outputs/runs/,
runs the README's main command (`make all`: virtualenv set-up, every quick notebook, every quick
run trained on the CPU), and records the wall time, the time per notebook, and whether every run it
trained has exactly the weights of the committed run with the same hash.

    .venv/bin/python bench/e2e_empty_cache.py                    # about an hour on a 2-core machine
    .venv/bin/python bench/e2e_empty_cache.py --report DIR LOG   # only read a finished clone DIR and its log
    .venv/bin/python bench/e2e_empty_cache.py --cached           # the committed runs kept: the suite from cache

With --cached the clone keeps outputs/runs/: the figure is the README's `make all` as a new user meets it
(set-up and every notebook, nothing trained), written to bench/results/e2e-cached.json; run it on an
idle machine (anything else running slows it).

Writes bench/results/e2e-empty-cache.json; `bench/run.py` renders it into bench/README.md.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"


def run_clone(workdir: Path, log: Path, cached: bool = False) -> None:
    clone = workdir / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    if not cached:
        subprocess.run(["rm", "-rf", str(clone / "outputs" / "runs")], check=True)
    threads = os.environ.get("OMP_NUM_THREADS", "1")
    t = time.time()
    with open(log, "w") as f:
        f.write(f"[e2e] OMP_NUM_THREADS={threads}\n")
        f.flush()
        rc = subprocess.run(["make", "all"], cwd=clone, stdout=f, stderr=subprocess.STDOUT,
                            env={**os.environ, "OMP_NUM_THREADS": threads}).returncode
    with open(log, "a") as f:
        f.write(f"rc={rc} wall={time.time() - t:.0f} at={time.strftime('%Y-%m-%d %H:%M')}\n")


def same_weights(a: Path, b: Path) -> bool:
    sa, sb = torch.load(a, weights_only=True), torch.load(b, weights_only=True)
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def report(clone: Path, log: Path, cached: bool = False) -> dict:
    text = log.read_text()
    end = re.findall(r"rc=(\d+) wall=(\d+)", text)
    if not end:
        raise SystemExit(f"--report: {log} has no final 'rc=… wall=…' line; is the run finished?")
    rc, wall = int(end[-1][0]), int(end[-1][1])
    # when the run ended, as its log says (a --report of an old log: when it was read)
    date = (re.findall(r"rc=\d+ wall=\d+ at=(\S+ \S+)", text) or [time.strftime("%Y-%m-%d %H:%M")])[-1]
    notebooks = {m[0]: float(m[1]) for m in re.findall(r"\[run_all\] (\S+) done in ([\d.]+) s", text)}
    if cached:       # runs the suite trained: stored runs the clone did not have from git
        new = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "outputs/runs"], cwd=clone,
                             capture_output=True, text=True, check=True).stdout.split()
        side = re.findall(r"\[run_all\] \d+ notebooks, (\d+) at a time", text)
        threads = re.findall(r"\[e2e\] OMP_NUM_THREADS=(\S+)", text)
        # tracked files the suite rewrote with other contents: measured numbers that moved (none expected)
        changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "outputs", "paper"], cwd=clone,
                                 capture_output=True, text=True, check=True).stdout.split("\n")
        return {"command": "make all (fresh clone, committed runs)", "rc": rc, "wall_s": wall,
                # what run_clone gave make and lib.run_all's notebooks at a time, as the log says (None
                # where a log predates the lines that say it)
                "threads": threads[0] if threads else None, "jobs": int(side[-1]) if side else None,
                "tracked_outputs_changed": [x[3:] for x in changed if x.strip()], "notebooks_s": notebooks,
                "runs_trained": sum(1 for x in new if x.endswith("/DONE")), "date": date}
    runs = []
    for done in sorted((clone / "outputs" / "runs").glob("*/*/DONE")):
        rel = done.parent.relative_to(clone / "outputs" / "runs")
        committed = ROOT / "outputs" / "runs" / rel / "model.pt"
        info = json.loads(done.read_text())
        runs.append({"run": str(rel), "train_wall_s": info.get("train_wall_s"),
                     "identical_to_committed": same_weights(done.parent / "model.pt", committed)
                     if committed.exists() else None})
    return {"command": "make all (fresh clone, outputs/runs deleted)", "rc": rc, "wall_s": wall,
            "threads": os.environ.get("OMP_NUM_THREADS", "1"), "notebooks_s": notebooks, "runs": runs,
            "date": date}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--report", nargs=2, metavar=("CLONE_DIR", "LOG"))
    ap.add_argument("--note", default="", help="free text stored with the figures (e.g. what else ran)")
    ap.add_argument("--cached", action="store_true", help="keep the committed runs (the suite from cache)")
    a = ap.parse_args(argv)
    if a.report:
        clone, log = Path(a.report[0]), Path(a.report[1])
    else:
        work = Path(tempfile.mkdtemp(prefix="e2e-empty-"))
        log = work / "make_all.log"
        run_clone(work, log, a.cached)
        clone = work / "clone"
    out = report(clone, log, a.cached)
    out["note"] = a.note
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / ("e2e-cached.json" if a.cached else "e2e-empty-cache.json")).write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from run import write_readme
    write_readme()


if __name__ == "__main__":
    sys.exit(main())
