"""02's figures: tau against n and the damage cones of the free-trained models."""
from __future__ import annotations

import matplotlib.pyplot as plt

from ...plots import integer_ticks, loop_position_map


def free_and_cones(free: dict):
    """02: tau at the last position against n for each free model, and each model's damage map from
    a patch at (position 1, loop 1); free: config -> `read.free_reading(...)`."""
    fig, axes = plt.subplots(1, 1 + len(free), figsize=(3.9 * (1 + len(free)) + 1.0, 3.7), layout="constrained")
    for cfg, f in free.items():
        axes[0].plot(f["against_n"].ns, f["against_n"].last, "o-", label=cfg.contract)
    axes[0].set(xlabel="input length n", ylabel="tau at the last position (loops)", title="free models: tau against n")
    integer_ticks(axes[0], x=True, y=True)
    axes[0].legend(fontsize=7)
    for ax, (cfg, f) in zip(axes[1:], free.items()):
        c = f["cones"]
        loop_position_map(c.flip[c.grid.index((1, 1))], ax=ax, title=f"damage from a patch at (pos 1, loop 1)\n{cfg.contract}",
                          colorbar=False)
    fig.colorbar(axes[1].images[0], ax=axes[1:].tolist(), fraction=0.03, pad=0.01).set_label(
        "damage: fraction of inputs whose\noutput at that position changes", fontsize=8)
    return fig
