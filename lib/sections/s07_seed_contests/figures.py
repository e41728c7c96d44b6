"""07's figure: each chosen metric against out-of-distribution accuracy, one row a contest."""
from __future__ import annotations

import matplotlib.pyplot as plt

from ...plots import WHOLE_WORD, METRIC_LABELS, legend_key


def contest_scatter(table: dict, metrics, threshold: float, n_ood: dict | None = None):
    """07: each chosen metric against OOD whole-word accuracy, one row per contest (dotted: the
    threshold for 'generalizes'). n_ood: contest -> its OOD test length (named on the y axis)."""
    fig, axes = plt.subplots(len(table), len(metrics), figsize=(3.3 * len(metrics), 3.0 * len(table) + 0.4),
                             squeeze=False, layout="constrained")
    for row_axes, (name, rows) in zip(axes, table.items()):
        for ax, m in zip(row_axes, metrics):
            ax.scatter([r[m] for r in rows], [r["ood_acc"] for r in rows], s=14)
            ax.axhline(threshold, color="gray", ls=":", lw=0.9)
            ax.set_xlabel(METRIC_LABELS.get(m, m), fontsize=8)
            ax.set_ylim(-0.03, 1.03)
        at = f"at n = {n_ood[name]}" if n_ood and name in n_ood else "out of distribution"
        row_axes[0].set_ylabel(f"contest {name}\n{WHOLE_WORD} {at}", fontsize=9)
    fig.legend(handles=[legend_key(f"threshold: a seed generalizes at {WHOLE_WORD} ≥ {threshold:g} (out of distribution)",
                             color="gray", ls=":"),
                        legend_key("one point a seed", ls="", marker="o", ms=4, color="C0")],
               fontsize=8, loc="outside upper center", ncol=2)
    return fig
