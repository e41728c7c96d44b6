"""03's figures: the frontier per contract, speed against demand with the law's fit, and the rescue by
test-time loops."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import NullFormatter, ScalarFormatter

from ...plots import WHOLE_WORD, integer_ticks, legend_key, group_styles, group_legend


def frontiers(curves: dict, ax=None, title="solved-prefix frontier"):
    """curves as `plots.tau_curves`: the solved prefix F(t) against loops, a step per loop."""
    ax = ax or plt.gca()
    grouped, groups, members, style = group_styles(curves)
    speeds = {g: [] for g in groups}
    for key, r in curves.items():
        g, colour, marker = style[key]
        loops = np.arange(1, r.T + 1)
        ax.step(loops, r.frontier, where="post", color=colour, lw=1.2)
        ax.plot(loops, r.frontier, ls="", marker=marker, ms=3.5, color=colour)
        speeds[g].append((key, f"v = {r.v_frontier:.2f}" if np.isfinite(r.v_frontier) else "no speed"))
    ax.set_xlabel("loop t")
    ax.set_ylabel("frontier F(t): solved prefix (positions)")
    integer_ticks(ax, x=True, y=True)
    ax.set_title(title)
    group_legend(ax, grouped, groups, members, style, speeds, " positions/loop")
    return ax


def speed_vs_demand(demands, speeds, fit=None, ax=None, learned=None):
    ax = ax or plt.gca()
    demands, speeds = np.asarray(demands, float), np.asarray(speeds, float)
    learned = np.ones(len(demands), bool) if learned is None else np.asarray(learned, bool)
    ax.loglog(demands[learned], speeds[learned], "o", label="measured (learned runs)")
    if (~learned).any():
        drawn = np.isfinite(speeds[~learned])
        k = int((~learned).sum())
        note = "" if drawn.all() else (", no speed to draw" if not drawn.any() else f", {int((~drawn).sum())} without a speed")
        ax.loglog(demands[~learned], np.where(drawn, speeds[~learned], np.nan),
                  "x", color="gray", ms=8, mew=1.5, zorder=3, label=f"not learned ({k} run{'s' if k > 1 else ''}{note}; not fitted)")
    grid = np.geomspace(demands.min() / 1.5, demands.max() * 1.5, 50)
    ax.loglog(grid, grid, "k--", lw=0.8, label="budget law v = n_train / T_train")
    if fit is not None:
        ax.loglog(grid, np.exp(fit.intercept) * grid ** fit.exponent, "-", lw=1,
                  label=f"fit: exponent {fit.exponent:.2f} ± {fit.stderr:.2f}, R² {fit.r2:.2f}")
    ticks = sorted(set(demands.tolist()))
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(ScalarFormatter())
        axis.set_minor_formatter(NullFormatter())
    ax.set_xticks(ticks)
    ax.set_yticks(ticks)                # the law reads v = demand: the same ticks on both axes
    ax.set_xlabel("demand n_train / T_train (positions per loop asked)")
    ax.set_ylabel("v-hat from tau (positions per loop)")
    ax.legend(fontsize=7, loc="upper left")
    return ax


def confirm_speeds(readings: list[dict], fitted: list[dict], results: dict, ax=None):
    """C03-budget: each run's speed against demand by both estimators, with each estimator's least-squares
    fit on the fitted runs (`confirm.fitted_runs`) and its seed interval; runs left out of the fit in grey."""
    from ...instruments.head import budget_exponent
    ax = ax or plt.gca()
    kept = {id(x) for x in fitted}
    demands = np.array([x["demand"] for x in readings])
    grid = np.geomspace(demands.min() / 1.3, demands.max() * 1.3, 50)
    ax.loglog(grid, grid, "k--", lw=0.8, label="budget law v = demand")
    for key, name, marker, colour, exp_key in (("v_tau", "tau (primary)", "o", "C0", "exponent"),
                                               ("v_frontier", "frontier", "^", "C1", "exponent_frontier")):
        d = np.array([x["demand"] for x in fitted])
        v = np.array([x[key] for x in fitted])
        ax.loglog(d, v, marker, ls="", color=colour, ms=5, mfc="none" if marker == "^" else colour)
        fit = budget_exponent(d, v)
        ci = results.get(f"{exp_key}_interval")
        ci_text = "" if ci is None else f", seeds [{ci[0]:.2f}, {ci[1]:.2f}]"
        ax.loglog(grid, np.exp(fit.intercept) * grid ** fit.exponent, "-", color=colour, lw=1,
                  label=f"{name}: exponent {fit.exponent:.2f}{ci_text}")
    left = [x for x in readings if id(x) not in kept]
    if left:
        ax.loglog([x["demand"] for x in left], [x["v_tau"] for x in left], "x", color="gray", ms=7, mew=1.5,
                  label=f"left out of the fit ({len(left)}: not learned or readout invalid), v(tau)")
    ticks = sorted(set(demands.round(4).tolist()))
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(ScalarFormatter())
        axis.set_minor_formatter(NullFormatter())
    ax.set_xticks(ticks)
    ax.set_xticklabels([f"{t:.2g}" for t in ticks])
    ax.set_yticks(ticks)
    ax.set_yticklabels([f"{t:.2g}" for t in ticks])
    ax.set_xlabel("demand n_train / T_train")
    ax.set_ylabel("v-hat (positions per loop)")
    ax.set_title("C03-budget: reserved seeds 120-122, paper b = 0.98 ± 0.04", fontsize=9)
    ax.legend(fontsize=7, loc="upper left")
    return ax


def rescue(rescued: dict, n_long: int):
    """03: at length n_long, late-position accuracy (solid) and whole-word accuracy (dashed) against
    test-time loops, with the halting rule's T* (dotted); one panel a contract, one colour a seed.
    rescued: config -> read.rescue(...)."""
    contracts = sorted({c.contract: c.demand for c in rescued}.items(), key=lambda kv: kv[1])
    seeds = sorted({c.seed for c in rescued})
    if not contracts:                   # no contract learned: nothing to rescue, say so rather than fail
        fig, ax = plt.subplots(figsize=(5, 2))
        ax.text(0.5, 0.5, f"rescue at n = {n_long}: no run learned its contract", ha="center", va="center")
        ax.set_axis_off()
        return fig
    fig, axes = plt.subplots(1, len(contracts), figsize=(3.9 * len(contracts) + 1.8, 3.8), squeeze=False,
                             sharey=True, layout="constrained")
    for ax, (contract, _) in zip(axes[0], contracts):
        for c, x in rescued.items():
            if c.contract != contract:
                continue
            colour = f"C{seeds.index(c.seed) % 10}"
            ax.plot(np.arange(1, len(x["late"]) + 1), x["late"], color=colour)
            ax.plot(np.arange(1, len(x["acc"].seq_acc) + 1), x["acc"].seq_acc, ls="--", lw=0.9, color=colour)
            if x["T_star"]:
                ax.axvline(x["T_star"], color=colour, ls=":", lw=0.9)
        ax.set(xlabel="test-time loops", title=contract, ylim=(-0.02, 1.02))
        integer_ticks(ax, x=True)
    axes[0][0].set_ylabel("accuracy")
    fig.suptitle(f"rescue at n = {n_long}: accuracy against test-time loops", fontsize=11)
    handles = ([legend_key(f"seed {s}", color=f"C{i % 10}", lw=3) for i, s in enumerate(seeds)]
               + [legend_key("late positions (i > n_train):\nmean per-position accuracy", ls="-"),
                  legend_key(WHOLE_WORD, ls="--", lw=0.9),
                  legend_key("T* = ceil(n / v-hat):\nthe halting rule", ls=":", lw=0.9)])
    fig.legend(handles=handles, fontsize=7, loc="outside right upper")
    return fig
