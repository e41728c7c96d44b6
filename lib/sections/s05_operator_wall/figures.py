"""05's figures: the wall's loss curves, accuracy per position and against length, and free training
against the streaming schedule."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ...plots import WHOLE_WORD, MARKERS, integer_ticks, legend_right, legend_key, legend_note, NEAR_ZERO, near_zero


# 05's wall figures draw a curriculum by its line: solid operator-first, dashed joint.
_CURRICULUM_LS = {"operator_first": "-", "joint": "--"}


def _curriculum_keys(present=None) -> list:
    """Legend keys for the curricula `present` (all of them by default): a key for a line style no run
    drew would tell the reader to look for curves that are not there."""
    return [legend_key(c.replace("_", "-"), ls=ls) for c, ls in _CURRICULUM_LS.items()
            if present is None or c in present]


def wall_loss(rows: dict, plateau_frac: float | None = None):
    """05: training loss against step per run, one panel per group (colour: seed; dashed: joint, solid:
    operator-first; dotted: the loss of a model that knows only position 1, at the full length; with
    `plateau_frac`, a dash-dot line at that fraction of it: the loss below which a run has left the plateau).
    rows: `read.wall_rows`."""
    groups = sorted({g for g, _, _ in rows})
    seeds = sorted({s for _, _, s in rows})
    fig, axes = plt.subplots(1, len(groups), figsize=(5.2 * len(groups) + 1.6, 3.8), squeeze=False,
                             layout="constrained")
    for ax, group in zip(axes[0], groups):
        mine = {k: r for k, r in rows.items() if k[0] == group}
        for (_, curriculum, seed), r in mine.items():
            ax.plot([e["step"] for e in r["log"]], [e["loss"] for e in r["log"]],
                    ls=_CURRICULUM_LS[curriculum], color=f"C{seed % 10}",
                    label=f"{curriculum} seed {seed}")
        entropy = next(iter(mine.values()))["entropy_at_n_train"]
        ax.axhline(entropy, color="k", ls=":", lw=0.9)
        if plateau_frac is not None:
            ax.axhline(plateau_frac * entropy, color="k", ls="-.", lw=0.7)
        ax.set(xlabel="training step", ylabel="training loss (final loop, nats)", title=group)
    handles = ([legend_key(f"seed {s}", color=f"C{s % 10}", lw=3) for s in seeds]
               + _curriculum_keys({c for _, c, _ in rows})
               + [legend_key("loss knowing only position 1\n(at the full length)", ls=":", lw=0.9)])
    if plateau_frac is not None:
        handles.append(legend_key(f"{plateau_frac:g} × that: below it a run\nhas left the plateau", ls="-.", lw=0.7))
    fig.legend(handles=handles, fontsize=7, loc="outside right upper")
    return fig


# 05's wall figures hold up to 18 runs: the default colour cycle repeats after 10, so a run's style is
# read from what it is instead: colour = group (or streaming pair), line = curriculum, marker = seed.
_SEED_MARKERS = MARKERS


def _wall_style(groups: list, group, curriculum: str, seed: int) -> dict:
    return dict(color=f"C{groups.index(group) % 10}", ls=_CURRICULUM_LS[curriculum],
                marker=_SEED_MARKERS[seed % len(_SEED_MARKERS)], ms=4)


def _wall_legend(fig, groups: list, seeds: list) -> None:
    """A legend of the three keys (group colours, curriculum lines, seed markers), not of every run."""
    handles = ([legend_key(g, color=f"C{i % 10}", lw=3) for i, g in enumerate(groups)] + _curriculum_keys()
               + [legend_key(f"seed {s}", ls="", marker=_SEED_MARKERS[s % len(_SEED_MARKERS)]) for s in seeds])
    fig.legend(handles=handles, fontsize=7, loc="outside right upper")


def wall_accuracy(rows: dict, long_ns):
    """05: per-position accuracy at the training length, and whole-word accuracy against length
    (colour: group, solid: operator-first, dashed: joint, marker: seed)."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 3.9), layout="constrained")
    groups = list(dict.fromkeys(g for g, _, _ in rows))
    n_train = next(iter(rows.values()))["config"].n_train
    for (group, curriculum, seed), r in rows.items():
        style = dict(_wall_style(groups, group, curriculum, seed), label=f"{group} {curriculum} s{seed}")
        axes[0].plot(np.arange(1, len(r["pos_acc"]) + 1), r["pos_acc"], **style)
        axes[1].plot([r["config"].n_train] + list(long_ns), [r["seq_acc"]] + [r["ood"][n] for n in long_ns], **style)
    axes[0].set(xlabel="position i", ylabel="accuracy after T_train loops\n(fraction of words right there)",
                title=f"per-position accuracy at n_train = {n_train}")
    axes[1].set(xlabel="test length n (with T_train · n / n_train loops)", ylabel=WHOLE_WORD,
                title=f"{WHOLE_WORD} against length")
    for ax in axes:
        ax.set_ylim(-0.02, 1.02)
        integer_ticks(ax, x=True)
    _wall_legend(fig, groups, sorted({s for _, _, s in rows}))
    return fig


_SCHEDULE_LS = {"free": "-", "streaming": "--"}


def streaming_pairs(pairs: dict):
    """05: whole-word accuracy against length, free training (solid) against the streaming schedule
    (dashed) on the same task. pairs: `read.streaming_pairs` (keyed by task: one colour a task) or
    `read.seed_pairs` (keyed by task, curriculum and seed: one colour a task and curriculum, one
    marker a seed). Runs at or near 0 at every length (within NEAR_ZERO, so not only exact zeros) overlap
    on the axis: the legend names them."""
    fig, ax = plt.subplots(figsize=(7.5, 3.9))
    keyed = all(isinstance(k, tuple) for k in pairs)
    groups = list(dict.fromkeys(" ".join(map(str, k[:-1])).replace("_", "-") if keyed else k for k in pairs))
    seeds = sorted({k[-1] for k in pairs}) if keyed else []
    at_zero = {kind: [] for kind in _SCHEDULE_LS}
    for key, out in pairs.items():
        name = " ".join(map(str, key)) if isinstance(key, tuple) else key
        group = " ".join(map(str, key[:-1])).replace("_", "-") if keyed else key
        marker = MARKERS[seeds.index(key[-1]) % len(MARKERS)] if keyed else "o"
        for kind, accs in out.items():
            ax.plot(list(accs), list(accs.values()), ls=_SCHEDULE_LS.get(kind, ":"), marker=marker, ms=5,
                    color=f"C{groups.index(group) % 10}", label=f"{name} {kind}")
            if kind in at_zero and near_zero(accs.values()):
                at_zero[kind].append(f"{group} seed {key[-1]}" if keyed else group)
    ax.set(xlabel="test length n", ylabel=WHOLE_WORD, ylim=(-0.03, 1.03),
           title="free training (solid) vs imposed seriality (streaming, dashed)")
    ax.set_xticks(sorted({n for out in pairs.values() for accs in out.values() for n in accs}))   # the lengths tested, no others
    handles = ([legend_key(g, color=f"C{i % 10}", lw=3) for i, g in enumerate(groups)]
               + [legend_key(f"{kind} training" if kind == "free" else f"{kind} schedule", ls=ls) for kind, ls in _SCHEDULE_LS.items()]
               + [legend_key(f"seed {s}", ls="", marker=MARKERS[i % len(MARKERS)]) for i, s in enumerate(seeds)])
    for kind, names in at_zero.items():
        if names:
            total = sum(kind in out for out in pairs.values())
            who = f"all {total} runs" if len(names) == total else ",\n".join(names)
            handles.append(legend_note(f"at or near 0 (within {NEAR_ZERO}) at every\nlength, overlapping ({kind}): {who}"))
    legend_right(ax, handles)
    return fig
