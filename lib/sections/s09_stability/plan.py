"""09 fixed-point stability (Paper B): Paper B's knobs (recall placement and op, outer normalisation,
norm placement and kind) one at a time around 08's prefix-sums run, and sudoku with external against
internal recall."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

from ...config import RunConfig
from ...model import NORM_KINDS, NORMS, PRESETS
from ..common import (E2H_SEEDS, PREFIX_SUMS_EVAL_COUNT, STUDY_MODE, check_params, prefix_sums_lengths, prefix_sums_runs,
                      reserved_seeds)
from ..s08_easy_to_hard.plan import confirm_recipe


class Knobs(NamedTuple):
    """One configuration of 09's grid: Paper B's knobs as its code has them. recall: "none", "external"
    (at the block's entry) or "internal" (inside each sublayer); outer_norm: our reading of Paper B's outer
    normalisation (a norm on the state after every loop); norm: the block's placement (model.NORMS);
    recall_op: how recall combines state and input (model.RECALL_OPS); norm_kind: "layer" or "rms"."""
    recall: str
    outer_norm: bool
    norm: str = "pre"
    recall_op: str = "add"
    norm_kind: str = "layer"


@dataclass(frozen=True)
class StabilityPlan:
    runs: dict                         # Knobs -> tuple of RunConfig (one per seed)
    test_ns: tuple[int, ...]
    long_factor: int                   # loops for the fixed-point reading = long_factor * T_train
    eval_count: int
    sudoku: dict                       # recall -> tuple of RunConfig (outer norm on; bidirectional)
    sudoku_givens: tuple[int, ...]     # test difficulties: the training one first, then fewer givens
    base: Knobs = Knobs("none", False)  # the knobs of 08's run the grid varies (labels name what differs)

    def configs(self) -> tuple[RunConfig, ...]:
        """Every run this plan trains, parents before children, each once."""
        return tuple(dict.fromkeys(c for cfgs in list(self.runs.values()) + list(self.sudoku.values()) for c in cfgs))


RECALLS = {"none": "none", "external": "add", "internal": "internal"}   # Paper B's name -> our injection


def knobs_of(cfg: RunConfig) -> Knobs:
    """The grid's knobs of one run's config."""
    recall = {v: k for k, v in RECALLS.items()}.get(cfg.injection)
    if recall is None:
        raise ValueError(f"injection: {cfg.injection!r} is not one of Paper B's recalls; allowed: "
                         f"{tuple(RECALLS.values())}")
    return Knobs(recall, cfg.outer_norm, cfg.norm, cfg.recall_op, cfg.norm_kind)


def with_knobs(cfg: RunConfig, k: Knobs) -> RunConfig:
    return replace(cfg, injection=RECALLS[k.recall], outer_norm=k.outer_norm, norm=k.norm, recall_op=k.recall_op,
                   norm_kind=k.norm_kind)


def paper_b_grid(base: Knobs) -> tuple[Knobs, ...]:
    """Paper B's knobs one at a time around `base` (08's run), fixed before any of its runs trained:
    every recall placement and op (no recall; external add / the base's op; internal add / linear / concat)
    without outer norm; no, external and internal recall with it (the base's op; concat is internal only,
    so external takes add there); the base with each other norm placement; the base with the other norm
    kind: 12 configurations around 08's quick pick (settled_local: Paper A's adapter recall, read as external
    additive, with outer norm, pre-norm, LayerNorm), 14 around a peri/RMS/internal-linear base."""
    ext_op = base.recall_op if base.recall_op != "concat" else "add"
    none = Knobs("none", False, base.norm, "add", base.norm_kind)
    grid = [none,
            none._replace(recall="external"), none._replace(recall="external", recall_op=ext_op),
            none._replace(recall="internal"), none._replace(recall="internal", recall_op="linear"),
            none._replace(recall="internal", recall_op="concat"),
            none._replace(outer_norm=True),
            none._replace(recall="external", recall_op=ext_op, outer_norm=True),
            none._replace(recall="internal", recall_op=base.recall_op, outer_norm=True),
            none._replace(recall="external", outer_norm=True)]
    grid += [base._replace(norm=n) for n in NORMS if n != base.norm]
    grid += [base._replace(norm_kind=next(k for k in NORM_KINDS if k != base.norm_kind))]
    return tuple(dict.fromkeys(grid))


def grid_base(cfg: RunConfig) -> Knobs:
    """The knobs `paper_b_grid` varies around 08's run: its own, except that Paper A's adapter recall
    (W [h, e], not one of Paper B's) is read as external additive recall, the nearest of Paper B's."""
    if cfg.injection == "adapter":
        return Knobs("external", cfg.outer_norm, cfg.norm, "add", cfg.norm_kind)
    return knobs_of(cfg)


def sudoku_base(profile: str) -> RunConfig:
    """09's sudoku run of `profile` before recall and seed: one bidirectional layer with learned cell
    positions and outer normalisation, at the public recipe's training difficulty."""
    board = dict(task="sudoku", n_train=81, curriculum_start=81, causal=False, pos="learned",
                 outer_norm=True, experiment="stability" if profile != "smoke" else "smoke")
    size = {"smoke": dict(d_model=16, n_heads=2, T_train=2, batch=8, max_steps=5, eval_count=16),
            "quick": dict(d_model=64, n_heads=4, T_train=16, batch=32, max_steps=2000, polish_steps=200,
                          eval_count=256),
            "paper": dict(**PRESETS["s"], T_train=32, batch=64, max_steps=30000, eval_count=1024)}[profile]
    return RunConfig(**{**board, **size, "n_layers": 1})


# 09's quick sudoku recipe: the pilot's pick by its logged rule, (name, changes) as searches/sudoku_pilot.py's
# RECIPES has it (tests/test_stability.py holds it against the log); None while the pilot has not decided
SUDOKU_PICK: tuple[str, dict] | None = ("grid34", {"pos": "grid", "max_steps": 4000})


def stability(profile: str, seeds=None) -> StabilityPlan:
    """Paper B's grid on prefix sums (single-layer looped block), on the profile's easy-to-hard runs
    (seeds None: the profile's, `E2H_SEEDS`). Quick: `paper_b_grid` around 08's run, to 08's test
    lengths; the configuration that is 08's run reads 08's runs (not trained twice), the others are
    stored under 09's experiment. Smoke and paper (the paper profile's GPU plan, unchanged): recall
    none / external / internal x outer normalisation off / on, pre-norm (the paper profile adds peri-
    and post-norm), additive recall and LayerNorm. With 09's sudoku: external against internal recall."""
    check_params(profile, None if seeds is None else list(seeds))
    seeds = E2H_SEEDS[profile] if seeds is None else tuple(seeds)
    prefix = prefix_sums_runs(profile, seeds)                 # 08's runs
    experiment = "stability" if profile != "smoke" else "smoke"
    stored = lambda c, k: replace(with_knobs(c, k), experiment=experiment, n_layers=1)      # noqa: E731
    if profile == "quick":
        base = grid_base(prefix[0])
        same = lambda c, k: replace(stored(c, k), experiment=c.experiment) == c   # noqa: E731  (08's run)
        runs = {k: tuple(c if same(c, k) else stored(c, k) for c in prefix) for k in paper_b_grid(base)}
    else:
        base = Knobs("none", False)
        norms = ("pre",) if profile != "paper" else ("pre", "peri", "post")
        grid = tuple(Knobs(recall, outer, norm) for recall in RECALLS for outer in (False, True) for norm in norms)
        runs = {k: tuple(stored(c, k) for c in prefix) for k in grid}
    # sudoku (Paper B: internal recall "substantially better" there): external against internal
    # recall, both with outer normalisation, a single bidirectional layer
    from ...sudoku import HARDER_GIVENS, TRAIN_GIVENS
    board = sudoku_base(profile)
    if profile == "quick" and SUDOKU_PICK is not None:
        board = replace(board, **SUDOKU_PICK[1])
    sudoku = {recall: tuple(replace(board, injection=RECALLS[recall], seed=s) for s in seeds)
              for recall in ("external", "internal")}
    return StabilityPlan(runs, prefix_sums_lengths(profile), 4, PREFIX_SUMS_EVAL_COUNT[profile], sudoku, (TRAIN_GIVENS,) + HARDER_GIVENS, base)


# The C43-recall and C43-sudoku studies (paper/PREREGISTRATION.md). C43-recall: Paper B's recall x outer
# norm on C43-easy-to-hard's recipe (P43's prefix-sums pick). C43-sudoku: each recall at P43's sudoku
# pick for it; the candidates are searches/p43_pilots.py's (held equal by tests/test_e2h_confirm.py) and
# SUDOKU_CONFIRM_PICKS is the pilot's logged pick {recall: candidate} once read, None before.
RECALL_STUDY_SEEDS = reserved_seeds(175, 3)
RECALL_STUDY_KNOBS = tuple(Knobs(recall, outer) for recall in RECALLS for outer in (False, True))
SUDOKU_STUDY_SEEDS = reserved_seeds(185, 3)
SUDOKU_CANDIDATES = {"lr1e-3_4k": (1e-3, 4000), "lr3e-4_4k": (3e-4, 4000), "lr1e-3_8k": (1e-3, 8000),
                     "lr3e-4_8k": (3e-4, 8000)}
SUDOKU_CONFIRM_PICKS: dict[str, str] | None = {"external": "lr1e-3_8k", "internal": "lr1e-3_8k"}


def recall_study_runs(pick: str | None = None) -> dict:
    """Knobs -> the configuration's runs (RECALL_STUDY_SEEDS, STUDY_MODE, experiment `confirm_recall`,
    1 layer); empty before P43's prefix-sums pick."""
    base = confirm_recipe(pick)
    if base is None:
        return {}
    return {k: tuple(replace(with_knobs(base, k), n_layers=1, experiment="confirm_recall", seed=s, mode=STUDY_MODE)
                     for s in RECALL_STUDY_SEEDS) for k in RECALL_STUDY_KNOBS}


def recall_study(pick: str | None = None) -> tuple[RunConfig, ...]:
    """The C43-recall queue: seed by seed, the six configurations within a seed."""
    runs = recall_study_runs(pick)
    return tuple(cfgs[i] for i in range(len(RECALL_STUDY_SEEDS)) for cfgs in runs.values())


def sudoku_study_runs(picks: dict | None = None) -> dict:
    """recall -> its runs at P43's pick for it (SUDOKU_STUDY_SEEDS, STUDY_MODE, experiment
    `confirm_sudoku`); empty before the pick."""
    picks = SUDOKU_CONFIRM_PICKS if picks is None else picks
    if picks is None:
        return {}
    if set(picks) != {"external", "internal"} or not set(picks.values()) <= set(SUDOKU_CANDIDATES):
        raise ValueError(f"picks: one of {sorted(SUDOKU_CANDIDATES)} for each of external and internal, got {picks}")
    board = replace(sudoku_base("quick"), **SUDOKU_PICK[1])
    return {recall: tuple(replace(board, injection=RECALLS[recall], lr=SUDOKU_CANDIDATES[picks[recall]][0],
                                  max_steps=SUDOKU_CANDIDATES[picks[recall]][1], experiment="confirm_sudoku", seed=s,
                                  mode=STUDY_MODE) for s in SUDOKU_STUDY_SEEDS)
            for recall in ("external", "internal")}


def sudoku_study(picks: dict | None = None) -> tuple[RunConfig, ...]:
    """The C43-sudoku queue: seed by seed, external then internal within a seed."""
    runs = sudoku_study_runs(picks)
    return tuple(cfgs[i] for i in range(len(SUDOKU_STUDY_SEEDS)) for cfgs in runs.values())
