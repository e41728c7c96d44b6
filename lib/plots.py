"""One function per figure kind; notebooks call them. Every figure can be saved under
outputs/figures/<name>.png and .svg with `save`, the stable names the claims ledger links to."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .paths import artifacts_dir


def save(fig, name: str) -> None:
    d = artifacts_dir("figures")
    d.mkdir(parents=True, exist_ok=True)
    for ext in ("png", "svg"):
        # fixed metadata and SVG ids, so re-running a notebook does not change the files' bytes needlessly
        with plt.rc_context({"svg.hashsalt": name}):
            fig.savefig(d / f"{name}.{ext}", dpi=110, bbox_inches="tight",
                        metadata={"Date": None} if ext == "svg" else {"Software": None})


def tau_curves(curves: dict, ax=None, title="tau(n, i) per contract"):
    """curves: label -> TauResult. tau against position, with the contract's loop budget marked."""
    ax = ax or plt.gca()
    for label, r in curves.items():
        pos = np.arange(1, r.n + 1)
        line, = ax.plot(pos, r.tau_curve, "o-", label=f"{label}: v={r.v_tau.v:.2f}")
        ax.axhline(r.T, color=line.get_color(), ls=":", lw=0.8)
    ax.set_xlabel("position i")
    ax.set_ylabel("tau (loop at which position i settles)")
    ax.set_title(title)
    ax.legend(fontsize=7)
    return ax


def frontiers(curves: dict, ax=None, title="solved-prefix frontier"):
    ax = ax or plt.gca()
    for label, r in curves.items():
        ax.step(np.arange(1, r.T + 1), r.frontier, where="post", label=f"{label}: v={r.v_frontier:.2f}")
    ax.set_xlabel("loop t")
    ax.set_ylabel("frontier F(t) (positions)")
    ax.set_title(title)
    ax.legend(fontsize=7)
    return ax


def speed_vs_demand(demands, speeds, fit=None, ax=None, learned=None):
    ax = ax or plt.gca()
    demands, speeds = np.asarray(demands, float), np.asarray(speeds, float)
    learned = np.ones(len(demands), bool) if learned is None else np.asarray(learned, bool)
    ax.loglog(demands[learned], speeds[learned], "o", label="measured (learned)")
    if (~learned).any():
        ax.loglog(demands[~learned], np.where(np.isfinite(speeds[~learned]), speeds[~learned], np.nan),
                  "x", color="gray", label="not learned (speed not meaningful, not fitted)")
    grid = np.geomspace(demands.min() / 1.5, demands.max() * 1.5, 50)
    ax.loglog(grid, grid, "k--", lw=0.8, label="budget law v = n/T")
    if fit is not None:
        ax.loglog(grid, np.exp(fit.intercept) * grid ** fit.exponent, "-", lw=1,
                  label=f"fit: exponent {fit.exponent:.2f} ± {fit.stderr:.2f}, R² {fit.r2:.2f}")
    from matplotlib.ticker import NullFormatter, ScalarFormatter
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(ScalarFormatter())
        axis.set_minor_formatter(NullFormatter())
    ax.set_xticks(sorted(set(demands.tolist())))
    ax.set_xlabel("demand n_train / T_train")
    ax.set_ylabel("v-hat (positions per loop)")
    ax.legend(fontsize=7)
    return ax


def accuracy_vs_loops(curves: dict, ax=None, marks: dict | None = None, dashed: dict | None = None,
                      ylabel="accuracy", title="accuracy against test-time loops"):
    """curves: label -> accuracy per loop (1D); dashed: label -> a second curve drawn dashed in the
    same colour; marks: label -> loop to mark (e.g. the halting rule's T*)."""
    ax = ax or plt.gca()
    for label, acc in curves.items():
        line, = ax.plot(np.arange(1, len(acc) + 1), acc, label=label)
        if dashed and label in dashed:
            ax.plot(np.arange(1, len(dashed[label]) + 1), dashed[label], ls="--", lw=0.8, color=line.get_color())
        if marks and label in marks:
            ax.axvline(marks[label], color=line.get_color(), ls=":", lw=0.8)
    ax.set_xlabel("test-time loops")
    ax.set_ylabel(ylabel)
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(title)
    ax.legend(fontsize=7)
    return ax


def loop_position_map(position_acc, ax=None, title="accuracy per loop and position", T_mark=None):
    """Heat map of accuracy (loops down, positions across): the computation frontier as an edge."""
    ax = ax or plt.gca()
    T, n = position_acc.shape
    im = ax.imshow(position_acc, aspect="auto", origin="lower", vmin=0, vmax=1, cmap="viridis",
                   extent=(0.5, n + 0.5, 0.5, T + 0.5))
    if T_mark is not None:
        ax.axhline(T_mark + 0.5, color="w", ls="--", lw=0.8)
    ax.set_xlabel("position i")
    ax.set_ylabel("loop t")
    ax.set_title(title)
    plt.colorbar(im, ax=ax, fraction=0.046)
    return ax


def render_frontier(run, T: int, n: int, count: int = 256, seed: int = 0, fig=None):
    """The quickstart view of one cached run: accuracy per (loop, position) for T loops at length n,
    with the contract's budget marked, and sequence accuracy per loop. Pure: same inputs, same figure.
    Returns (fig, readout) where readout is a one-line text summary."""
    from .instruments.head import accuracy_by_loops
    c = run.config
    depth_note = ""
    if not run.model.tied and T > run.model.cfg.n_blocks:     # an untied model has no loops beyond its depth
        T, depth_note = run.model.cfg.n_blocks, f" (untied: T capped at its depth {run.model.cfg.n_blocks})"
    acc = accuracy_by_loops(run.model, c.task_obj(), n, T, count=count, seed=seed, streaming=c.streaming)
    fig = fig or plt.figure(figsize=(10, 3.8))
    fig.clear()
    ax1, ax2 = fig.subplots(1, 2)
    loop_position_map(acc.position_acc, ax=ax1, T_mark=c.T_train if c.T_train < T else None,
                      title=f"{c.task} {c.schedule}{'' if c.tied else ' untied'}{'' if c.pos == 'none' else ' ' + c.pos}, trained n={c.n_train} T={c.T_train}: test n={n}, T={T}")
    ax2.plot(np.arange(1, T + 1), acc.seq_acc, "o-", ms=3)
    ax2.set_ylim(-0.02, 1.02)
    ax2.set_xlabel("loop t")
    ax2.set_ylabel("sequence accuracy")
    ax2.set_title("whole-word accuracy per loop")
    fig.tight_layout()
    ok = acc.position_acc >= 0.9                                   # (T, n)
    prefix = np.where(ok.all(1), n, np.argmin(ok, axis=1))          # solved prefix after each loop
    best = int(prefix.argmax())
    readout = (f"n={n} T={T}: solved prefix after T loops {prefix[-1]}/{n} positions (>= 90 % correct), "
               f"sequence accuracy {acc.seq_acc[-1]:.2f}; longest prefix {prefix[best]} at loop {best + 1}{depth_note}")
    return fig, readout
