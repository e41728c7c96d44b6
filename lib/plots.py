"""One function per figure kind; notebooks call them. Every figure can be saved under
outputs/figures/<name>.png and .svg with `save`, the stable names the claims ledger links to."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .paths import artifacts_dir


def save(fig, name: str, profile: str = "quick") -> None:
    """Write `fig` as outputs/figures/<name>.png and .svg for the quick profile (the committed figures
    REPORT.md links to); a figure of any other profile (or of non-default parameters) goes to
    outputs/figures/<profile>/, which is not tracked, so it never overwrites a committed one."""
    d = artifacts_dir("figures") / ("" if profile == "quick" else profile)
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
    for name, v in (("T", T), ("n", n), ("count", count)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{name}: must be an integer >= 1, got {v!r}")
    if not run.model.tied and T > run.model.cfg.n_blocks:     # an untied model has no loops beyond its depth
        raise ValueError(f"T: an untied model has exactly {run.model.cfg.n_blocks} blocks; allowed: 1..{run.model.cfg.n_blocks}, got {T}")
    acc = accuracy_by_loops(run.model, c.task_obj(), n, T, count=count, seed=seed, streaming=c.streaming)
    fig = fig or plt.figure(figsize=(10, 3.8))
    fig.clear()
    ax1, ax2 = fig.subplots(1, 2)
    loop_position_map(acc.position_acc, ax=ax1, T_mark=c.T_train if c.T_train < T else None,
                      title=f"{c.task} {c.schedule}{'' if c.tied else ' untied'}{'' if c.pos == 'none' else ' ' + c.pos}, "
                            f"trained n={c.n_train} T={c.T_train}: test n={n}, T={T}")
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
               f"sequence accuracy {acc.seq_acc[-1]:.2f}; longest prefix {prefix[best]} at loop {best + 1}")
    return fig, readout


def annealing(rows: list[dict], start_demand: float):
    """06: v-hat against demand along each seed's annealing chain (dashed: the law's v = n/T), and the
    solved fraction of annealed against from-scratch runs of the same contracts."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for seed in sorted({r["seed"] for r in rows}):
        rs = [r for r in rows if r["seed"] == seed and not r.get("branch")]
        line, = axes[0].plot([start_demand] + [r["demand"] for r in rs], [rs[0]["v_before"]] + [r["v_after"] for r in rs],
                             "o-", label=f"annealed, seed {seed}")
        for b in (r for r in rows if r["seed"] == seed and r.get("branch")):   # the branch: from its parent, dotted
            axes[0].plot([b["demand_before"], b["demand"]], [b["v_before"], b["v_after"]], "s:", color=line.get_color())
        by_demand = sorted((r for r in rows if r["seed"] == seed), key=lambda r: r["demand"])
        axes[1].plot([r["demand"] for r in by_demand], [r["scratch_acc"] for r in by_demand], "x--", label=f"scratch, seed {seed}")
        axes[1].plot([r["demand"] for r in by_demand], [r["acc"] for r in by_demand], "o-", label=f"annealed, seed {seed}")
    grid = np.array(sorted({r["demand"] for r in rows} | {start_demand}))
    axes[0].plot(grid, grid, "k--", lw=0.8, label="v = n/T")
    axes[0].set(xlabel="demand n/T", ylabel="v-hat (tau)", title="speed re-priced by annealing")
    axes[1].set(xlabel="demand n/T", ylabel="solved fraction (in distribution)", ylim=(-0.02, 1.02),
                title="annealed vs from scratch")
    for ax in axes:
        ax.legend(fontsize=6)
    fig.tight_layout()
    return fig


def contest_scatter(table: dict, metrics, threshold: float):
    """07: each chosen metric against OOD whole-word accuracy, one row per contest (dotted: the
    threshold for 'generalizes')."""
    fig, axes = plt.subplots(len(table), len(metrics), figsize=(3.25 * len(metrics), 3.1 * len(table)), squeeze=False)
    for row_axes, (name, rows) in zip(axes, table.items()):
        for ax, m in zip(row_axes, metrics):
            ax.scatter([r[m] for r in rows], [r["ood_acc"] for r in rows], s=14)
            ax.axhline(threshold, color="gray", ls=":", lw=0.8)
            ax.set_xlabel(m)
            ax.set_title(f"{name}", fontsize=8)
        row_axes[0].set_ylabel("OOD whole-word accuracy")
    fig.tight_layout()
    return fig


def accuracy_per_iteration(curves_by_seed: dict, budgets: dict):
    """08: deep-thinking's accuracy-per-iteration curves, one panel per seed. curves_by_seed: seed ->
    {n: head.LoopAccuracy} (its whole-word accuracy per loop is drawn); budgets: seed -> T_train
    (dotted: the training budget)."""
    fig, axes = plt.subplots(1, len(curves_by_seed), figsize=(6 * len(curves_by_seed), 4), squeeze=False)
    for ax, (seed, curves) in zip(axes[0], curves_by_seed.items()):
        accuracy_vs_loops({f"n = {n}": acc.seq_acc for n, acc in curves.items()}, ax=ax, ylabel="whole-word accuracy",
                          title=f"seed {seed}: accuracy per iteration")
        ax.axvline(budgets[seed], color="gray", ls=":", lw=0.8)
    fig.tight_layout()
    return fig


def fixed_point_grid(rows: dict, label):
    """09: per run of Paper B's grid, the relative step per loop (reachability; dotted: the 1e-3 tolerance)
    and the best whole-word accuracy at each test length (extrapolation). rows: fixedpoint.stability_rows;
    label: configuration key -> its name."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for r in rows.values():
        axes[0].semilogy(np.arange(1, len(r["reach"].step) + 1), np.maximum(r["reach"].step, 1e-9),
                         label=label(r["key"]))
        axes[1].plot(list(r["extrap"]), list(r["extrap"].values()), "o-", label=label(r["key"]))
    axes[0].axhline(1e-3, color="gray", ls=":", lw=0.8)
    axes[0].set_xlabel("loop t")
    axes[0].set_ylabel("relative step ||h(t+1) - h(t)|| / ||h(t)||")
    axes[0].set_title("reachability")
    axes[1].set_xlabel("test length n")
    axes[1].set_ylabel("best whole-word accuracy over loops")
    axes[1].set_ylim(-0.02, 1.02)
    axes[1].set_title("extrapolation")
    for ax in axes:
        ax.legend(fontsize=6)
    fig.tight_layout()
    return fig


def sudoku_loops(sudoku_rows: dict):
    """09: blank-cell and whole-board accuracy per loop, external (solid) against internal (dashed)
    recall at each difficulty (dotted: the training loops). sudoku_rows: fixedpoint.sudoku_readings."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6), sharex=True)
    for (recall, seed, givens), r in sudoku_rows.items():
        ls = {"external": "-", "internal": "--"}[recall]
        loops = np.arange(1, len(r["cell"]) + 1)
        axes[0].plot(loops, r["cell"], ls, label=f"{recall}, {givens} givens")
        axes[1].plot(loops, r["board"], ls, label=f"{recall}, {givens} givens")
    for ax, what in zip(axes, ("blank-cell accuracy", "whole-board accuracy")):
        ax.axvline(r["T"], color="gray", ls=":", lw=0.8)
        ax.set_xlabel("loop t")
        ax.set_ylabel(what)
        ax.set_ylim(-0.02, 1.02)
        ax.legend(fontsize=6)
    fig.tight_layout()
    return fig


def tau_against_n(rows: list[dict]):
    """04: tau at the last position against n per run (legend: its scaling class), and tau against
    position at the training length. rows: `architecture.prior_rows`."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for r in rows:
        label = f"{r['name']} (seed {r['seed']})"
        if r["ns"]:
            axes[0].plot(r["ns"], r["last"], "o-", label=f"{label}: {r['fit'].cls if r['fit'] else '?'}")
        axes[1].plot(np.arange(1, r["config"].n_train + 1), r["tau"].tau_curve, "o-", label=label)
    axes[0].set(xlabel="input length n", ylabel="tau at the last position (loops / blocks)", title="tau against n")
    axes[1].set(xlabel="position i", ylabel="tau(n_train, i)",
                title=f"tau against position at n = {rows[0]['config'].n_train}")
    for ax in axes:
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def frontier_maps(rows: list[dict]):
    """04: accuracy per loop (block) and position at each run's contract, side by side."""
    fig, axes = plt.subplots(1, len(rows), figsize=(3.6 * len(rows), 3.4))
    for ax, r in zip(np.atleast_1d(axes), rows):
        c = r["config"]
        loop_position_map(r["tau"].position_acc_all, ax=ax, title=f"{r['name']}\nn={c.n_train}, T={c.T_train}")
    fig.tight_layout()
    return fig


def length_extrapolation(rows: list[dict]):
    """04: whole-word accuracy against test length per run (dotted: the training length)."""
    fig, ax = plt.subplots(figsize=(6, 4))
    for r in rows:
        accs = r["extrapolation"]
        ax.plot(list(accs), list(accs.values()), "o-", label=f"{r['name']} (seed {r['seed']})")
    ax.axvline(rows[0]["config"].n_train + 0.5, color="gray", ls=":", lw=0.8)
    ax.set(xlabel="test length n (dotted: training length)", ylabel="whole-word accuracy", ylim=(-0.02, 1.02),
           title="length extrapolation")
    ax.legend(fontsize=7)
    return fig


# 05's wall figures draw a curriculum by its line: solid operator-first, dashed joint.
_CURRICULUM_LS = {"operator_first": "-", "joint": "--"}


def wall_loss(rows: dict):
    """05: training loss against step per run, one panel per group (colour: seed; dashed: joint, solid:
    operator-first; dotted: the loss of a model that knows only position 1, at the full length).
    rows: `deadlock.wall_rows`."""
    groups = sorted({g for g, _, _ in rows})
    fig, axes = plt.subplots(1, len(groups), figsize=(5.5 * len(groups), 3.8), squeeze=False)
    for ax, group in zip(axes[0], groups):
        mine = {k: r for k, r in rows.items() if k[0] == group}
        for (_, curriculum, seed), r in mine.items():
            ax.plot([e["step"] for e in r["log"]], [e["loss"] for e in r["log"]],
                    ls=_CURRICULUM_LS[curriculum], color=f"C{seed % 10}",
                    label=f"{curriculum} seed {seed}")
        ax.axhline(next(iter(mine.values()))["entropy_at_n_train"], color="k", ls=":", lw=0.8)
        ax.set(xlabel="training step", ylabel="training loss (final loop)",
               title=f"{group}: joint (dashed) vs operator-first (solid)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


# 05's wall figures hold up to 18 runs: the default colour cycle repeats after 10, so a run's style is
# read from what it is instead: colour = group (or streaming pair), line = curriculum, marker = seed.
_SEED_MARKERS = "os^Dv<>p"


def _wall_style(groups: list, group, curriculum: str, seed: int) -> dict:
    return dict(color=f"C{groups.index(group) % 10}", ls=_CURRICULUM_LS[curriculum],
                marker=_SEED_MARKERS[seed % len(_SEED_MARKERS)], ms=4)


def _wall_legend(ax, groups: list, seeds: list) -> None:
    """A legend of the three keys (group colours, curriculum lines, seed markers), not of every run."""
    from matplotlib.lines import Line2D
    handles = ([Line2D([], [], color=f"C{i % 10}", label=g) for i, g in enumerate(groups)]
               + [Line2D([], [], color="k", ls=ls, label=c.replace("_", "-")) for c, ls in _CURRICULUM_LS.items()]
               + [Line2D([], [], color="k", ls="", marker=_SEED_MARKERS[s % len(_SEED_MARKERS)], label=f"seed {s}")
                  for s in seeds])
    ax.legend(handles=handles, fontsize=7)


def wall_accuracy(rows: dict, long_ns):
    """05: per-position accuracy at the training length, and whole-word accuracy against length
    (colour: group, solid: operator-first, dashed: joint, marker: seed)."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    groups = list(dict.fromkeys(g for g, _, _ in rows))
    for (group, curriculum, seed), r in rows.items():
        style = dict(_wall_style(groups, group, curriculum, seed), label=f"{group} {curriculum} s{seed}")
        axes[0].plot(np.arange(1, len(r["pos_acc"]) + 1), r["pos_acc"], **style)
        axes[1].plot([r["config"].n_train] + list(long_ns), [r["seq_acc"]] + [r["ood"][n] for n in long_ns], **style)
    axes[0].set(xlabel="position i", ylabel="accuracy after T_train loops", title="per-position accuracy at n_train")
    axes[1].set(xlabel="test length n (loops T_train · n / n_train)", ylabel="whole-word accuracy",
                title="accuracy against length")
    for ax in axes:
        ax.set_ylim(-0.02, 1.02)
    _wall_legend(axes[1], groups, sorted({s for _, _, s in rows}))
    fig.tight_layout()
    return fig


def streaming_pairs(pairs: dict):
    """05: whole-word accuracy against length, free training (solid, circles) against the streaming
    schedule (dashed, squares) on the same task, one colour a pair. pairs: `deadlock.streaming_pairs`
    (keyed by task) or `deadlock.seed_pairs` (keyed by task, curriculum and seed)."""
    fig, ax = plt.subplots(figsize=(6, 3.8))
    for i, (key, out) in enumerate(pairs.items()):
        name = " ".join(map(str, key)) if isinstance(key, tuple) else key
        for kind, accs in out.items():
            ax.plot(list(accs), list(accs.values()), "o-" if kind == "free" else "s--", color=f"C{i % 10}",
                    label=f"{name} {kind}")
    ax.set(xlabel="test length n", ylabel="whole-word accuracy", ylim=(-0.02, 1.02),
           title="free training (solid) vs imposed seriality (streaming, dashed)")
    ax.legend(fontsize=7)
    return fig


def rescue(rescued: dict, n_long: int):
    """03: at length n_long, late-position accuracy (solid) and whole-word accuracy (dashed) against
    test-time loops, with the halting rule's T* (dotted); rescued: config -> budget.rescue(...)."""
    fig, ax = plt.subplots(figsize=(6.5, 4))
    label = lambda c: f"{c.contract} s{c.seed}"                                   # noqa: E731
    accuracy_vs_loops({label(c): x["late"] for c, x in rescued.items()}, ax=ax,
                      dashed={label(c): x["acc"].seq_acc for c, x in rescued.items()},
                      marks={label(c): x["T_star"] for c, x in rescued.items() if x["T_star"]}, ylabel="accuracy",
                      title=f"n = {n_long}: late positions (solid), whole words (dashed), T* (dotted)")
    return fig


def metrics_vs_ood(rows: list[dict], corr: dict):
    """01: each tail metric against OOD accuracy over the models, titled with Spearman's rho."""
    metrics = list(corr)
    fig, axes = plt.subplots(1, len(metrics), figsize=(3.2 * len(metrics), 3), sharey=True)
    for ax, m in zip(np.atleast_1d(axes), metrics):
        ax.scatter([r[m] for r in rows], [r["ood_acc"] for r in rows])
        ax.set_xlabel(m)
        ax.set_title(f"rho {corr[m].value:+.2f}" if np.isfinite(corr[m].value) else "rho undefined (constant)")
    np.atleast_1d(axes)[0].set_ylabel("OOD sequence accuracy")
    return fig


def free_and_cones(free: dict):
    """02: tau at the last position against n for each free model, and each model's damage map from
    a patch at (position 1, loop 1); free: config -> calibration.free_reading(...)."""
    fig, axes = plt.subplots(1, 1 + len(free), figsize=(4.2 * (1 + len(free)), 3.6))
    for cfg, f in free.items():
        axes[0].plot(f["against_n"].ns, f["against_n"].last, "o-", label=cfg.contract)
    axes[0].set(xlabel="input length n", ylabel="tau at the last position", title="free models: tau against n")
    axes[0].legend(fontsize=7)
    for ax, (cfg, f) in zip(axes[1:], free.items()):
        c = f["cones"]
        loop_position_map(c.flip[c.grid.index((1, 1))], ax=ax, title=f"damage from (pos 1, loop 1)\n{cfg.contract}")
    return fig
