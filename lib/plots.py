"""What the figures share: `save` (outputs/figures/<name>.png and .svg, the stable names the claims
ledger links to), the conventions' styles and legend helpers, and the figures several sections draw
(tau curves, the accuracy map, the quickstart's frontier view). A section's own
figures are in its room (`lib/sections/sNN_*/figures.py`) and build on these.

Conventions a reader can rely on in every figure: axes say what they measure in words, with units;
loop, position and length axes carry integer ticks; every reference line (a budget, a threshold, a
law) is named in a legend or next to it; a colour bar says what its colour counts; a figure of many
runs keys them by colour, line style and marker (one legend entry a key, not one a line), and its
legend sits outside the data."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from .instruments.head import accuracy_by_loops
from .paths import artifacts_dir

# what the colour of an accuracy map counts
ACCURACY_COLOUR = "accuracy\n(fraction of words right at that position)"
WHOLE_WORD = "whole-word accuracy"            # one name for "every position of the word right"
# a tau that moves by less than this many loops per position is flat: no serial speed to read
FLAT_SLOPE = 0.01
# markers for the members of a group (usually seeds), in order
MARKERS = "os^Dv<>p"
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


def integer_ticks(ax, x: bool = False, y: bool = False) -> None:
    """Loops, positions and lengths are counts: no tick between two of them."""
    if x:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if y:
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))


def legend_right(ax, handles=None, **kw):
    """A legend beside the axes, outside the data."""
    kw = dict(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0) | kw
    return ax.legend(handles=handles, **kw) if handles is not None else ax.legend(**kw)


def legend_key(label: str, color="k", ls="-", marker="", **kw) -> Line2D:
    """A legend entry for a key (a colour, a line style, a marker), not for a drawn line."""
    return Line2D([], [], color=color, ls=ls, marker=marker, label=label, **kw)


def legend_note(label: str) -> Line2D:
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


def group_styles(curves: dict):
    """curves keyed by label, or by (group, member): the groups (one colour each), the members (one
    marker each) and key -> (group, colour, marker)."""
    grouped = all(isinstance(k, tuple) and len(k) == 2 for k in curves)
    groups = list(dict.fromkeys(k[0] if grouped else k for k in curves))
    members = sorted({k[1] for k in curves}) if grouped else []
    style = {}
    for k in curves:
        g = k[0] if grouped else k
        marker = MARKERS[members.index(k[1]) % len(MARKERS)] if grouped else "o"
        style[k] = (g, f"C{groups.index(g) % 10}", marker)
    return grouped, groups, members, style


# the markers as text, so a legend entry can say which value belongs to which marker
GLYPHS = {"o": "●", "s": "■", "^": "▲", "D": "◆", "v": "▼", "<": "◀", ">": "▶"}


def group_legend(ax, grouped, groups, members, style, values: dict, unit: str, extra=(), member_name="seed"):
    """One entry a group (its colour, with its runs' values, each followed by its member's marker), one
    a member (its marker), then `extra`. values: group -> [(key, text)], a text 'v = 1.05' or a word."""
    handles = []
    for g in groups:
        colour = next(c for gg, c, _ in style.values() if gg == g)
        if grouped:
            parts = [f"{t[4:] if t.startswith('v = ') else t} {GLYPHS.get(style[k][2], f'({member_name} {k[1]})')}"
                     for k, t in values[g]]
            prefix = "v = " if any(t.startswith("v = ") for _, t in values[g]) else ""
            label = f"{g}: {prefix}{', '.join(parts)}"
        else:
            text = values[g][0][1]
            label = f"{g}: {text}{unit if text.startswith('v = ') else ''}"
            label += " (tau the same at every position)" if text == "flat" else ""
        handles.append(legend_key(label, color=colour, marker="" if grouped else "o"))
    handles += [legend_key(f"{member_name} {m}", ls="", marker=MARKERS[i % len(MARKERS)], ms=5) for i, m in enumerate(members)]
    title = f"speed v in{unit}, each by its {member_name}'s marker" if grouped else None
    legend_right(ax, handles + list(extra), title=title, title_fontsize=7)


def tau_curves(curves: dict, ax=None, title="tau(n, i) per contract"):
    """curves: label -> TauResult, or (group, seed) -> TauResult (a group, e.g. a contract, shares a colour
    and one legend entry listing its seeds' speeds; a seed has its marker). tau against position, with
    each run's loop budget dotted in its colour. A flat tau (no growth with position) reads 'flat'."""
    ax = ax or plt.gca()
    grouped, groups, members, style = group_styles(curves)
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
    integer_ticks(ax, x=True, y=True)
    ax.set_title(title)
    group_legend(ax, grouped, groups, members, style, speeds, " positions/loop",
                  extra=[legend_key("loop budget T (dotted, in the run's colour)", color="gray", ls=":")])
    return ax


def mark_budget(ax, T_mark: int) -> None:
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
        mark_budget(ax, T_mark)
    ax.set_xlabel("position i")
    ax.set_ylabel(loop_label)
    integer_ticks(ax, x=True, y=True)
    ax.set_title(title)
    if colorbar:
        ax.figure.colorbar(im, ax=ax, fraction=0.046).set_label(colour_label, fontsize=8)
    return ax


def render_frontier(run, T: int, n: int, count: int = 256, seed: int = 0, fig=None):
    """The quickstart view of one cached run: accuracy per (loop, position) for T loops at length n,
    with the contract's budget marked, and whole-word accuracy per loop. Pure: same inputs, same figure.
    Returns (fig, readout) where readout is a one-line text summary."""
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
    integer_ticks(ax2, x=True)
    ax2.set_title(f"{WHOLE_WORD} per loop")
    ok = acc.position_acc >= 0.9                                   # (T, n)
    prefix = np.where(ok.all(1), n, np.argmin(ok, axis=1))          # solved prefix after each loop
    best = int(prefix.argmax())
    readout = (f"n={n} T={T}: solved prefix after T loops {prefix[-1]}/{n} positions (>= 90 % correct), "
               f"{WHOLE_WORD} {acc.seq_acc[-1]:.2f}; longest prefix {prefix[best]} at loop {best + 1}")
    return fig, readout


