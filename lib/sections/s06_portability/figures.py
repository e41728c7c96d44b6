"""06's figure: speed re-priced along each annealing chain, and annealed against from-scratch accuracy."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ...plots import WHOLE_WORD, legend_key


def annealing(rows: list[dict], start_demand: float):
    """06: v-hat against demand along each seed's annealing chain (dashed: the law's v = n/T), and the
    in-distribution whole-word accuracy of annealed against from-scratch runs of the same contracts.
    Colour: seed; solid circles: annealed; dotted squares: the lottery branch; dashed crosses: scratch."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 4), layout="constrained")
    seeds = sorted({r["seed"] for r in rows})
    has_branch = any(r.get("branch") for r in rows)
    for i, seed in enumerate(seeds):
        colour = f"C{i % 10}"
        rs = [r for r in rows if r["seed"] == seed and not r.get("branch")]
        axes[0].plot([start_demand] + [r["demand"] for r in rs], [rs[0]["v_before"]] + [r["v_after"] for r in rs],
                     "o-", color=colour)
        for b in (r for r in rows if r["seed"] == seed and r.get("branch")):   # the branch: from its parent, dotted
            axes[0].plot([b["demand_before"], b["demand"]], [b["v_before"], b["v_after"]], "s:", color=colour)
        by_demand = sorted((r for r in rows if r["seed"] == seed), key=lambda r: r["demand"])
        axes[1].plot([r["demand"] for r in by_demand], [r["scratch_acc"] for r in by_demand], "x--", color=colour)
        axes[1].plot([r["demand"] for r in by_demand], [r["acc"] for r in by_demand], "o-", color=colour)
    grid = np.array(sorted({r["demand"] for r in rows} | {start_demand}))
    axes[0].plot(grid, grid, "k--", lw=0.8)
    axes[0].set(xlabel="demand n / T (positions per loop asked)", ylabel="v-hat from tau (positions per loop)",
                title="speed re-priced by annealing")
    axes[1].set(xlabel="demand n / T (positions per loop asked)",
                ylabel=f"{WHOLE_WORD} in distribution\n(n = n_train, T_train loops)", ylim=(-0.02, 1.02),
                title="annealed vs from scratch")
    handles = ([legend_key(f"seed {s}", color=f"C{i % 10}", lw=3) for i, s in enumerate(seeds)]
               + [legend_key("annealed (warm-started chain)", ls="-", marker="o")]
               + ([legend_key("lottery branch, from its parent", ls=":", marker="s")] if has_branch else [])
               + [legend_key("from scratch (right panel)", ls="--", marker="x"),
                  legend_key("budget law v = n / T (left panel)", ls="--", lw=0.8)])
    fig.legend(handles=handles, fontsize=7, loc="outside right upper")
    return fig


def confirm_annealing(lottery: list[dict], scratch: list[dict], previous_demand: float, learned: float):
    """C41-annealing, per reserved seed: the final in-distribution whole-word accuracy of the lottery run
    (annealed T = 8 -> 4 -> T_L) and of the scratch run (T_L from scratch, same budget), and the lottery
    runs' v-hat by both estimators against the old and new demands. *Transferred* needs v-hat log-closer
    to the new demand than to the old, i.e. above their geometric mean (dotted); a learned run whose
    readout is invalid has no v-hat and is marked on the axis."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 4), layout="constrained")
    seeds = [r["seed"] for r in lottery]
    x = np.arange(len(seeds))
    ax = axes[0]
    for i, (a, s) in enumerate(zip(lottery, scratch)):
        ax.plot([i, i], [s["acc"], a["acc"]], color="0.75", lw=1, zorder=1)
    ax.plot(x, [r["acc"] for r in lottery], "o", color="C0", label="annealed (T = 8 → 4 → T_L)")
    ax.plot(x, [r["acc"] for r in scratch], "x", color="C3", ms=8, label="from scratch, same budget")
    ax.axhline(learned, color="k", ls="--", lw=0.8, label=f"learned: ≥ {learned}")
    n_a, n_s = sum(r["learned"] for r in lottery), sum(r["learned"] for r in scratch)
    ax.set(xticks=x, xticklabels=seeds, xlabel="reserved seed", ylim=(-0.02, 1.02),
           ylabel=f"{WHOLE_WORD} at T_L\n(n = n_train, T_L loops)",
           title=f"learned at T_L = {lottery[0]['T_train']}: annealed {n_a}/{len(lottery)}, scratch {n_s}/{len(scratch)}")
    ax.legend(fontsize=7, loc="lower right")
    ax = axes[1]
    demand = lottery[0]["demand"]
    done = [(i, r) for i, r in enumerate(lottery) if r["learned"]]
    ax.plot([i for i, r in done if r["valid"]], [r["v_tau"] for _, r in done if r["valid"]], "o", color="C0",
            label="v-hat from tau (the entry's estimator)")
    ax.plot([i for i, r in done if r["valid"]], [r["v_frontier"] for _, r in done if r["valid"]], "o", mfc="none",
            color="C2", label="v-hat from the frontier (beside)")
    invalid = [i for i, r in done if not r["valid"]]
    ax.plot(invalid, [previous_demand / 2] * len(invalid), "v", color="0.5", ls="none",
            label="learned, readout invalid (no v-hat)")
    ax.axhline(demand, color="k", lw=0.8, label=f"new demand {demand:g}")
    ax.axhline(previous_demand, color="k", ls="--", lw=0.8, label=f"old demand {previous_demand:g}")
    ax.axhline(float(np.sqrt(demand * previous_demand)), color="k", ls=":", lw=0.8,
               label="transfer boundary (geometric mean)")
    ax.set(xticks=x, xticklabels=seeds, xlim=(-0.5, len(seeds) - 0.5), xlabel="reserved seed (learned lottery runs)",
           yscale="log", ylabel="v-hat (positions per loop)", title="speed of the learned lottery runs")
    ticks = [1, 2, 3, 4, 6, 8]
    ax.set_yticks(ticks, [str(t) for t in ticks])
    ax.minorticks_off()
    ax.legend(fontsize=7, loc="upper left")
    return fig
