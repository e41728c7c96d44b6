"""01's figure: each tail metric against out-of-distribution accuracy over the population, with
Spearman's rho and its interval."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ...plots import WHOLE_WORD, METRIC_LABELS


def metrics_vs_ood(rows: list[dict], corr: dict, n_ood: int | None = None):
    """01: each tail metric against OOD accuracy over the models, titled with Spearman's rho and its
    95 % interval. n_ood: the OOD test length (named on the y axis)."""
    metrics = list(corr)
    fig, axes = plt.subplots(1, len(metrics), figsize=(3.2 * len(metrics), 3.3), sharey=True, layout="constrained")
    for ax, m in zip(np.atleast_1d(axes), metrics):
        xs = [r[m] for r in rows]
        ax.scatter(xs, [r["ood_acc"] for r in rows])
        ax.set_xlabel(METRIC_LABELS.get(m, m), fontsize=8)
        e = corr[m]
        if np.isfinite(e.value):
            ax.set_title(f"Spearman ρ {e.value:+.2f}\n95 % interval [{e.low:+.2f}, {e.high:+.2f}]", fontsize=9)
        elif len(xs) and np.ptp(xs) == 0:
            ax.set_title(f"ρ undefined: every model\nreads {xs[0]:.3f} (constant)", fontsize=9)
        else:
            ax.set_title("ρ undefined", fontsize=9)
    at = f"at n = {n_ood}" if n_ood else "out of distribution"
    np.atleast_1d(axes)[0].set_ylabel(f"best {WHOLE_WORD} {at}\n(over a scan of loops)")
    return fig
