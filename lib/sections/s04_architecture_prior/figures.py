"""04's figures: tau against n and position per run, the frontier maps at each contract, length
extrapolation, and the C04-architecture study's probe tau against n."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ...plots import ACCURACY_COLOUR, WHOLE_WORD, integer_ticks, loop_position_map


def tau_against_n(rows: list[dict]):
    """04: tau at the last position against n per run (legend: its scaling class), and tau against
    position at the training length. rows: `read.prior_rows`."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
    for r in rows:
        label = f"{r['name']} (seed {r['seed']})"
        if r["ns"]:
            axes[0].plot(r["ns"], r["last"], "o-", label=f"{label}: {r['fit'].cls if r['fit'] else '?'}")
        axes[1].plot(np.arange(1, r["config"].n_train + 1), r["tau"].tau_curve, "o-", label=label)
    axes[0].set(xlabel="input length n", ylabel="tau at the last position\n(loops; blocks for an untied model)",
                title="tau against n (legend: scaling class)")
    axes[1].set(xlabel="position i", ylabel="tau: loop (block) at which position i settles",
                title=f"tau against position at n = {rows[0]['config'].n_train}")
    for ax in axes:
        integer_ticks(ax, x=True, y=True)
        ax.legend(fontsize=7)
    return fig


def frontier_maps(rows: list[dict]):
    """04: accuracy per loop (block) and position at each run's contract, side by side, one colour bar."""
    fig, axes = plt.subplots(1, len(rows), figsize=(3.4 * len(rows) + 1.2, 3.4), layout="constrained")
    axes = np.atleast_1d(axes)
    for ax, r in zip(axes, rows):
        c = r["config"]
        loop_position_map(r["tau"].position_acc_all, ax=ax, title=f"{r['name']}\nn={c.n_train}, T={c.T_train}",
                          colorbar=False, loop_label="loop t" if c.tied else "block t (untied)")
    fig.colorbar(axes[0].images[0], ax=axes.tolist(), fraction=0.046 / len(rows) * 2).set_label(ACCURACY_COLOUR, fontsize=8)
    return fig


def length_extrapolation(rows: list[dict]):
    """04: whole-word accuracy against test length per run (dotted: the training length)."""
    fig, ax = plt.subplots(figsize=(6, 4))
    for r in rows:
        accs = r["extrapolation"]
        ax.plot(list(accs), list(accs.values()), "o-", label=f"{r['name']} (seed {r['seed']})")
    n_train = rows[0]["config"].n_train
    ax.axvline(n_train + 0.5, color="gray", ls=":", lw=0.9, label=f"training length n_train = {n_train}")
    ax.set(xlabel="test length n", ylabel=WHOLE_WORD, ylim=(-0.02, 1.02), title="length extrapolation")
    integer_ticks(ax, x=True)
    ax.legend(fontsize=7)
    return fig


def probe_tau(rows, families, ceilings: dict | None = None):
    """Probe tau at the last position against n, one panel per probed family: a line per seed and decoder
    (linear probe solid, MLP probe dashed, readout dotted; legend: its scaling class). None without a
    probed row. families: the probed families, in panel order; ceilings: family -> its last block read,
    drawn where tau reaches it (tau cannot pass it)."""
    fams = [f for f in families if any(r["family"] == f and r["decoders"] for r in rows)]
    if not fams:
        return None
    fig, axes = plt.subplots(1, len(fams), figsize=(4.2 * len(fams), 3.6), layout="constrained", squeeze=False)
    styles = {"linear": "-", "mlp": "--", "readout": ":"}
    for ax, f in zip(axes[0], fams):
        for i, r in enumerate(r for r in rows if r["family"] == f and r["decoders"]):
            for d, s in r["decoders"].items():
                if s["ns"]:
                    ax.plot(s["ns"], s["tau_last"], styles[d], marker="os^v"[i % 4], ms=3, color=f"C{i}",
                            label=f"seed {r['seed']} {d}: {s['class'] or '?'}" + ("" if r["learned"] else " (not learned)"))
        if (ceilings or {}).get(f) is not None:
            ax.axhline(ceilings[f], color="0.5", lw=0.8, ls="-.", label=f"last block read ({ceilings[f]})")
        ax.set(title=f, xlabel="input length n", ylabel="tau(last), blocks (loops for tied)")
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.legend(fontsize=6)
    return fig
