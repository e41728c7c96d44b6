"""09's two figures and 05's streaming figure, read as a reader would: every reference line named, loop
axes in integers, one legend key a colour / line / marker, lines hidden at (or near) 0 named with the
tolerance that hides them."""
from types import SimpleNamespace

import matplotlib
import numpy as np

from lib import plots
from lib.sections.s05_operator_wall import figures as figures05
from lib.sections.s09_stability import figures as figures09, read as read09

matplotlib.use("Agg")


def _texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]


def _grid_rows():
    keys = [("none", False), ("external", True), ("internal", True)]
    rows = {}
    for i, k in enumerate(keys):
        for seed in (0, 1):
            step = np.geomspace(1.0, 10.0 ** -(2 + i), 63)
            rows[(k, seed)] = dict(key=k, seed=seed, n_train=16, T_train=16,
                                   reach=SimpleNamespace(step=step),
                                   extrap={16: 1.0, 32: 0.5 - 0.1 * i, 64: 0.1 * seed, 128: 0.0})
    return rows


def test_the_stability_grid_keys_configurations_and_seeds_and_names_its_reference_lines():
    fig = figures09.fixed_point_grid(_grid_rows(), read09.configuration_label)
    texts = _texts(fig)
    assert len(fig.axes[0].lines) == 6 + 2 and len(fig.axes[1].lines) == 6 + 1    # runs + reference lines
    assert sum(t.startswith("seed ") for t in texts) == 2                          # one key a seed, not a line
    assert {"no recall, no outer norm", "external recall, outer norm", "internal recall, outer norm"} <= set(texts)
    assert any(t.startswith("tolerance 10⁻³") for t in texts)
    assert "T_train = 16 (left: loops trained)" in texts and "n_train = 16 (right: training length)" in texts
    assert "loop" in fig.axes[0].get_xlabel() and "test length" in fig.axes[1].get_xlabel()
    assert all(float(x).is_integer() for x in fig.axes[0].get_xticks())            # integer loop ticks
    assert [int(x) for x in fig.axes[1].get_xticks()] == [16, 32, 64, 128]         # the test lengths themselves
    lines = {ln.get_label(): ln for ln in fig.axes[0].lines}
    a, b = lines["no recall, no outer norm s0"], lines["no recall, no outer norm s1"]
    assert a.get_color() == b.get_color() and a.get_linestyle() != b.get_linestyle()


def test_the_sudoku_figure_keys_difficulty_recall_seed_and_names_lines_hidden_at_zero():
    rows = {}
    for recall in ("external", "internal"):
        for seed in (0, 1):
            for g in (34, 28, 24):
                cell = np.linspace(0.2, 0.9, 32)
                rows[(recall, seed, g)] = dict(cell=cell, board=cell if recall == "internal" else np.full(32, 0.01),
                                               T=16, best_board_loop=1)
    fig = figures09.sudoku_loops(rows)
    texts = _texts(fig)
    assert "T_train = 16 (loops trained)" in texts and "34 givens (training difficulty)" in texts
    assert {"external recall", "internal recall", "seed 0", "seed 1"} <= set(texts)
    assert any("boards: at or near 0 (within 0.02)" in t and "every external recall line (6)" in t for t in texts)
    assert not any(t.startswith("cells:") for t in texts)                          # no cell line hides
    for ax in fig.axes:
        assert all(float(x).is_integer() for x in ax.get_xticks()) and "loop" in ax.get_xlabel()


def test_the_streaming_note_counts_lines_near_zero_and_states_the_tolerance():
    pairs = {("S4", "joint", s): {"free": {8: 1.0, 16: 0.4}, "streaming": {8: 0.01 * s, 16: 0.0}} for s in (0, 1, 2)}
    texts = _texts(figures05.streaming_pairs(pairs))
    note = next(t for t in texts if "(streaming)" in t)
    assert "at or near 0 (within 0.02)" in note and "all 3 runs" in note     # 0.01 and 0.02 hide as 0 does
    assert not any("(free)" in t for t in texts)
    pairs[("S4", "joint", 2)]["streaming"][8] = 0.05                          # visible above the axis: not named
    note = next(t for t in _texts(figures05.streaming_pairs(pairs)) if "(streaming)" in t)
    assert "seed 0" in note and "seed 1" in note and "seed 2" not in note
    assert plots.near_zero([0.0, -0.02, 0.02]) and not plots.near_zero([0.0, 0.021])
