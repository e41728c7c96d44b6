"""The run store's command line: fill the store for a section, train or load one run, evaluate a stored
run, list, verify.

    python -m lib.cli train budget_law --profile quick --shard 0/2
    python -m lib.cli train confirm:C05-wall --queue      # a pre-registered study (lib/confirmatory.py)
    python -m lib.cli train pilot:P41 --queue             # a pilot under its committed rule (searches/p41_pilot.py)
    python -m lib.cli train pilot:P43 --dry-run           # list a plan's runs and which are stored; train nothing
    python -m lib.cli run --config '{"task": "S4", ...}' [--train]
    python -m lib.cli eval budget_law/1a2b3c4d5e6f7a8b --n 8,16,32 --loops 8,16,64
    python -m lib.cli list [--task S4] [--seed 0] [--experiment budget_law] [--mode cpu-eager-fp32] [--status done]
    python -m lib.cli verify

Every option is checked before any work; a bad one exits 2 naming it and what is allowed. It sits above
the plans (`profiles.SECTIONS`, `confirmatory.STUDIES`, the pilots' queues in `PILOTS`) and the store, so
neither needs the other's command line.
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
import time

import torch

from . import confirmatory, store
from .config import MODES, RunConfig, run_id
from .paths import outputs_dir
from .profiles import PROFILES, SECTIONS
from .step import Diverged

# Pilots whose rules are committed in paper/PREREGISTRATION.md (exploratory seeds, no execution mode): the
# entry's id -> the module whose `queue()` lists its runs in queue order.
PILOTS = {"P41": "searches.p41_pilot", "P43": "searches.p43_pilots"}


def plan_configs(section: str, profile: str, seeds=None) -> list[RunConfig]:
    """Every run of a section's plan, parents before children (a warm start needs its parent); or,
    for 'confirm:<entry>', a pre-registered study's runs in its queue order (its seeds, its mode); for
    'pilot:<entry>', a pilot's runs in its queue order (its seeds, fixed by its rule)."""
    if section.startswith("pilot:"):
        if seeds is not None:
            raise ValueError("--seeds: a pilot's seeds are fixed by its rule; allowed: none")
        entry = section.partition(":")[2]
        if entry not in PILOTS:
            raise ValueError(f"pilot: unknown pilot {entry!r}; allowed: {sorted(PILOTS)}")
        return list(importlib.import_module(PILOTS[entry]).queue())
    if section.startswith("confirm:"):
        if seeds is not None:
            raise ValueError("--seeds: a pre-registered study's seeds are fixed by its entry; allowed: none")
        return list(confirmatory.study(section.partition(":")[2]))
    if section not in SECTIONS:
        raise ValueError(f"section: unknown {section!r}; allowed: {sorted(SECTIONS)} or "
                         f"{['confirm:' + e for e in confirmatory.STUDIES]} or {['pilot:' + e for e in PILOTS]}")
    plan = SECTIONS[section](profile) if seeds is None else SECTIONS[section](profile, seeds=seeds)
    return list(plan.configs())


def _int_list(name: str, lo: int):
    def parse(text: str) -> list[int]:
        try:
            values = [int(x) for x in text.split(",")]
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name}: comma-separated integers >= {lo}, got {text!r}") from None
        if not values or min(values) < lo:
            raise argparse.ArgumentTypeError(f"{name}: comma-separated integers >= {lo}, got {text!r}")
        return values
    return parse


def _shard(text: str) -> tuple[int, int]:
    try:
        i, k = (int(x) for x in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--shard: i/k with integers 0 <= i < k, got {text!r}") from None
    if not 0 <= i < k:
        raise argparse.ArgumentTypeError(f"--shard: i/k with integers 0 <= i < k, got {text!r}")
    return i, k


def _positive(name: str, kind=int):
    def parse(text: str):
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name}: a number > 0, got {text!r}") from None
        if not v > 0:
            raise argparse.ArgumentTypeError(f"{name}: a number > 0, got {text!r}")
        return v
    return parse


def _config(text: str) -> RunConfig:
    try:
        fields = json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"--config: not JSON ({err.msg} at line {err.lineno}, column {err.colno})") from None
    if not isinstance(fields, dict):
        raise argparse.ArgumentTypeError(f"--config: a JSON object of RunConfig fields, got {type(fields).__name__}")
    try:
        return RunConfig.from_dict(fields)
    except (TypeError, ValueError) as err:
        raise argparse.ArgumentTypeError(f"--config: {err}") from None


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m lib.cli", description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog="\n".join(__doc__.splitlines()[2:]))
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train", help="train every missing run of a section's plan, a pre-registered study or a pilot")
    t.add_argument("section", help=f"one of {sorted(SECTIONS)}, confirm:<entry> for {sorted(confirmatory.STUDIES)}, "
                                   f"or pilot:<entry> for {sorted(PILOTS)}")
    t.add_argument("--profile", default="quick", choices=PROFILES)
    t.add_argument("--seeds", type=_int_list("--seeds", 0), default=None, help="comma-separated seeds (default: the plan's)")
    t.add_argument("--shard", type=_shard, default=(0, 1), help="i/k: this process trains runs i, i+k, ...")
    t.add_argument("--threads", type=_positive("--threads"), default=1)
    t.add_argument("--compile", action="store_true", help="train with one loop compiled (a compiled run is not a "
                                                         "bit-identical replay of an eager one; refused for runs with a mode)")
    t.add_argument("--queue", action="store_true", help="take the next run no other process is training (several "
                                                       "processes share one plan this way); exit once every run left "
                                                       "is held by another process (a warm start waits for its parent)")
    t.add_argument("--dry-run", action="store_true", help="list this process's runs in order, each stored or not, "
                                                         "and exit without training")
    r = sub.add_parser("run", help="load one run given as a JSON RunConfig; train it only with --train")
    r.add_argument("--config", type=_config, required=True, help="JSON object of RunConfig fields")
    r.add_argument("--train", action="store_true", help="train it if it is not stored (else: exit 1)")
    r.add_argument("--lock-timeout", type=_positive("--lock-timeout", float), default=3600.0)
    e = sub.add_parser("eval", help="accuracy of a stored run per length and loop count (never trains)")
    e.add_argument("run", help="experiment/hash, or a hash prefix of >= 6 hex digits")
    e.add_argument("--n", type=_int_list("--n", 1), required=True, help="comma-separated test lengths")
    e.add_argument("--loops", type=_int_list("--loops", 1), required=True, help="comma-separated loop counts")
    e.add_argument("--count", type=_positive("--count"), default=512, help="test words a length")
    e.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ls = sub.add_parser("list", help="finished and running runs, with task, contract, seed, mode, curriculum start, "
                                     "steps, accuracy and CPU seconds")
    ls.add_argument("--experiment")
    ls.add_argument("--task")
    ls.add_argument("--seed", type=_int_list("--seed", 0))
    ls.add_argument("--mode", choices=[m or "none" for m in MODES])
    ls.add_argument("--status", choices=("done", "running"))
    sub.add_parser("verify", help="check every finished run's weights against its recorded sha256")
    return ap


def main(argv=None) -> int:
    ap = parser()
    a = ap.parse_args(argv)
    try:
        if a.cmd == "train":
            cfgs = plan_configs(a.section, a.profile, a.seeds)     # every check before any training
            if a.compile and any(c.mode for c in cfgs):
                raise ValueError("--compile: this plan's runs fix their execution mode; allowed: no --compile")
            if a.dry_run:
                return list_plan(cfgs, a.shard)
            return train(cfgs, a.shard, a.threads, a.compile, a.queue)
        if a.cmd == "run":
            return run_one(a.config, a.train, a.lock_timeout)
        if a.cmd == "eval":
            return evaluate(a.run, a.n, a.loops, a.count, a.json)
        if a.cmd == "list":
            return list_runs(a.experiment, a.task, a.seed, a.mode, a.status)
        return verify()
    except ValueError as err:
        ap.exit(2, f"{ap.prog}: error: {err}\n")


def train(cfgs, shard, threads: int, compile: bool, queue: bool) -> int:
    i, k = shard
    torch.set_num_threads(threads)
    todo, held, failed = cfgs[i::k], [], []
    planned = {run_id(c): c for c in cfgs}
    while todo:
        busy = []
        for cfg in todo:
            t0 = time.time()
            if queue and _diverged(cfg, planned):
                # a queue trains unattended: one diverged run (or its warm-started descendants, which would
                # otherwise wait for it forever) must not stop the runs after it; the run keeps its FAILED
                # marker and is named at the end
                failed.append(cfg)
                continue
            if queue and _parent_pending(cfg, cfgs):
                busy.append(cfg)                       # its parent is still to train, here or in another process
                continue
            try:
                run = store.get_or_train(cfg, progress=True, compile=compile or None, lock_timeout=0 if queue else 3600.0)
            except TimeoutError:
                # another process trains it and stores it: waiting here would idle a core that the next
                # queue could use (a run left unfinished resumes from its checkpoint in the next --queue)
                held.append(cfg)
                continue
            except Diverged:
                if not queue:
                    raise
                failed.append(cfg)
                continue
            print(json.dumps({"run": str(run.path.relative_to(outputs_dir())), "task": cfg.task, "T_train": cfg.T_train,
                              "seed": cfg.seed, "steps": run.metrics["steps"], "wall_s": round(time.time() - t0, 1),
                              "seq_acc": run.metrics["final_eval"]["seq_acc"]}), flush=True)
        todo = busy
        if todo:
            time.sleep(30)
    if held:
        print(f"left to the processes training them: {', '.join(run_id(c) for c in held)}", flush=True)
    if failed:
        print(f"diverged, not stored (FAILED marker on the run or its parent): {', '.join(run_id(c) for c in failed)}",
              flush=True)
        return 1
    return 0


def _diverged(cfg, planned: dict) -> bool:
    """The run or one of its ancestors diverged (a FAILED marker; never retried unasked). The lineage is
    followed through the queue's whole plan, not this shard's part: a run skipped for a diverged parent
    gets no marker, so its own children would otherwise wait for it forever."""
    while cfg is not None:
        if store.is_diverged(cfg):
            return True
        if cfg.init_from and (outputs_dir() / "runs" / cfg.init_from / "FAILED").exists():
            return True                               # a parent outside the plan
        cfg = planned.get(cfg.init_from) if cfg.init_from else None
    return False


def _parent_pending(cfg, cfgs) -> bool:
    """A warm start whose parent is in the same queue and neither finished nor failed: wait for it.
    A parent outside the queue is left to `store.get_or_train` to refuse; one that diverged, to `_diverged`."""
    if not cfg.init_from or cfg.init_from not in {run_id(c) for c in cfgs}:
        return False
    parent = outputs_dir() / "runs" / cfg.init_from
    return not (parent / "DONE").exists() and not (parent / "FAILED").exists()


def list_plan(cfgs, shard) -> int:
    """The runs `train` would take (this shard's, in order), each stored or not; trains nothing."""
    i, k = shard
    todo = cfgs[i::k]
    for cfg in todo:
        print(f"{run_id(cfg):45s} {'done' if store.is_done(cfg) else 'missing':8s} {cfg.task:12s} "
              f"{cfg.contract:24s} {cfg.seed:4d} {cfg.injection:9s} lr={cfg.lr:g} steps={cfg.max_steps}")
    print(f"{len(todo)} runs, {sum(store.is_done(c) for c in todo)} stored")
    return 0


def run_one(cfg: RunConfig, train_missing: bool, lock_timeout: float) -> int:
    if not store.is_done(cfg) and not train_missing:
        print(f"{store.run_dir(cfg)} is not in the store; pass --train to train it", file=sys.stderr)
        return 1
    torch.set_num_threads(1)
    t0 = time.time()
    run = store.get_or_train(cfg, lock_timeout=lock_timeout)
    print(json.dumps({"path": str(run.path), "trained_here": run.trained_here, "start": t0, "end": time.time()}))
    return 0


def evaluate(ref: str, ns, loops, count: int, as_json: bool) -> int:
    from .evaluate import evaluate as evaluate_run, find_run
    run = find_run(ref)
    rows = evaluate_run(run, ns, loops, count)
    if as_json:
        print(json.dumps([vars(r) for r in rows]))
        return 0
    c = run.config
    print(f"{run.path.relative_to(outputs_dir() / 'runs')}: {c.task} {c.contract}, seed {c.seed}, "
          f"{'tied' if c.tied else 'untied'}; {count} words a length")
    for r in rows:
        for T, whole, per in zip(r.loops, r.whole_word, r.per_position):
            print(f"n={r.n:4d} loops={T:4d}  whole-word {whole:.3f}  per position "
                  + " ".join(f"{p:.2f}" for p in per))
    return 0


def list_runs(experiment=None, task=None, seeds=None, mode=None, status=None) -> int:
    print(f"{'run':45s} {'status':8s} {'task':12s} {'contract':24s} {'seed':>4s} {'mode':15s} {'from':>4s} "
          f"{'steps':>6s} {'seq_acc':>7s} {'cpu_s':>7s}")
    for d in sorted(p for p in (outputs_dir() / "runs").glob("*/*") if p.is_dir()):
        done = (d / "DONE").exists()
        if not (d / "config.json").exists() or (status and status != ("done" if done else "running")):
            continue
        cfg = RunConfig.from_dict(json.loads((d / "config.json").read_text()))
        if ((experiment and cfg.experiment != experiment) or (task and cfg.task != task)
                or (seeds and cfg.seed not in seeds) or (mode and (cfg.mode or "none") != mode)):
            continue
        name = str(d.relative_to(outputs_dir() / "runs"))
        # from: the curriculum's first length (2 is the operator-first curriculum; n_train trains jointly)
        desc = f"{cfg.task:12s} {cfg.contract:24s} {cfg.seed:4d} {cfg.mode or 'none':15s} {cfg.curriculum_start:4d}"
        if done:
            m = json.loads((d / "metrics.json").read_text())
            cpu = store.cpu_seconds(json.loads((d / "DONE").read_text()))
            print(f"{name:45s} {'done':8s} {desc} {m['steps']:6d} {m['final_eval']['seq_acc']:7.3f} "
                  f"{'-' if cpu is None else f'{cpu:.0f}':>7s}")
        elif (d / "checkpoint.pt").exists():
            c = torch.load(d / "checkpoint.pt", weights_only=True)
            print(f"{name:45s} {'running':8s} {desc} {c['step']:6d} (length {c['curriculum']['length']})")
    return 0


def verify() -> int:
    problems = store.verify()
    for p in problems:
        print(p)
    n = len(list((outputs_dir() / "runs").glob("*/*/DONE")))
    print(f"{n} finished runs checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
