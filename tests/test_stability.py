"""09, fixed-point stability (Paper B): the grid's rules and readers on constructed runs and hand-built readings,
the sudoku readings, the knob grid, the figures, and the sudoku pilot's pick."""
from types import SimpleNamespace

import matplotlib
import numpy as np
import pytest
import torch

from lib import claims, profiles, rules
from lib.config import RunConfig
from lib.sections.s09_stability import claims as claims09, figures as figures09, read as read09
from lib.instruments.fixedpoint import Convergence, InputDependence
from lib.instruments.head import LoopAccuracy
from lib.probes import probe_seed

matplotlib.use("Agg")


def fake_run(model, **cfg):
    return SimpleNamespace(config=RunConfig(**cfg), model=model.eval(),
                           metrics={"final_eval": {"seq_acc": 1.0}, "steps": 1})


# --- loops for length ------------------------------------------------------------------------------


# --- 08 on a serial propagator: position i is right from loop period * i ------------------------------


def loop_acc(n, seq):
    return LoopAccuracy(n, np.asarray(seq, float), np.zeros((len(seq), n)))


# --- 09: the grid's rules -------------------------------------------------------------------------

KEYS = [(recall, outer, "pre") for recall in ("none", "external", "internal") for outer in (False, True)]


def test_configuration_labels_are_the_names_the_ledger_reads():
    assert [read09.configuration_label(k) for k in KEYS] == [
        "no recall, no outer norm", "no recall, outer norm", "external recall, no outer norm",
        "external recall, outer norm", "internal recall, no outer norm", "internal recall, outer norm"]
    assert read09.configuration_label(("internal", True, "peri")) == "internal recall, outer norm, peri-norm"


def test_stability_rows_keep_one_summary_per_configuration_and_seed(monkeypatch):
    monkeypatch.setattr(read09, "kept_summary", lambda run, test_ns, long_factor, eval_count:
                        dict(seed=run.config.seed, read=(tuple(test_ns), long_factor, eval_count)))
    run = lambda seed: SimpleNamespace(config=SimpleNamespace(seed=seed))
    rows = read09.stability_rows({KEYS[0]: [run(0), run(1)], KEYS[5]: [run(0)]}, (16, 32), 4, 64)
    assert list(rows) == [(KEYS[0], 0), (KEYS[0], 1), (KEYS[5], 0)]
    assert rows[(KEYS[5], 0)] == dict(key=KEYS[5], seed=0, read=((16, 32), 4, 64))


def summary_row(key, seed, extrap, reached=1.0, rho=0.5, nearby=0.1, distinct=128, cosine=0.25):
    return dict(key=key, seed=seed, n_train=16, in_acc=1.0, reach=Convergence("raw", 1e-3, np.zeros(3), reached, 2.0),
                reach_cosine=Convergence("cosine", 1e-2, np.zeros(3), cosine, 1.0),
                dep=InputDependence(0.5, nearby, distinct, 128), rho=rho, grads={16: 1.0, 64: 2.0}, grad_growth=2.0,
                extrap=extrap)


@pytest.mark.parametrize("reached, rho, nearby, stable", [
    (0.9, 0.99, 2e-3, True), (0.89, 0.99, 2e-3, False), (0.9, 1.0, 2e-3, False), (0.9, 0.99, 1e-3, False)])
def test_stable_fixed_points_needs_all_three_axes(reached, rho, nearby, stable):
    assert read09.stable_fixed_points(summary_row(KEYS[0], 0, {}, reached, rho, nearby)) is stable


def test_comparison_length_is_the_longest_scoring_length_beyond_training():
    ext = {16: {"a": 1.0, "b": 0.9}, 32: {"a": 0.05, "b": 0.0}, 64: {"a": 0.049, "b": 0.01}}
    assert read09.comparison_length(ext, 16) == 32                 # 0.05 scores, 0.049 does not
    assert read09.comparison_length({**ext, 64: {"a": 0.0, "b": 0.2}}, 16) == 64
    assert read09.comparison_length({16: {"a": 1.0}, 32: {"a": 0.0}}, 16) is None   # n_train never counts
    assert claims09.SCORES is read09.SCORES                          # the ledger's gate uses the same threshold


def grid_rows():
    """Two seeds per configuration; at n = 32 internal/outer scores 0.3 (mean), external/outer 0.1, and
    no recall without outer norm the most (0.5); at 64 nobody scores."""
    at32 = {KEYS[0]: (0.5, 0.5), KEYS[1]: (0.2, 0.0), KEYS[2]: (0.0, 0.0), KEYS[3]: (0.1, 0.1),
            KEYS[4]: (0.0, 0.02), KEYS[5]: (0.4, 0.2)}
    rows = {}
    for k in KEYS:
        for seed in (0, 1):
            stable_seed = k == KEYS[5] or (k == KEYS[0] and seed == 0)
            rows[(k, seed)] = summary_row(k, seed, {16: 1.0, 32: at32[k][seed], 64: 0.0}, rho=0.5 if stable_seed else 1.5,
                                          distinct=32 if k == KEYS[1] and seed == 0 else 128)
    return rows


def sudoku_rows():
    arr = lambda best: np.array([0.0, best, best / 2])
    out = {}
    for recall, boards in (("external", (0.2, 0.1, 0.0)), ("internal", (0.4, 0.4, 0.2))):
        for g, b in zip((34, 28, 24), boards):
            out[(recall, 0, g)] = dict(cell=arr(0.5 + b), board=arr(b), T=2, best_board_loop=2)
    return out


def test_stability_results_on_a_hand_built_grid():
    r = read09.stability_results(grid_rows(), sudoku_rows(), (16, 32, 64), (34, 28, 24))
    assert r["compared_at_n"] == 32 and r["longest"] == 64
    assert r["best_configuration"] == "no recall, no outer norm" and r["best_is_recall_outer"] is False
    assert r["internal_minus_external"] == 0.2                               # 0.3 - 0.1
    cfg = r["configurations"]
    assert cfg["internal recall, outer norm"] == {"extrapolation": {"16": 1.0, "32": 0.3, "64": 0.0},
                                                  "stable_fixed_points": 1.0, "stable_fixed_points_cosine": 0.0,
                                                  "reached_step": 1.0, "reached_cosine": 0.25}
    assert cfg["no recall, no outer norm"]["stable_fixed_points"] == 0.5
    assert r["no_recall_distinct_fraction"] == 0.625                          # (32/128 + 1) / 2
    assert r["sudoku_board"]["internal, 28 givens"] == 0.4 and r["sudoku_blank_cells"]["external, 34 givens"] == 0.7
    assert r["sudoku_internal_minus_external"] == 0.25                        # mean of (0.4 - 0.1, 0.2 - 0.0)
    # the ledger: both recalls (with outer norm) score at the comparison length, so the claim is measured
    assert rules.verdict(claims.claim("internal_minus_external"), r["internal_minus_external"], True, r) == "reproduced"


def test_stability_results_rank_the_best_and_leave_a_tie_unmeasured():
    rows = grid_rows()
    rows[(KEYS[0], 0)]["extrap"][32] = 0.0                  # no recall drops to 0.25: internal/outer (0.3) is best
    r = read09.stability_results(rows, sudoku_rows(), (16, 32, 64), (34, 28, 24))
    assert r["best_configuration"] == "internal recall, outer norm" and r["best_is_recall_outer"] is True
    assert r["best_is_recall_outer_cosine"] is False          # a quarter of its inputs pass the cosine diagnostic
    for row in rows.values():                               # nobody scores beyond training: no ranking
        row["extrap"][32] = 0.04
    r = read09.stability_results(rows, sudoku_rows(), (16, 32, 64), (34, 28, 24))
    assert r["compared_at_n"] is None and r["best_is_recall_outer"] is None and r["internal_minus_external"] is None
    assert r["best_configuration"] is None
    assert rules.verdict(claims.claim("best_is_recall_outer"), r["best_is_recall_outer"], True, r) == "not measured"


# --- 09: sudoku read per loop ---------------------------------------------------------------------

class SudokuOracle:
    """Copies the givens (a blank reads as class 0, never a target) until loop `k`, then writes the
    solution of every board it was told about: cells and boards all right from loop k on."""

    def __init__(self, solutions: dict, k: int):
        self.solutions, self.k = solutions, k

    def eval(self):
        return self

    def __call__(self, tokens, T, all_loops=False, streaming=False):
        labels = torch.stack([self.solutions[tuple(x.tolist())] for x in tokens]).clamp(min=0)
        early = torch.nn.functional.one_hot(tokens.clamp(max=9), 10).float()
        late = torch.nn.functional.one_hot(labels, 10).float()
        return torch.stack([early if t + 1 < self.k else late for t in range(T)])


def test_sudoku_readings_find_the_loop_an_oracle_solves_at(tmp_path):
    from lib.tasks import sudoku_set
    givens, count = (34, 24), 8
    solutions = {}
    for g in givens:                                        # the boards the reading must use: the tail probe seed's
        tokens, labels = sudoku_set(g, count, probe_seed("tail", 0))
        solutions.update({tuple(x.tolist()): y for x, y in zip(tokens, labels)})
    run = fake_run(SudokuOracle(solutions, k=2), task="sudoku", n_train=81, curriculum_start=81, causal=False,
                   T_train=3, eval_count=count)
    run.path = tmp_path                                     # the readings are kept beside the run
    (tmp_path / "DONE").write_text('{"model_sha256": "oracle"}')
    for _ in range(2):                                      # read, then read back from the kept file
        rows = read09.sudoku_readings({"internal": [run]}, givens)
        assert list(rows) == [("internal", 0, 34), ("internal", 0, 24)]
        for r in rows.values():
            assert r["board"].tolist() == [0, 1, 1, 1, 1, 1] and r["cell"].tolist() == [0, 1, 1, 1, 1, 1]   # 2 x T_train
            assert r["best_board_loop"] == 2 and r["T"] == 3
    assert len(list((tmp_path / "readings").glob("sudoku-boards-*.json"))) == 2    # one per difficulty
    assert read09.sudoku_best(rows, "internal", 24) == 1.0


# --- the figures draw from the readings -------------------------------------------------------------

def test_figures_draw_from_hand_built_readings():
    matplotlib.use("Agg")
    from lib.sections.s08_easy_to_hard import figures as figures08
    curves = {0: {4: loop_acc(4, [0, 1.0]), 8: loop_acc(8, [0, 0.6, 0.2])}}
    assert len(figures08.accuracy_per_iteration(curves, {0: 2}).axes) == 1
    assert len(figures09.fixed_point_grid(grid_rows(), read09.configuration_label).axes) == 2
    assert len(figures09.sudoku_loops(sudoku_rows()).axes) == 2


# --- 09: Paper B's knobs one at a time around 08's run (profiles.paper_b_grid) -----------------------

PICK_LIKE = profiles.Knobs("internal", False, "peri", "linear", "rms")


def test_the_knob_grid_varies_one_knob_at_a_time_and_every_configuration_builds():
    grid = profiles.paper_b_grid(PICK_LIKE)
    assert len(grid) == 14 and len(set(grid)) == 14 and PICK_LIKE in grid
    labels = [read09.configuration_label(k, PICK_LIKE) for k in grid]
    assert len(set(labels)) == 14
    assert {"no recall, outer norm", "external recall, outer norm", "internal recall, outer norm",
            "internal recall (concat), no outer norm", "internal recall, no outer norm, sandwich-norm",
            "internal recall, no outer norm, LayerNorm", "external recall (add), no outer norm"} <= set(labels)
    base_cfg = RunConfig(task="prefix_sums", n_train=16, T_train=16, n_layers=1, d_model=32, n_heads=2)
    for k in grid:                                            # every configuration is a valid run, with its knobs
        assert profiles.knobs_of(profiles.with_knobs(base_cfg, k)) == k
    # additive-recall bases (the paper profile's grid): no op in any label, and external concat never drawn
    grid_add = profiles.paper_b_grid(profiles.Knobs("internal", False, "pre", "concat", "layer"))
    assert all(not (k.recall == "external" and k.recall_op == "concat") for k in grid_add)


def test_knobs_of_refuses_a_recall_paper_b_does_not_have_and_the_grid_reads_it_as_external():
    with pytest.raises(ValueError, match="injection: 'adapter'"):
        profiles.knobs_of(RunConfig(injection="adapter"))
    assert profiles.grid_base(RunConfig(injection="adapter")) == profiles.Knobs("external", False)


@pytest.mark.parametrize("base", [profiles.Knobs("external", False), profiles.Knobs("none", True, "post"),
                                  profiles.Knobs("internal", False, "pre", "concat", "layer"), PICK_LIKE])
def test_every_grid_holds_the_configurations_claims_1_and_3_read(base):
    grid = profiles.paper_b_grid(base)
    rows = {(k, s): summary_row(k, s, {16: 1.0, 32: 0.1, 64: 0.0}) for k in grid for s in (0, 1)}
    r = read09.stability_results(rows, sudoku_rows(), (16, 32, 64), (34, 28, 24), base)
    assert r["internal_minus_external"] == 0.0 and len(set(r["claim3_pair"])) == 2
    assert all(name in r["configurations"] for name in r["claim3_pair"])
    assert claims.claim("internal_minus_external").requires(r)         # the ledger finds the pair by its names
    with pytest.raises(ValueError, match="the grid has no configuration"):
        read09.stability_results({key: row for key, row in rows.items() if key[0].recall != "internal"},
                                     sudoku_rows(), (16, 32, 64), (34, 28, 24), base)


@pytest.mark.parametrize("pick", [None, "settled", "progressive", "paper_b", "settled_local", "paper_b_d64"])
def test_the_knob_grid_builds_around_any_pick_and_reads_08s_own_run(monkeypatch, pick):
    from searches.prefix_sums_search import RECIPES
    from lib.sections import common
    monkeypatch.setattr(common, "PREFIX_SUMS_PICK", None if pick is None else (pick, RECIPES[pick]))
    plan = profiles.stability("quick")
    e2h = profiles.easy_to_hard("quick")
    assert plan.test_ns == e2h.test_ns and plan.base == profiles.grid_base(e2h.runs[0])
    assert all(len(cfgs) == 2 for cfgs in plan.runs.values())                          # E2H_SEEDS: two seeds
    own = [k for k, cfgs in plan.runs.items() if cfgs == e2h.runs]
    assert len(own) == (0 if e2h.runs[0].injection == "adapter" else 1)                # 08's runs, not trained twice
    assert all(c.experiment == "stability" for k, cfgs in plan.runs.items() if k not in own for c in cfgs)


def test_stability_results_compare_internal_and_external_at_the_base_knobs():
    grid = profiles.paper_b_grid(PICK_LIKE)
    at32 = {k: 0.0 for k in grid}
    at32[PICK_LIKE._replace(outer_norm=True)] = 0.4                                   # internal linear, outer
    at32[profiles.Knobs("external", True, "peri", "linear", "rms")] = 0.1             # external linear, outer
    at32[profiles.Knobs("external", True, "peri", "add", "rms")] = 0.9                # another op: not claim 3's
    rows = {(k, s): summary_row(k, s, {16: 1.0, 32: at32[k], 64: 0.0}) for k in grid for s in (0, 1)}
    r = read09.stability_results(rows, sudoku_rows(), (16, 32, 64), (34, 28, 24), PICK_LIKE)
    assert r["internal_minus_external"] == 0.3 and r["compared_at_n"] == 32
    assert r["best_configuration"] == "external recall (add), outer norm" and r["best_is_recall_outer"] is True
    assert "internal recall, outer norm" in r["configurations"]          # the names the ledger reads


def _picked(search, pick) -> tuple[str, dict] | None:
    """The search's logged pick checked against the profile's constant `pick`: None or (name, changes)."""
    import json
    rows = [json.loads(x) for x in search.LOG.read_text().splitlines()] if search.LOG.exists() else []
    logged = search.decide(rows)["pick"]
    if pick is None:
        assert logged is None
        return None
    assert logged == pick[0] and pick[1] == search.RECIPES[pick[0]]
    return pick


def test_09s_quick_sudoku_is_the_pilot_pick_by_its_log():
    """09's quick sudoku is what searches/sudoku_pilot.py's logged rule picked; the pilot's run is 09's own."""
    from searches import sudoku_pilot as pilot
    from lib.config import run_id
    if (pick := _picked(pilot, profiles.SUDOKU_PICK)) is not None:
        assert run_id(profiles.stability("quick", (0,)).sudoku["internal"][0]) == run_id(pilot.config(pick[0], 0))


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
