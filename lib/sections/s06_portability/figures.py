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
