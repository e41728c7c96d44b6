"""09's figures: Paper B's grid (reachability and extrapolation per run) and the sudoku boards per loop."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import NullFormatter

from ...plots import WHOLE_WORD, MARKERS, integer_ticks, legend_right, legend_key, legend_note, NEAR_ZERO, near_zero


# the configurations of Paper B's grid outnumber tab10: two more colours, each distinct from the ten
_GRID_COLOURS = [f"C{i}" for i in range(10)] + ["black", "#b8860b"]


_SEED_LS = ("-", "--", ":", "-.")


def fixed_point_grid(rows: dict, label):
    """09: per run of Paper B's grid, the relative step per loop (reachability) and the best whole-word
    accuracy at each test length (extrapolation). One colour a configuration, one line style (and
    marker) a seed, one legend beside both panels; named reference lines: the 10⁻³ tolerance "reached"
    is read against, the training loops T_train and the training length n_train. rows:
    `read.stability_rows`; label: configuration key -> its name."""
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.6), layout="constrained")
    keys = list(dict.fromkeys(r["key"] for r in rows.values()))
    seeds = sorted({r["seed"] for r in rows.values()})
    for r in rows.values():
        colour = _GRID_COLOURS[keys.index(r["key"]) % len(_GRID_COLOURS)]
        i = seeds.index(r["seed"])
        style = dict(color=colour, ls=_SEED_LS[i % len(_SEED_LS)], lw=1.1)
        name = f"{label(r['key'])} s{r['seed']}"
        axes[0].semilogy(np.arange(1, len(r["reach"].step) + 1), np.maximum(r["reach"].step, 1e-9), label=name, **style)
        axes[1].plot(list(r["extrap"]), list(r["extrap"].values()), marker=MARKERS[i % len(MARKERS)], ms=4,
                     label=name, **style)
    first = next(iter(rows.values()))
    axes[0].axhline(1e-3, color="gray", ls="-.", lw=1.0)
    refs = [legend_key("tolerance 10⁻³ (left): an input has reached\nits fixed point once it stays below", color="gray", ls="-.")]
    if "T_train" in first:
        axes[0].axvline(first["T_train"], color="gray", ls=":", lw=1.0)
        refs.append(legend_key(f"T_train = {first['T_train']} (left: loops trained)", color="gray", ls=":"))
    axes[0].set_xlabel("loop (loops run, up to 4 x T_train)")
    axes[0].set_ylabel("relative change of the state per loop\n||h(t+1) − h(t)|| / ||h(t)||, median over inputs")
    axes[0].set_title("reachability: does the loop settle?")
    integer_ticks(axes[0], x=True)
    ns = sorted({n for r in rows.values() for n in r["extrap"]})
    axes[1].axvline(first["n_train"], color="gray", ls=":", lw=1.0)
    refs.append(legend_key(f"n_train = {first['n_train']} (right: training length)", color="gray", ls=":"))
    axes[1].set_xscale("log", base=2)
    axes[1].set_xticks(ns, [str(n) for n in ns])
    axes[1].xaxis.set_minor_formatter(NullFormatter())
    axes[1].set_xlabel("test length n (tokens; log scale)")
    axes[1].set_ylabel(f"best {WHOLE_WORD}\nover the scanned loops")
    axes[1].set_ylim(-0.02, 1.02)
    axes[1].set_title("extrapolation: longer words than trained")
    handles = ([legend_key(label(k), color=_GRID_COLOURS[i % len(_GRID_COLOURS)], lw=2.5) for i, k in enumerate(keys)]
               + [legend_key(f"seed {s}", ls=_SEED_LS[i % len(_SEED_LS)], marker=MARKERS[i % len(MARKERS)], ms=4)
                  for i, s in enumerate(seeds)] + refs)
    legend_right(axes[1], handles, title="configuration (colour), seed (line, marker)", title_fontsize=7)
    return fig


def sudoku_loops(sudoku_rows: dict):
    """09: blank-cell and whole-board accuracy per loop: one colour a difficulty (givens), one line style a
    recall (external solid, internal dashed), one marker a seed; the training loops T_train a named dotted
    line. sudoku_rows: `read.sudoku_readings`."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 4), sharex=True, layout="constrained")
    givens = list(dict.fromkeys(g for _, _, g in sudoku_rows))     # the plan's order: training difficulty first
    seeds = sorted({s for _, s, _ in sudoku_rows})
    recall_ls = {"external": "-", "internal": "--"}
    for (recall, seed, g), r in sudoku_rows.items():
        loops = np.arange(1, len(r["cell"]) + 1)
        style = dict(color=f"C{givens.index(g) % 10}", ls=recall_ls[recall],
                     marker=MARKERS[seeds.index(seed) % len(MARKERS)], ms=3.5,
                     markevery=max(1, len(loops) // 8), lw=1.1, label=f"{recall}, {g} givens, seed {seed}")
        axes[0].plot(loops, r["cell"], **style)
        axes[1].plot(loops, r["board"], **style)
    T = next(iter(sudoku_rows.values()))["T"]
    for ax, what in zip(axes, ("blank-cell accuracy\n(fraction of the cells to fill that are right)",
                               "whole-board accuracy\n(fraction of boards with every cell right)")):
        ax.axvline(T, color="gray", ls=":", lw=1.0)
        ax.set_xlabel("loop (loops run, up to 2 x T_train)")
        ax.set_ylabel(what)
        ax.set_ylim(-0.02, 1.02)
        integer_ticks(ax, x=True)
    axes[0].set_title("cells")
    axes[1].set_title("whole boards")
    handles = ([legend_key(f"{g} givens" + (" (training difficulty)" if i == 0 else ""), color=f"C{i % 10}", lw=2.5)
                for i, g in enumerate(givens)]
               + [legend_key(f"{rc} recall", ls=ls) for rc, ls in recall_ls.items() if any(k[0] == rc for k in sudoku_rows)]
               + [legend_key(f"seed {s}", ls="", marker=MARKERS[i % len(MARKERS)], ms=4) for i, s in enumerate(seeds)]
               + [legend_key(f"T_train = {T} (loops trained)", color="gray", ls=":")])
    for what, panel in (("cell", "cells"), ("board", "boards")):
        hidden = [k for k, r in sudoku_rows.items() if near_zero(r[what])]
        recalls = {k[0] for k in hidden}
        if not hidden:
            continue
        if len(hidden) == len(sudoku_rows):
            who = f"all {len(hidden)} lines"
        elif len(recalls) == 1 and len(hidden) == sum(k[0] in recalls for k in sudoku_rows):
            who = f"every {hidden[0][0]} recall line ({len(hidden)})"
        else:
            who = ",\n".join(f"{rc} seed {sd}, {g} givens" for rc, sd, g in hidden)
        handles.append(legend_note(f"{panel}: at or near 0 (within {NEAR_ZERO})\nat every loop, overlapping: {who}"))
    legend_right(axes[1], handles, title="difficulty (colour), recall (line), seed (marker)", title_fontsize=7)
    return fig
