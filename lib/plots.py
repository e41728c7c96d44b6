"""One function per figure kind; notebooks call them. Every figure can be saved under
outputs/figures/<name>.png and .svg with `save`, the stable names the claims ledger links to.

Conventions a reader can rely on in every figure: axes say what they measure in words, with units;
loop, position and length axes carry integer ticks; every reference line (a budget, a threshold, a
law) is named in a legend or next to it; a colour bar says what its colour counts; a figure of many
runs keys them by colour, line style and marker (one legend entry a key, not one a line), and its
legend sits outside the data."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator, NullFormatter, ScalarFormatter

from .paths import artifacts_dir

# what the colour of an accuracy map counts
ACCURACY_COLOUR = "accuracy\n(fraction of words right at that position)"
WHOLE_WORD = "whole-word accuracy"            # one name for "every position of the word right"
# a tau that moves by less than this many loops per position is flat: no serial speed to read
FLAT_SLOPE = 0.01
# markers for the members of a group (usually seeds), in order
_MARKERS = "os^Dv<>p"
# the tail and head metrics of notebooks 01 and 07, in words with their units
METRIC_LABELS = {
    "skip1": "skip-1 preservation\n(fraction of outputs unchanged)",
    "jac_align": "Jacobian alignment\n(mean cos(J_t u, J_t+1 u))",
    "cosine": "cross-step cosine\n(mean cos(h_t, h_t+1))",
    "cka": "cross-step CKA\n(linear CKA of h_t, h_t+1)",
    "aa": "asymptotic alignment\n(cos of end states from two starts)",
    "v_tau": "v-hat from tau\n(positions per loop)",
    "v_frontier": "v-hat from the frontier\n(positions per loop)",
    "completion": "frontier completion\n(F(T_train) / n_train)",
    "tau_slope": "slope of tau against position\n(loops per position)",
    "linear_r2": "linearity of tau(last) against n\n(R² of the linear fit)",
    "price_gap": "price gap\n|log(v-hat / demand)|",
}


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


def _integer_ticks(ax, x: bool = False, y: bool = False) -> None:
    """Loops, positions and lengths are counts: no tick between two of them."""
    if x:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if y:
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))


def _legend_right(ax, handles=None, **kw):
    """A legend beside the axes, outside the data."""
    kw = dict(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0) | kw
    return ax.legend(handles=handles, **kw) if handles is not None else ax.legend(**kw)


def _key(label: str, color="k", ls="-", marker="", **kw) -> Line2D:
    """A legend entry for a key (a colour, a line style, a marker), not for a drawn line."""
    return Line2D([], [], color=color, ls=ls, marker=marker, label=label, **kw)


def _blank(label: str) -> Line2D:
    """A legend line of text only (a note)."""
    return Line2D([], [], ls="", label=label)


# a line whose every value is within this of 0 lies on the axis, under the others (drawn with markers of
# about 5 points, 0.02 of an accuracy axis is a few pixels): a figure's legend names such lines
NEAR_ZERO = 0.02


def near_zero(values) -> bool:
    """Whether every value lies within NEAR_ZERO of 0 (the line hides on the axis)."""
    return bool(np.all(np.abs(np.asarray(list(values), dtype=float)) <= NEAR_ZERO))


def speed_text(fit) -> str:
    """A speed from tau in words: 'flat' where tau does not grow with position (the speed would be
    1 / 0, no serial speed at all), else v in positions per loop."""
    if not np.isfinite(fit.slope):
        return "no speed (nothing solved)"
    if abs(fit.slope) < FLAT_SLOPE:
        return "flat"
    if not np.isfinite(fit.v):
        return "tau falls with position"
    return f"v = {fit.v:.2f}"


def _grouped(curves: dict):
    """curves keyed by label, or by (group, member): the groups (one colour each), the members (one
    marker each) and key -> (group, colour, marker)."""
    grouped = all(isinstance(k, tuple) and len(k) == 2 for k in curves)
    groups = list(dict.fromkeys(k[0] if grouped else k for k in curves))
    members = sorted({k[1] for k in curves}) if grouped else []
    style = {}
    for k in curves:
        g = k[0] if grouped else k
        marker = _MARKERS[members.index(k[1]) % len(_MARKERS)] if grouped else "o"
        style[k] = (g, f"C{groups.index(g) % 10}", marker)
    return grouped, groups, members, style


# the markers as text, so a legend entry can say which value belongs to which marker
_GLYPHS = {"o": "●", "s": "■", "^": "▲", "D": "◆", "v": "▼", "<": "◀", ">": "▶"}


def _group_legend(ax, grouped, groups, members, style, values: dict, unit: str, extra=(), member_name="seed"):
    """One entry a group (its colour, with its runs' values, each followed by its member's marker), one
    a member (its marker), then `extra`. values: group -> [(key, text)], a text 'v = 1.05' or a word."""
    handles = []
    for g in groups:
        colour = next(c for gg, c, _ in style.values() if gg == g)
        if grouped:
            parts = [f"{t[4:] if t.startswith('v = ') else t} {_GLYPHS.get(style[k][2], f'({member_name} {k[1]})')}"
                     for k, t in values[g]]
            prefix = "v = " if any(t.startswith("v = ") for _, t in values[g]) else ""
            label = f"{g}: {prefix}{', '.join(parts)}"
        else:
            text = values[g][0][1]
            label = f"{g}: {text}{unit if text.startswith('v = ') else ''}"
            label += " (tau the same at every position)" if text == "flat" else ""
        handles.append(_key(label, color=colour, marker="" if grouped else "o"))
    handles += [_key(f"{member_name} {m}", ls="", marker=_MARKERS[i % len(_MARKERS)], ms=5) for i, m in enumerate(members)]
    title = f"speed v in{unit}, each by its {member_name}'s marker" if grouped else None
    _legend_right(ax, handles + list(extra), title=title, title_fontsize=7)


def tau_curves(curves: dict, ax=None, title="tau(n, i) per contract"):
    """curves: label -> TauResult, or (group, seed) -> TauResult (a group, e.g. a contract, shares a colour
    and one legend entry listing its seeds' speeds; a seed has its marker). tau against position, with
    each run's loop budget dotted in its colour. A flat tau (no growth with position) reads 'flat'."""
    ax = ax or plt.gca()
    grouped, groups, members, style = _grouped(curves)
    speeds = {g: [] for g in groups}
    budgets = {}
    for key, r in curves.items():
        g, colour, marker = style[key]
        ax.plot(np.arange(1, r.n + 1), r.tau_curve, "-", marker=marker, ms=4, color=colour)
        budgets[(colour, r.T)] = True
        speeds[g].append((key, speed_text(r.v_tau)))
    for colour, T in budgets:
        ax.axhline(T, color=colour, ls=":", lw=0.9)
    ax.set_xlabel("position i")
    ax.set_ylabel("tau: loop at which position i settles")
    _integer_ticks(ax, x=True, y=True)
    ax.set_title(title)
    _group_legend(ax, grouped, groups, members, style, speeds, " positions/loop",
                  extra=[_key("loop budget T (dotted, in the run's colour)", color="gray", ls=":")])
    return ax


def frontiers(curves: dict, ax=None, title="solved-prefix frontier"):
    """curves as `tau_curves`: the solved prefix F(t) against loops, a step per loop."""
    ax = ax or plt.gca()
    grouped, groups, members, style = _grouped(curves)
    speeds = {g: [] for g in groups}
    for key, r in curves.items():
        g, colour, marker = style[key]
        loops = np.arange(1, r.T + 1)
        ax.step(loops, r.frontier, where="post", color=colour, lw=1.2)
        ax.plot(loops, r.frontier, ls="", marker=marker, ms=3.5, color=colour)
        speeds[g].append((key, f"v = {r.v_frontier:.2f}" if np.isfinite(r.v_frontier) else "no speed"))
    ax.set_xlabel("loop t")
    ax.set_ylabel("frontier F(t): solved prefix (positions)")
    _integer_ticks(ax, x=True, y=True)
    ax.set_title(title)
    _group_legend(ax, grouped, groups, members, style, speeds, " positions/loop")
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


def accuracy_vs_loops(curves: dict, ax=None, marks: dict | None = None, dashed: dict | None = None,
                      ylabel="accuracy", title="accuracy against test-time loops", legend=True):
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
    _integer_ticks(ax, x=True)
    ax.set_title(title)
    if legend:
        ax.legend(fontsize=7)
    return ax


def _mark_budget(ax, T_mark: int) -> None:
    """The training budget on an accuracy map (loops up): a dashed line, named at its left end."""
    ax.axhline(T_mark + 0.5, color="r", ls="--", lw=1.2)
    ax.text(0.02, T_mark + 0.5, f"T_train = {T_mark} (training budget)", transform=ax.get_yaxis_transform(),
            color="k", fontsize=7, ha="left", va="center",
            bbox=dict(boxstyle="round,pad=0.2", fc="white", ec="r", lw=0.8, alpha=0.9))


def loop_position_map(position_acc, ax=None, title="accuracy per loop and position", T_mark=None,
                      colour_label=ACCURACY_COLOUR, colorbar=True, loop_label="loop t"):
    """Heat map of accuracy (loops down, positions across): the computation frontier as an edge.
    T_mark: the training budget, dashed and named; colorbar False: the caller draws a shared one."""
    ax = ax or plt.gca()
    T, n = position_acc.shape
    im = ax.imshow(position_acc, aspect="auto", origin="lower", vmin=0, vmax=1, cmap="viridis",
                   extent=(0.5, n + 0.5, 0.5, T + 0.5))
    if T_mark is not None:
        _mark_budget(ax, T_mark)
    ax.set_xlabel("position i")
    ax.set_ylabel(loop_label)
    _integer_ticks(ax, x=True, y=True)
    ax.set_title(title)
    if colorbar:
        ax.figure.colorbar(im, ax=ax, fraction=0.046).set_label(colour_label, fontsize=8)
    return ax


def render_frontier(run, T: int, n: int, count: int = 256, seed: int = 0, fig=None):
    """The quickstart view of one cached run: accuracy per (loop, position) for T loops at length n,
    with the contract's budget marked, and whole-word accuracy per loop. Pure: same inputs, same figure.
    Returns (fig, readout) where readout is a one-line text summary."""
    from .instruments.head import accuracy_by_loops
    c = run.config
    for name, v in (("T", T), ("n", n), ("count", count)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{name}: must be an integer >= 1, got {v!r}")
    if not run.model.tied and T > run.model.cfg.n_blocks:     # an untied model has no loops beyond its depth
        raise ValueError(f"T: an untied model has exactly {run.model.cfg.n_blocks} blocks; allowed: 1..{run.model.cfg.n_blocks}, got {T}")
    acc = accuracy_by_loops(run.model, c.task_obj(), n, T, count=count, seed=seed, streaming=c.streaming)
    fig = fig or plt.figure(figsize=(10.5, 3.9))
    fig.clear()
    fig.set_layout_engine("constrained")
    ax1, ax2 = fig.subplots(1, 2)
    loop = "loop t" if c.tied else "block t (untied: one block a step)"
    mark = c.T_train if c.T_train < T else None
    loop_position_map(acc.position_acc, ax=ax1, T_mark=mark, loop_label=loop,
                      title=f"{c.task} {c.schedule}{'' if c.tied else ' untied'}{'' if c.pos == 'none' else ' ' + c.pos}, "
                            f"trained n={c.n_train} T={c.T_train}: test n={n}, T={T}")
    ax2.plot(np.arange(1, T + 1), acc.seq_acc, "o-", ms=3, label=f"{WHOLE_WORD} at n = {n}")
    if mark is not None:
        ax2.axvline(mark, color="r", ls="--", lw=1.0, label=f"T_train = {mark} (training budget)")
        ax2.legend(fontsize=7, loc="best")
    ax2.set_ylim(-0.02, 1.02)
    ax2.set_xlabel(loop)
    ax2.set_ylabel(f"{WHOLE_WORD}\n(fraction of words right at every position)")
    _integer_ticks(ax2, x=True)
    ax2.set_title(f"{WHOLE_WORD} per loop")
    ok = acc.position_acc >= 0.9                                   # (T, n)
    prefix = np.where(ok.all(1), n, np.argmin(ok, axis=1))          # solved prefix after each loop
    best = int(prefix.argmax())
    readout = (f"n={n} T={T}: solved prefix after T loops {prefix[-1]}/{n} positions (>= 90 % correct), "
               f"{WHOLE_WORD} {acc.seq_acc[-1]:.2f}; longest prefix {prefix[best]} at loop {best + 1}")
    return fig, readout


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
    handles = ([_key(f"seed {s}", color=f"C{i % 10}", lw=3) for i, s in enumerate(seeds)]
               + [_key("annealed (warm-started chain)", ls="-", marker="o")]
               + ([_key("lottery branch, from its parent", ls=":", marker="s")] if has_branch else [])
               + [_key("from scratch (right panel)", ls="--", marker="x"),
                  _key("budget law v = n / T (left panel)", ls="--", lw=0.8)])
    fig.legend(handles=handles, fontsize=7, loc="outside right upper")
    return fig


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
    fig.legend(handles=[_key(f"threshold: a seed generalizes at {WHOLE_WORD} ≥ {threshold:g} (out of distribution)",
                             color="gray", ls=":"),
                        _key("one point a seed", ls="", marker="o", ms=4, color="C0")],
               fontsize=8, loc="outside upper center", ncol=2)
    return fig


def accuracy_per_iteration(curves_by_seed: dict, budgets: dict):
    """08: deep-thinking's accuracy-per-iteration curves, one panel per seed. curves_by_seed: seed ->
    {n: head.LoopAccuracy} (its whole-word accuracy per loop is drawn); budgets: seed -> T_train
    (dotted: the training budget)."""
    fig, axes = plt.subplots(1, len(curves_by_seed), figsize=(6 * len(curves_by_seed), 4), squeeze=False,
                             layout="constrained")
    for ax, (seed, curves) in zip(axes[0], curves_by_seed.items()):
        accuracy_vs_loops({f"n = {n}": acc.seq_acc for n, acc in curves.items()}, ax=ax, ylabel=WHOLE_WORD,
                          title=f"seed {seed}: {WHOLE_WORD} per loop", legend=False)
        ax.axvline(budgets[seed], color="gray", ls=":", lw=0.9, label=f"T_train = {budgets[seed]} (training budget)")
        ax.legend(fontsize=7, loc="upper right", title="test length", title_fontsize=7)
    return fig


# the configurations of Paper B's grid outnumber tab10: two more colours, each distinct from the ten
_GRID_COLOURS = [f"C{i}" for i in range(10)] + ["black", "#b8860b"]
_SEED_LS = ("-", "--", ":", "-.")


def fixed_point_grid(rows: dict, label):
    """09: per run of Paper B's grid, the relative step per loop (reachability) and the best whole-word
    accuracy at each test length (extrapolation). One colour a configuration, one line style (and
    marker) a seed, one legend beside both panels; named reference lines: the 10⁻³ tolerance "reached"
    is read against, the training loops T_train and the training length n_train. rows:
    fixedpoint.stability_rows; label: configuration key -> its name."""
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.6), layout="constrained")
    keys = list(dict.fromkeys(r["key"] for r in rows.values()))
    seeds = sorted({r["seed"] for r in rows.values()})
    for r in rows.values():
        colour = _GRID_COLOURS[keys.index(r["key"]) % len(_GRID_COLOURS)]
        i = seeds.index(r["seed"])
        style = dict(color=colour, ls=_SEED_LS[i % len(_SEED_LS)], lw=1.1)
        name = f"{label(r['key'])} s{r['seed']}"
        axes[0].semilogy(np.arange(1, len(r["reach"].step) + 1), np.maximum(r["reach"].step, 1e-9), label=name, **style)
        axes[1].plot(list(r["extrap"]), list(r["extrap"].values()), marker=_MARKERS[i % len(_MARKERS)], ms=4,
                     label=name, **style)
    first = next(iter(rows.values()))
    axes[0].axhline(1e-3, color="gray", ls="-.", lw=1.0)
    refs = [_key("tolerance 10⁻³ (left): an input has reached\nits fixed point once it stays below", color="gray", ls="-.")]
    if "T_train" in first:
        axes[0].axvline(first["T_train"], color="gray", ls=":", lw=1.0)
        refs.append(_key(f"T_train = {first['T_train']} (left: loops trained)", color="gray", ls=":"))
    axes[0].set_xlabel("loop (loops run, up to 4 x T_train)")
    axes[0].set_ylabel("relative change of the state per loop\n||h(t+1) − h(t)|| / ||h(t)||, median over inputs")
    axes[0].set_title("reachability: does the loop settle?")
    _integer_ticks(axes[0], x=True)
    ns = sorted({n for r in rows.values() for n in r["extrap"]})
    axes[1].axvline(first["n_train"], color="gray", ls=":", lw=1.0)
    refs.append(_key(f"n_train = {first['n_train']} (right: training length)", color="gray", ls=":"))
    axes[1].set_xscale("log", base=2)
    axes[1].set_xticks(ns, [str(n) for n in ns])
    axes[1].xaxis.set_minor_formatter(NullFormatter())
    axes[1].set_xlabel("test length n (tokens; log scale)")
    axes[1].set_ylabel(f"best {WHOLE_WORD}\nover the scanned loops")
    axes[1].set_ylim(-0.02, 1.02)
    axes[1].set_title("extrapolation: longer words than trained")
    handles = ([_key(label(k), color=_GRID_COLOURS[i % len(_GRID_COLOURS)], lw=2.5) for i, k in enumerate(keys)]
               + [_key(f"seed {s}", ls=_SEED_LS[i % len(_SEED_LS)], marker=_MARKERS[i % len(_MARKERS)], ms=4)
                  for i, s in enumerate(seeds)] + refs)
    _legend_right(axes[1], handles, title="configuration (colour), seed (line, marker)", title_fontsize=7)
    return fig


def sudoku_loops(sudoku_rows: dict):
    """09: blank-cell and whole-board accuracy per loop: one colour a difficulty (givens), one line style a
    recall (external solid, internal dashed), one marker a seed; the training loops T_train a named dotted
    line. sudoku_rows: fixedpoint.sudoku_readings."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 4), sharex=True, layout="constrained")
    givens = list(dict.fromkeys(g for _, _, g in sudoku_rows))     # the plan's order: training difficulty first
    seeds = sorted({s for _, s, _ in sudoku_rows})
    recall_ls = {"external": "-", "internal": "--"}
    for (recall, seed, g), r in sudoku_rows.items():
        loops = np.arange(1, len(r["cell"]) + 1)
        style = dict(color=f"C{givens.index(g) % 10}", ls=recall_ls[recall],
                     marker=_MARKERS[seeds.index(seed) % len(_MARKERS)], ms=3.5,
                     markevery=max(1, len(loops) // 8), lw=1.1, label=f"{recall}, {g} givens, seed {seed}")
        axes[0].plot(loops, r["cell"], **style)
        axes[1].plot(loops, r["board"], **style)
    T = next(iter(sudoku_rows.values()))["T"]
    for ax, what in zip(axes, ("blank-cell accuracy\n(fraction of the cells to fill that are right)",
                               "whole-board accuracy\n(fraction of boards with every cell right)")):
        ax.axvline(T, color="gray", ls=":", lw=1.0)
        ax.set_xlabel("loop (loops run, up to 2 x T_train)")
        ax.set_ylabel(what)
        ax.set_ylim(-0.02, 1.02)
        _integer_ticks(ax, x=True)
    axes[0].set_title("cells")
    axes[1].set_title("whole boards")
    handles = ([_key(f"{g} givens" + (" (training difficulty)" if i == 0 else ""), color=f"C{i % 10}", lw=2.5)
                for i, g in enumerate(givens)]
               + [_key(f"{rc} recall", ls=ls) for rc, ls in recall_ls.items() if any(k[0] == rc for k in sudoku_rows)]
               + [_key(f"seed {s}", ls="", marker=_MARKERS[i % len(_MARKERS)], ms=4) for i, s in enumerate(seeds)]
               + [_key(f"T_train = {T} (loops trained)", color="gray", ls=":")])
    for what, panel in (("cell", "cells"), ("board", "boards")):
        hidden = [k for k, r in sudoku_rows.items() if near_zero(r[what])]
        recalls = {k[0] for k in hidden}
        if not hidden:
            continue
        if len(hidden) == len(sudoku_rows):
            who = f"all {len(hidden)} lines"
        elif len(recalls) == 1 and len(hidden) == sum(k[0] in recalls for k in sudoku_rows):
            who = f"every {hidden[0][0]} recall line ({len(hidden)})"
        else:
            who = ",\n".join(f"{rc} seed {sd}, {g} givens" for rc, sd, g in hidden)
        handles.append(_blank(f"{panel}: at or near 0 (within {NEAR_ZERO})\nat every loop, overlapping: {who}"))
    _legend_right(axes[1], handles, title="difficulty (colour), recall (line), seed (marker)", title_fontsize=7)
    return fig


def tau_against_n(rows: list[dict]):
    """04: tau at the last position against n per run (legend: its scaling class), and tau against
    position at the training length. rows: `architecture.prior_rows`."""
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
        _integer_ticks(ax, x=True, y=True)
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
    _integer_ticks(ax, x=True)
    ax.legend(fontsize=7)
    return fig


# 05's wall figures draw a curriculum by its line: solid operator-first, dashed joint.
_CURRICULUM_LS = {"operator_first": "-", "joint": "--"}


def _curriculum_keys() -> list:
    return [_key(c.replace("_", "-"), ls=ls) for c, ls in _CURRICULUM_LS.items()]


def wall_loss(rows: dict):
    """05: training loss against step per run, one panel per group (colour: seed; dashed: joint, solid:
    operator-first; dotted: the loss of a model that knows only position 1, at the full length).
    rows: `deadlock.wall_rows`."""
    groups = sorted({g for g, _, _ in rows})
    seeds = sorted({s for _, _, s in rows})
    fig, axes = plt.subplots(1, len(groups), figsize=(5.2 * len(groups) + 1.6, 3.8), squeeze=False,
                             layout="constrained")
    for ax, group in zip(axes[0], groups):
        mine = {k: r for k, r in rows.items() if k[0] == group}
        for (_, curriculum, seed), r in mine.items():
            ax.plot([e["step"] for e in r["log"]], [e["loss"] for e in r["log"]],
                    ls=_CURRICULUM_LS[curriculum], color=f"C{seed % 10}",
                    label=f"{curriculum} seed {seed}")
        ax.axhline(next(iter(mine.values()))["entropy_at_n_train"], color="k", ls=":", lw=0.9)
        ax.set(xlabel="training step", ylabel="training loss (final loop, nats)", title=group)
    handles = ([_key(f"seed {s}", color=f"C{s % 10}", lw=3) for s in seeds] + _curriculum_keys()
               + [_key("loss knowing only position 1\n(at the full length)", ls=":", lw=0.9)])
    fig.legend(handles=handles, fontsize=7, loc="outside right upper")
    return fig


# 05's wall figures hold up to 18 runs: the default colour cycle repeats after 10, so a run's style is
# read from what it is instead: colour = group (or streaming pair), line = curriculum, marker = seed.
_SEED_MARKERS = _MARKERS


def _wall_style(groups: list, group, curriculum: str, seed: int) -> dict:
    return dict(color=f"C{groups.index(group) % 10}", ls=_CURRICULUM_LS[curriculum],
                marker=_SEED_MARKERS[seed % len(_SEED_MARKERS)], ms=4)


def _wall_legend(fig, groups: list, seeds: list) -> None:
    """A legend of the three keys (group colours, curriculum lines, seed markers), not of every run."""
    handles = ([_key(g, color=f"C{i % 10}", lw=3) for i, g in enumerate(groups)] + _curriculum_keys()
               + [_key(f"seed {s}", ls="", marker=_SEED_MARKERS[s % len(_SEED_MARKERS)]) for s in seeds])
    fig.legend(handles=handles, fontsize=7, loc="outside right upper")


def wall_accuracy(rows: dict, long_ns):
    """05: per-position accuracy at the training length, and whole-word accuracy against length
    (colour: group, solid: operator-first, dashed: joint, marker: seed)."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 3.9), layout="constrained")
    groups = list(dict.fromkeys(g for g, _, _ in rows))
    n_train = next(iter(rows.values()))["config"].n_train
    for (group, curriculum, seed), r in rows.items():
        style = dict(_wall_style(groups, group, curriculum, seed), label=f"{group} {curriculum} s{seed}")
        axes[0].plot(np.arange(1, len(r["pos_acc"]) + 1), r["pos_acc"], **style)
        axes[1].plot([r["config"].n_train] + list(long_ns), [r["seq_acc"]] + [r["ood"][n] for n in long_ns], **style)
    axes[0].set(xlabel="position i", ylabel="accuracy after T_train loops\n(fraction of words right there)",
                title=f"per-position accuracy at n_train = {n_train}")
    axes[1].set(xlabel="test length n (with T_train · n / n_train loops)", ylabel=WHOLE_WORD,
                title=f"{WHOLE_WORD} against length")
    for ax in axes:
        ax.set_ylim(-0.02, 1.02)
        _integer_ticks(ax, x=True)
    _wall_legend(fig, groups, sorted({s for _, _, s in rows}))
    return fig


_SCHEDULE_LS = {"free": "-", "streaming": "--"}


def streaming_pairs(pairs: dict):
    """05: whole-word accuracy against length, free training (solid) against the streaming schedule
    (dashed) on the same task. pairs: `deadlock.streaming_pairs` (keyed by task: one colour a task) or
    `deadlock.seed_pairs` (keyed by task, curriculum and seed: one colour a task and curriculum, one
    marker a seed). Runs at or near 0 at every length (within NEAR_ZERO, so not only exact zeros) overlap
    on the axis: the legend names them."""
    fig, ax = plt.subplots(figsize=(7.5, 3.9))
    keyed = all(isinstance(k, tuple) for k in pairs)
    groups = list(dict.fromkeys(" ".join(map(str, k[:-1])).replace("_", "-") if keyed else k for k in pairs))
    seeds = sorted({k[-1] for k in pairs}) if keyed else []
    at_zero = {kind: [] for kind in _SCHEDULE_LS}
    for key, out in pairs.items():
        name = " ".join(map(str, key)) if isinstance(key, tuple) else key
        group = " ".join(map(str, key[:-1])).replace("_", "-") if keyed else key
        marker = _MARKERS[seeds.index(key[-1]) % len(_MARKERS)] if keyed else "o"
        for kind, accs in out.items():
            ax.plot(list(accs), list(accs.values()), ls=_SCHEDULE_LS.get(kind, ":"), marker=marker, ms=5,
                    color=f"C{groups.index(group) % 10}", label=f"{name} {kind}")
            if kind in at_zero and near_zero(accs.values()):
                at_zero[kind].append(f"{group} seed {key[-1]}" if keyed else group)
    ax.set(xlabel="test length n", ylabel=WHOLE_WORD, ylim=(-0.03, 1.03),
           title="free training (solid) vs imposed seriality (streaming, dashed)")
    _integer_ticks(ax, x=True)
    handles = ([_key(g, color=f"C{i % 10}", lw=3) for i, g in enumerate(groups)]
               + [_key(f"{kind} training" if kind == "free" else f"{kind} schedule", ls=ls) for kind, ls in _SCHEDULE_LS.items()]
               + [_key(f"seed {s}", ls="", marker=_MARKERS[i % len(_MARKERS)]) for i, s in enumerate(seeds)])
    for kind, names in at_zero.items():
        if names:
            total = sum(kind in out for out in pairs.values())
            who = f"all {total} runs" if len(names) == total else ",\n".join(names)
            handles.append(_blank(f"at or near 0 (within {NEAR_ZERO}) at every\nlength, overlapping ({kind}): {who}"))
    _legend_right(ax, handles)
    return fig


def rescue(rescued: dict, n_long: int):
    """03: at length n_long, late-position accuracy (solid) and whole-word accuracy (dashed) against
    test-time loops, with the halting rule's T* (dotted); one panel a contract, one colour a seed.
    rescued: config -> budget.rescue(...)."""
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
        _integer_ticks(ax, x=True)
    axes[0][0].set_ylabel("accuracy")
    fig.suptitle(f"rescue at n = {n_long}: accuracy against test-time loops", fontsize=11)
    handles = ([_key(f"seed {s}", color=f"C{i % 10}", lw=3) for i, s in enumerate(seeds)]
               + [_key("late positions (i > n_train):\nmean per-position accuracy", ls="-"),
                  _key(WHOLE_WORD, ls="--", lw=0.9),
                  _key("T* = ceil(n / v-hat):\nthe halting rule", ls=":", lw=0.9)])
    fig.legend(handles=handles, fontsize=7, loc="outside right upper")
    return fig


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


def free_and_cones(free: dict):
    """02: tau at the last position against n for each free model, and each model's damage map from
    a patch at (position 1, loop 1); free: config -> calibration.free_reading(...)."""
    fig, axes = plt.subplots(1, 1 + len(free), figsize=(3.9 * (1 + len(free)) + 1.0, 3.7), layout="constrained")
    for cfg, f in free.items():
        axes[0].plot(f["against_n"].ns, f["against_n"].last, "o-", label=cfg.contract)
    axes[0].set(xlabel="input length n", ylabel="tau at the last position (loops)", title="free models: tau against n")
    _integer_ticks(axes[0], x=True, y=True)
    axes[0].legend(fontsize=7)
    for ax, (cfg, f) in zip(axes[1:], free.items()):
        c = f["cones"]
        loop_position_map(c.flip[c.grid.index((1, 1))], ax=ax, title=f"damage from a patch at (pos 1, loop 1)\n{cfg.contract}",
                          colorbar=False)
    fig.colorbar(axes[1].images[0], ax=axes[1:].tolist(), fraction=0.03, pad=0.01).set_label(
        "damage: fraction of inputs whose\noutput at that position changes", fontsize=8)
    return fig
