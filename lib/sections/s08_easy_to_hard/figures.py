"""08's figure: deep-thinking's accuracy-per-iteration curves, one panel a seed."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ...plots import WHOLE_WORD, integer_ticks


def accuracy_vs_loops(curves: dict, ax, ylabel: str, title: str):
    """curves: label -> accuracy per loop (1D), one line each against test-time loops."""
    for label, acc in curves.items():
        ax.plot(np.arange(1, len(acc) + 1), acc, label=label)
    ax.set_xlabel("test-time loops")
    ax.set_ylabel(ylabel)
    ax.set_ylim(-0.02, 1.02)
    integer_ticks(ax, x=True)
    ax.set_title(title)
    return ax


def accuracy_per_iteration(curves_by_seed: dict, budgets: dict):
    """08: deep-thinking's accuracy-per-iteration curves, one panel per seed. curves_by_seed: seed ->
    {n: head.LoopAccuracy} (its whole-word accuracy per loop is drawn); budgets: seed -> T_train
    (dotted: the training budget)."""
    fig, axes = plt.subplots(1, len(curves_by_seed), figsize=(6 * len(curves_by_seed), 4), squeeze=False,
                             layout="constrained")
    for ax, (seed, curves) in zip(axes[0], curves_by_seed.items()):
        accuracy_vs_loops({f"n = {n}": acc.seq_acc for n, acc in curves.items()}, ax, ylabel=WHOLE_WORD,
                          title=f"seed {seed}: {WHOLE_WORD} per loop")
        ax.axvline(budgets[seed], color="gray", ls=":", lw=0.9, label=f"T_train = {budgets[seed]} (training budget)")
        ax.legend(fontsize=7, loc="upper right", title="test length", title_fontsize=7)
    return fig
