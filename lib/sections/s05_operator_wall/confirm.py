"""The C05-wall entry's readings (paper/PREREGISTRATION.md): the operator wall on reserved seeds.

The per-run readings are the wall's own (`read.wall_row`: whole-word accuracy at n = 8 after
T = 8 loops on 512 in-distribution words, the deadlock reading, whole-word accuracy at longer n with
`loops_at(n)` loops); this module only aggregates them as the entry says:

- learned fraction per (group, curriculum), k of n seeds with a Wilson 95 % interval;
- A5 against S4 over the *learned* operator-first seeds only, at L = the longest n in `long_ns` where
  the learned S4 seeds' mean carries >= 0.5 (None unless both groups have >= 2 learned seeds);
- the plateau each joint S5 / A5 run sits on, and the first logged step its loss falls below
  0.8 ((n-1)/n) ln|G| (the step it leaves the plateau, or None);
- the streaming gap at n = n_train, over the seeds whose free S4 joint run learned.

Rule 3's value: the entry reads *not reproduced* when any joint S5 seed learns, whatever share
deadlocked, so `wall_joint_deadlock_score` is the deadlocked share when no joint S5 seed learned and
0 otherwise (its rule: 1 reproduced, in (0, 1) partly, 0 not reproduced); the raw share sits beside it.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ... import store
from ...plots import save
from ...rules import print_confirmatory, record_confirmatory
from ...stats import difference_of_proportions, proportion
from . import figures, plan
from .claims import CONFIRMATORY
from .read import runs_of, seed_pairs, wall_rows

GROUPS = ("S5", "A5", "S4")
CURRICULA = ("operator_first", "joint")
CARRIES = 0.5          # the learned S4 seeds' mean at the comparison length (entry, rule 2)
ABSOLUTE = 0.9         # the absolute A5 row: every learned seed at 2 n_train (entry, rule 2)


def learned_count(rows: dict, group: str, curriculum: str, learned_acc: float) -> tuple[int, int]:
    rs = runs_of(rows, group, curriculum)
    return sum(r["seq_acc"] >= learned_acc for r in rs), len(rs)


PLATEAU_FRAC = 0.8  # the entry's plateau level, as a fraction of ((n-1)/n) ln|G|


def leave_step(row: dict, entropy_frac: float = PLATEAU_FRAC) -> int | None:
    """First logged step whose training loss is below `entropy_frac` x ((n-1)/n) ln|G| at n_train
    (the level the deadlock reading uses), or None: the run never left the plateau."""
    level = entropy_frac * row["entropy_at_n_train"]
    full = row["config"].n_train
    return next((int(e["step"]) for e in row["log"] if e.get("length", full) == full and e["loss"] < level), None)


def nc1_against_solvable(rows: dict, long_ns, learned_acc: float) -> dict:
    """Rule 2: over the learned operator-first seeds, A5's mean whole-word accuracy minus S4's at the
    longest n where the learned S4 seeds carry; and the absolute row, read only where S4 passes it."""
    learned = {g: [r for r in runs_of(rows, g, "operator_first") if r["seq_acc"] >= learned_acc] for g in ("A5", "S4")}
    mean = {g: {n: float(np.mean([r["ood"][n] for r in rs])) if rs else None for n in long_ns} for g, rs in learned.items()}
    enough = all(len(rs) >= 2 for rs in learned.values())
    carried = [n for n in long_ns if enough and mean["S4"][n] >= CARRIES]
    at = max(carried) if carried else None
    top = max(long_ns)
    s4_absolute = bool(learned["S4"]) and all(r["ood"][top] >= ABSOLUTE for r in learned["S4"])
    a5_absolute = (all(r["ood"][top] >= ABSOLUTE for r in learned["A5"]) if learned["A5"] else None) if s4_absolute else None
    return {"nc1_compared_at_n": at,
            "nc1_minus_solvable_ood": None if at is None else mean["A5"][at] - mean["S4"][at],     # judged unrounded
            "learned_ood_by_group": {g: {str(n): None if v is None else round(v, 3) for n, v in m.items()} for g, m in mean.items()},
            "learned_operator_first_seeds": {g: [r["config"].seed for r in rs] for g, rs in learned.items()},
            "a5_absolute_at_2n": a5_absolute, "s4_passes_absolute_at_2n": s4_absolute}


def streaming_at_n_train(pairs: dict, rows: dict, learned_acc: float) -> dict:
    """Rule 5: mean over seeds whose free run learned of free minus streaming whole-word accuracy at
    n_train. *Learned* is the entry's (the free run's row: its in-distribution set after T_train loops);
    the gap is read on the pairs' shared words at n_train, each run with its schedule's loops there."""
    gaps, free_learned = [], []
    for key, out in pairs.items():
        n = min(out["free"])                           # the training length: the first entry of each pair
        free_learned.append(rows[key]["seq_acc"] >= learned_acc)
        if free_learned[-1]:
            gaps.append(out["free"][n] - out["streaming"][n])
    return {"free_learned_fraction": float(np.mean(free_learned)) if free_learned else None,
            "streaming_gap": float(np.mean(gaps)) if gaps else None,                               # judged unrounded
            "streaming_gaps_by_seed": {str(seed): round(out["free"][min(out["free"])] - out["streaming"][min(out["free"])], 3)
                                       for (_, _, seed), out in pairs.items()}}


def _difference(a: tuple[int, int], b: tuple[int, int]) -> tuple[float, float, float] | tuple[()]:
    if not (a[1] and b[1]):
        return ()
    e = difference_of_proportions(*a, *b)
    return e.value, e.low, e.high


def wall_confirm_results(rows: dict, pairs: dict, long_ns, learned_acc: float) -> dict:
    """The readings the C05-wall rules consume (`claims.CONFIRMATORY`), with the reported extras."""
    counts = {f"{g} {c}": learned_count(rows, g, c, learned_acc) for g in GROUPS for c in CURRICULA}
    frac = {key: round(k / n, 3) if n else None for key, (k, n) in counts.items()}
    joint_s5 = runs_of(rows, "S5", "joint")
    dead = round(float(np.mean([r["reading"].deadlocked for r in joint_s5])), 3) if joint_s5 else None
    out = {
        "learned_by_cell": {key: {"learned": k, "of": n, "interval": [round(e.low, 3), round(e.high, 3)]}
                            for key, (k, n) in counts.items() if n for e in (proportion(k, n),)},
        "a5_operator_first_learned_fraction": frac["A5 operator_first"],
        "s4_operator_first_learned_fraction": frac["S4 operator_first"],
        # rule 1, printed not judged (3 v 3 seeds cannot reject a difference): A5 - S4, Newcombe's interval
        "a5_minus_s4_operator_first_learned": [round(x, 3) for x in _difference(counts["A5 operator_first"],
                                                                               counts["S4 operator_first"])],
        "a5_joint_learned_fraction": frac["A5 joint"],
        "s4_joint_learned_fraction": frac["S4 joint"],
        "wall_operator_first_fraction": frac["S5 operator_first"],
        "wall_joint_learned_fraction": frac["S5 joint"],
        "wall_joint_deadlock_fraction": dead,
        "wall_joint_deadlock_score": None if dead is None else (dead if frac["S5 joint"] == 0 else 0.0),
        "leaves_plateau_at_step": {f"{g} joint {r['config'].seed}": leave_step(r) for g in ("S5", "A5")
                                   for r in runs_of(rows, g, "joint")},
        "budgets": sorted({int(r["config"].max_steps) for r in rows.values()}),
    }
    out.update(nc1_against_solvable(rows, long_ns, learned_acc))
    out.update(streaming_at_n_train(pairs, rows, learned_acc))
    return out



ENTRY = "C05-wall"
LONG_NS = (10, 12, 14, 16)          # the entry's extrapolation lengths
EVAL_COUNT = 512


def show(profile: str = "quick") -> dict | None:
    """Notebook 05's confirmatory section: once every run of the study is stored, read it, record the
    readings for the ledger, print them with the verdicts and draw the joint runs' loss curves; until
    then say how many runs are in and record nothing. The runs are the entry's, whatever the profile."""
    study = plan.study()
    waiting = tuple(c for c in study if not store.is_done(c))
    total = len(study)
    print(f"{ENTRY}: {total - len(waiting)} of {total} runs stored"
          + ("" if not waiting else "; the reading waits for the rest (no verdict recorded)"))
    if waiting:
        return None
    cells = {key: [store.load_run(c) for c in cfgs] for key, cfgs in plan.study_cells().items()}
    rows = wall_rows(cells, LONG_NS, EVAL_COUNT)
    free, stream = zip(*[(store.load_run(f), store.load_run(s)) for f, s in plan.study_streaming()])
    out = wall_confirm_results(rows, seed_pairs(free, stream, LONG_NS, EVAL_COUNT), LONG_NS, 0.9)
    record_confirmatory(ENTRY, out)
    for (group, curriculum, seed), r in rows.items():
        d = r["reading"]
        print(f"{group} {curriculum:14s} {seed}: steps {d.steps:6d}, length {d.reached_length}, loss {d.loss:.3f}, "
              f"deadlocked {d.deadlocked}, whole-word {r['seq_acc']:.3f}, " + ", ".join(f"n={n}: {r['ood'][n]:.3f}" for n in LONG_NS))
    for cell, c in out["learned_by_cell"].items():
        print(f"{cell:18s} learned {c['learned']} of {c['of']}, 95 % interval {c['interval']}")
    print(f"A5 - S4 operator-first learned fraction (printed, not judged): {out['a5_minus_s4_operator_first_learned']}")
    print(f"leaves the plateau at step: {out['leaves_plateau_at_step']}")
    print(f"A5 against S4 (learned operator-first seeds {out['learned_operator_first_seeds']}): at n = "
          f"{out['nc1_compared_at_n']}, {out['learned_ood_by_group']}; absolute row at n = 16: "
          f"A5 {out['a5_absolute_at_2n']} (read only if S4 passes: {out['s4_passes_absolute_at_2n']})")
    print(f"streaming gap at n = 8 by seed: {out['streaming_gaps_by_seed']}")
    print_confirmatory(CONFIRMATORY)
    save(figures.wall_loss({k: r for k, r in rows.items() if k[1] == "joint"}, PLATEAU_FRAC),
         "05_operator_wall_confirm_loss", profile)
    plt.show()
    return out
