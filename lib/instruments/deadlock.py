"""Reading a deadlock off a finished run (the operator wall, Paper A §6.3).

Joint learning of a large operator and its iteration can stall: the model learns to copy g_1
(position 1) and nothing else, the loss sits near the cost of guessing every later product
uniformly, and the curriculum never moves. We call a run DEADLOCKED when all three hold, measured
rather than assumed from a step count:
  1. plateau: over the last `window` training steps the logged loss improved by < 2 % and the
     curriculum was not promoted (`train.plateaued`; a run stopped by `plateau_stop` has this);
  2. loss near the operator's entropy: final logged loss >= `entropy_frac` x the loss of a model
     that knows position 1 and guesses uniformly after, ((n-1)/n) ln|G| at the trained length n;
  3. accuracy stuck: accuracy at positions >= 2 (at the trained length, after T_train loops)
     below `stuck_acc`.

The wall's readers: `wall_rows` reads every run of the wall (what it learned, whether it
deadlocked, how far it carries in length); `streaming_pairs` sets forced seriality (the streaming
schedule) against free training of the same task; `wall_results` gives the ledger's numbers.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..train import plateaued
from .architecture import at_contract, final_accuracy_by_length


@dataclass
class DeadlockReading:
    deadlocked: bool
    plateau: bool
    loss: float                # last logged training loss
    entropy_level: float       # ((n-1)/n) ln|G| at the length the curriculum stood at
    later_position_acc: float  # mean accuracy at positions >= 2 (in-distribution test set)
    reached_length: int
    steps: int


def operator_entropy_level(n_classes: int, length: int) -> float:
    """Mean per-position loss of a model that gets position 1 right and guesses uniformly after."""
    return (length - 1) / length * math.log(n_classes)


def deadlock(metrics: dict, n_classes: int, position_acc, window: int = 2000, entropy_frac: float = 0.8,
             stuck_acc: float = 0.2) -> DeadlockReading:
    """`metrics`: a stored run's metrics (its training log, promotions, reached length, steps);
    `position_acc`: per-position accuracy of the finished model at its training length."""
    log = metrics["log"]            # one entry per 50 steps; a shorter run has none and cannot plateau
    plateau = metrics.get("plateau_at") is not None or plateaued(log, window, metrics.get("promotions", []))
    length = int(metrics["reached_length"])
    level = operator_entropy_level(n_classes, max(length, 2))
    loss = float(log[-1]["loss"]) if log else float("nan")
    later = float(np.mean(np.asarray(position_acc, float)[1:]))
    dead = plateau and bool(loss >= entropy_frac * level) and later < stuck_acc
    return DeadlockReading(bool(dead), bool(plateau), loss, level, later, length, int(metrics["steps"]))


def wall_row(run, long_ns, count: int = 512) -> dict:
    """One run of the wall: whole-word and per-position accuracy at its contract (in distribution,
    T_train loops), the deadlock reading from its training log and that per-position accuracy, and
    whole-word accuracy at the longer lengths (loops `cfg.loops_at(n)`)."""
    c = run.config
    acc = at_contract(run, count)
    position_acc = acc.position_acc[-1]
    n_classes = c.task_obj().n_classes
    return dict(config=c, log=run.metrics["log"], seq_acc=acc.at(c.T_train), pos_acc=position_acc,
                reading=deadlock(run.metrics, n_classes, position_acc),
                entropy_at_n_train=operator_entropy_level(n_classes, c.n_train),
                ood=final_accuracy_by_length(run, long_ns, count))


def wall_rows(wall: dict, long_ns, count: int = 512) -> dict:
    """`wall`: (group, curriculum) -> runs, one per seed. Returns (group, curriculum, seed) -> `wall_row`,
    in the plan's order."""
    return {(group, curriculum, run.config.seed): wall_row(run, long_ns, count)
            for (group, curriculum), runs in wall.items() for run in runs}


def streaming_pairs(free, streaming, long_ns, count: int = 512) -> dict:
    """Forced seriality against free training: `free[k]` and `streaming[k]` are runs of the same task
    and length. Returns task -> {"free": {n: acc}, "streaming": {n: acc}}: whole-word accuracy at the
    training length and each longer one, every run with its own loops (`cfg.loops_at`: the streaming
    schedule keeps T = n + 2, the free run T_train scaled with n)."""
    pairs = {}
    for f, s in zip(free, streaming, strict=True):
        if f.config.task != s.config.task or f.config.n_train != s.config.n_train:
            raise ValueError(f"streaming pair: {f.config.task} n={f.config.n_train} against {s.config.task} "
                             f"n={s.config.n_train}; a pair is one task at one training length")
        ns = (f.config.n_train,) + tuple(long_ns)
        pairs[f.config.task] = {"free": final_accuracy_by_length(f, ns, count), "streaming": final_accuracy_by_length(s, ns, count)}
    return pairs


def wall_results(rows: dict, pairs: dict, long_n: int, learned_acc: float) -> dict:
    """The ledger's numbers for §6.3. `rows` from `wall_rows` (the plan names the NC1 group first, the
    large-operator group second); a run *learned* when its in-distribution whole-word accuracy is
    >= `learned_acc`. 'A5 generalizes fully' is the worst operator-first A5 seed's accuracy in
    distribution or at `long_n`. The streaming gap is the largest free-minus-streaming accuracy over
    tasks and lengths where free training learned (None where it learned nowhere)."""
    first, second = dict.fromkeys(g for g, _, _ in rows)
    curricula = list(dict.fromkeys(c for _, c, _ in rows))

    def runs_of(group, curriculum):
        return [r for (g, c, _), r in rows.items() if g == group and c == curriculum]

    def learned(group, curriculum):
        return round(float(np.mean([r["seq_acc"] >= learned_acc for r in runs_of(group, curriculum)])), 3)

    def name(group, curriculum, seed):
        return f"{group} {curriculum} seed {seed}"

    a5 = runs_of(first, "operator_first")
    joint = runs_of(second, "joint")
    gaps = [out["free"][n] - out["streaming"][n] for out in pairs.values() for n in out["free"]
            if out["free"][n] >= learned_acc]
    return {
        "groups": [first, second],
        "a5_ood_acc": round(float(min(min(r["seq_acc"], r["ood"][long_n]) for r in a5)), 3),
        "a5_learned_fraction": {c: learned(first, c) for c in curricula},
        "s5_joint_deadlock_fraction": round(float(np.mean([r["reading"].deadlocked for r in joint])), 3),
        "s5_operator_first_fraction": learned(second, "operator_first"),
        "s5_learned_fraction": {c: learned(second, c) for c in curricula},
        "deadlocked": {name(*k): r["reading"].deadlocked for k, r in rows.items()},
        "seq_acc": {name(*k): round(float(r["seq_acc"]), 3) for k, r in rows.items()},
        "streaming_pairs": {task: {kind: {str(n): round(float(a), 3) for n, a in accs.items()}
                                   for kind, accs in out.items()} for task, out in pairs.items()},
        "streaming_gap": round(float(max(gaps)), 3) if gaps else None,
    }
