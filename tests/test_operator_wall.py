"""05, the operator wall: the operator-first curriculum and the deadlock stop, the deadlock reading,
the wall's and the streaming controls' readers and figures on constructed runs, and the equal-budget
plan and its results (C05-wall's own reader: tests/test_wall_confirm.py)."""
import math

import numpy as np
import pytest

from lib import curriculum
from lib.config import RunConfig
from lib.profiles import CURRICULA, operator_wall
from lib.sections.s05_operator_wall import claims as claims05, figures as figures05, read as wall_reader
from lib.train import RunProgress, plateaued
from tests.constructed import SerialPropagator, fake_run
import matplotlib
from lib import plots

matplotlib.use("Agg")


def test_operator_first_stages_and_promotion():
    plan = operator_wall("quick")
    op = plan.runs[("A5", "operator_first")][0]
    joint = plan.runs[("A5", "joint")][0]
    assert op.curriculum_start == 2 and joint.curriculum_start == joint.n_train
    assert set(CURRICULA) == {"operator_first", "joint"}
    c = curriculum.LengthCurriculum(op.n_train, op.curriculum_start, op.curriculum_step, op.promote_acc, op.first_acc,
                               window=4)
    # stage 1 is the operator (length-2 words: g1 and g1∘g2); it needs first_acc, not promote_acc
    for step in range(1, 9):
        assert not c.update(step, 0.97)          # 0.97 would promote a later stage (promote_acc 0.95)
    assert c.length == 2
    assert not c.update(9, 1.0)                  # window (.97 .97 .97 1): mean .9775 < first_acc
    assert c.update(10, 1.0)                     # window (.97 .97 1 1): mean .985 >= first_acc
    assert c.length == 3 and c.promotions == [10]
    # later stages promote at promote_acc, one length at a time, never past n_train
    for length in range(4, op.n_train + 1):
        for _ in range(4):
            c.update(0, 0.96)
        assert c.length == length
    assert c.done
    for _ in range(8):
        c.update(0, 1.0)
    assert c.length == op.n_train


def test_plateaued_detects_a_flat_loss_and_not_a_falling_one():
    flat = [{"step": s, "loss": 4.0 + 0.001 * (s % 3)} for s in range(50, 2001, 50)]
    falling = [{"step": s, "loss": 4.0 - s / 1000} for s in range(50, 2001, 50)]
    assert plateaued(flat, 500, [])
    assert not plateaued(falling, 500, [])
    assert not plateaued(flat, 500, [1800])          # a promotion inside the window is progress
    assert not plateaued(flat[:15], 500, [])         # too early to tell
    # after a promotion the loss jumps up and falls again: still learning, not a plateau, even though
    # it stays above the best loss of the shorter length before the promotion
    promoted = ([{"step": s, "loss": 0.05} for s in range(50, 3001, 50)]
                + [{"step": s, "loss": 2.0 - 1.4 * (s - 3000) / 2000} for s in range(3050, 5001, 50)])
    assert not plateaued(promoted, 900, [3000])
    assert plateaued(promoted + [{"step": s, "loss": 0.6} for s in range(5050, 7001, 50)], 900, [3000])


def test_plateau_stop_ends_a_run_and_survives_resume():
    cfg = RunConfig(plateau_stop=100, max_steps=10_000)
    run = RunProgress(cfg)
    for _ in range(400):
        run.after_step(3.0, 0.0, cfg.curriculum_start)
        if run.finished:
            break
    assert run.finished and run.plateau_at == run.step and run.step < 10_000
    again = RunProgress(cfg)
    again.load_state_dict(run.state_dict())
    assert again.finished and again.plateau_at == run.plateau_at
    with pytest.raises(ValueError, match="plateau_stop: must be an integer >= 0"):
        RunConfig(plateau_stop=-1)


def _log(losses, every=50):
    return [{"step": every * (i + 1), "loss": loss, "length": 8, "last_acc": 0.0} for i, loss in enumerate(losses)]


def test_deadlock_reading_on_constructed_runs():
    from lib.sections.s05_operator_wall.read import deadlock, operator_entropy_level
    level = operator_entropy_level(120, 8)
    assert level == pytest.approx(7 / 8 * math.log(120))
    stuck = {"log": _log([level * 1.01] * 100), "promotions": [], "reached_length": 8, "steps": 5000,
             "plateau_at": 5000}
    r = deadlock(stuck, 120, [1.0] + [1 / 120] * 7)
    assert r.deadlocked and r.plateau and r.later_position_acc == pytest.approx(1 / 120)
    # the same flat loss but later positions learned: not a deadlock (a plateau near success)
    assert not deadlock(stuck, 120, [1.0] * 8).deadlocked
    # loss falling to near zero: no plateau, no deadlock
    learning = {"log": _log(list(np.linspace(5, 0.01, 100))), "promotions": [100, 900], "reached_length": 8,
                "steps": 5000}
    assert not deadlock(learning, 120, [1.0] * 8).plateau
    # flat but far below the entropy level (e.g. stuck at 6 of 8 positions): not the operator wall
    low = {"log": _log([0.3] * 100), "promotions": [], "reached_length": 8, "steps": 5000}
    assert not deadlock(low, 120, [1.0] * 6 + [0.0] * 2).deadlocked


def _wall_run(period, T_train, seed, log, plateau_at=None):
    run = fake_run(SerialPropagator(5, period), n_train=4, T_train=T_train, seed=seed)
    run.metrics = {"log": log, "promotions": [], "reached_length": 4, "steps": 50 * len(log), "plateau_at": plateau_at}
    return run


def test_wall_rows_on_constructed_runs():
    level = wall_reader.operator_entropy_level(5, 4)
    flat, falling = _log([level] * 60), _log(list(np.linspace(3, 0.01, 60)))
    learns, misses = (lambda s: _wall_run(1, 4, s, falling)), (lambda s: _wall_run(2, 4, s, falling))
    copies_g1 = lambda s, log: _wall_run(2, 2, s, log, 3000 if log is flat else None)   # only position 1 in 2 loops
    wall = {("A", "operator_first"): [learns(0), misses(1)], ("A", "joint"): [learns(0)],
            ("B", "operator_first"): [learns(0)], ("B", "joint"): [copies_g1(0, flat), copies_g1(1, falling)]}
    rows = wall_reader.wall_rows(wall, (8,), count=16)
    assert list(rows) == [("A", "operator_first", 0), ("A", "operator_first", 1), ("A", "joint", 0),
                          ("B", "operator_first", 0), ("B", "joint", 0), ("B", "joint", 1)]
    first = rows[("A", "operator_first", 0)]
    assert first["seq_acc"] == 1.0 and first["ood"] == {8: 1.0} and not first["reading"].deadlocked
    assert rows[("A", "operator_first", 1)]["pos_acc"].tolist() == [1.0, 1.0, 0.0, 0.0]
    stuck = rows[("B", "joint", 0)]
    assert stuck["pos_acc"].tolist() == [1.0, 0.0, 0.0, 0.0] and stuck["reading"].deadlocked
    assert stuck["entropy_at_n_train"] == pytest.approx(level) and stuck["log"] is flat
    assert not rows[("B", "joint", 1)]["reading"].deadlocked           # stuck accuracy, but the loss still falls


def test_streaming_pairs_give_each_schedule_its_own_loops():
    free = fake_run(SerialPropagator(5, 1), n_train=4, T_train=4)
    slow_stream = fake_run(SerialPropagator(5, 2), n_train=4, T_train=6, schedule="streaming")   # T = n + 2 < 2n
    fast_stream = fake_run(SerialPropagator(5, 1), n_train=4, T_train=6, schedule="streaming")
    pairs = wall_reader.streaming_pairs([free], [slow_stream], (8,), count=16)
    assert pairs == {"Z5": {"free": {4: 1.0, 8: 1.0}, "streaming": {4: 0.0, 8: 0.0}}}
    assert wall_reader.streaming_pairs([free], [fast_stream], (8,), 16)["Z5"]["streaming"] == {4: 1.0, 8: 1.0}
    with pytest.raises(ValueError):                                     # unpaired lists
        wall_reader.streaming_pairs([free, free], [fast_stream], (8,), 16)
    other = fake_run(SerialPropagator(5, 1), n_train=6, T_train=8, schedule="streaming")
    with pytest.raises(ValueError, match="a pair is one task at one training length"):
        wall_reader.streaming_pairs([free], [other], (8,), 16)


def test_figures_draw_from_the_readers_rows():
    matplotlib.use("Agg")
    wall = wall_reader.wall_rows({("A", "joint"): [_wall_run(1, 4, 0, _log([1.0] * 3))]}, (8,), 16)
    assert len(figures05.wall_loss(wall).axes) == 1 and len(figures05.wall_accuracy(wall, (8,)).axes) == 2
    # the legend keys only the curricula drawn, and the plateau level when one is given
    labels = [t.get_text() for t in figures05.wall_loss(wall, plateau_frac=0.8).legends[0].get_texts()]
    assert "joint" in labels and "operator-first" not in labels and any("plateau" in t for t in labels)
    # eighteen runs outgrow the colour cycle: colour names the group, the line the curriculum, the marker the seed
    many = wall_reader.wall_rows({(g, c): [_wall_run(1, 4, s, _log([1.0] * 3)) for s in (0, 1, 2)]
                                  for g in ("A", "B", "C") for c in ("joint", "operator_first")}, (8,), 16)
    lines = {ln.get_label(): ln for ln in figures05.wall_accuracy(many, (8,)).axes[1].lines}
    assert len(lines) == 18
    assert lines["A joint s0"].get_color() == lines["A operator_first s2"].get_color() != lines["B joint s0"].get_color()
    assert lines["A joint s0"].get_linestyle() != lines["A operator_first s0"].get_linestyle()
    assert lines["A joint s0"].get_marker() != lines["A joint s1"].get_marker() == lines["C joint s1"].get_marker()
    assert len(figures05.streaming_pairs({"Z5": {"free": {4: 1.0}, "streaming": {4: 0.0}}}).axes[0].lines) == 2
    per_seed = figures05.streaming_pairs({("Z5", "joint", s): {"free": {4: 1.0}, "streaming": {4: 0.0}} for s in (0, 1)})
    assert [ln.get_label() for ln in per_seed.axes[0].lines] == ["Z5 joint 0 free", "Z5 joint 0 streaming",
                                                               "Z5 joint 1 free", "Z5 joint 1 streaming"]
    lines = per_seed.axes[0].lines
    # one colour a task and curriculum, one line style a schedule, one marker a seed
    assert len({ln.get_color() for ln in lines}) == 1
    assert lines[0].get_linestyle() == lines[2].get_linestyle() != lines[1].get_linestyle() == lines[3].get_linestyle()
    assert lines[0].get_marker() == lines[1].get_marker() != lines[2].get_marker() == lines[3].get_marker()
    two_tasks = figures05.streaming_pairs({(t, "joint", 0): {"free": {4: 1.0}, "streaming": {4: 0.0}} for t in ("Z5", "S4")})
    assert two_tasks.axes[0].lines[0].get_color() != two_tasks.axes[0].lines[2].get_color()
    # a run at 0 at every length hides on the axis: the legend names it
    assert any("(streaming): all 2 runs" in t.get_text() for t in per_seed.axes[0].get_legend().get_texts())


@pytest.mark.parametrize("profile", ["smoke", "quick"])
def test_the_fair_wall_offers_every_curriculum_the_same_steps_and_reuses_the_walls_runs(profile):
    from dataclasses import replace
    from lib import profiles
    plan = profiles.fair_wall(profile)
    wall, nc1, solvable = profiles.FAIR_GROUPS[profile]
    assert {g for g, _ in plan.runs} == {wall, nc1, solvable} and {name for _, name in plan.runs} == set(CURRICULA)
    cfgs = [c for cs in plan.runs.values() for c in cs]
    assert {c.max_steps for c in cfgs} == {profiles.operator_wall(profile, (0,)).runs[(wall, "operator_first")][0].max_steps}
    assert all(c.plateau_stop == 0 for c in cfgs)           # equal budgets: the wall's operator-first budget for all
    assert all([c.seed for c in cs] == [0, 1, 2] for cs in plan.runs.values())               # >= 3 seeds each
    for (g, name), cs in plan.runs.items():         # the curricula differ in where they start, nothing else
        other = plan.runs[(g, "joint" if name == "operator_first" else "operator_first")]
        assert [replace(c, curriculum_start=1) for c in cs] == [replace(c, curriculum_start=1) for c in other]
        assert all(c.curriculum_start == (2 if name == "operator_first" else c.n_train) for c in cs)
    # forced seriality on the wall with its help and on the solvable group trained jointly, each streaming
    # run paired with the free run of its task, seed and curriculum, T = n + 2
    assert plan.free == plan.runs[(wall, "operator_first")] + plan.runs[(solvable, "joint")]
    for st, fr in zip(plan.streaming, plan.free, strict=True):
        assert st.schedule == "streaming" and st.T_train == fr.n_train + 2
        assert replace(st, schedule=fr.schedule, T_train=fr.T_train) == fr
    old = profiles.operator_wall(profile, (0, 1))                # the wall's operator-first runs, not trained twice
    for g in (wall, nc1):
        assert set(old.runs[(g, "operator_first")]) <= set(plan.runs[(g, "operator_first")])
    assert profiles.fair_wall_groups(profile) == {"wall": wall, "nc1": nc1, "solvable": solvable}
    assert profiles.SECTIONS["operator_wall"] is profiles.fair_wall          # what 05 reads is what the CLI trains


def test_the_paper_profiles_fair_wall_holds_its_stated_budget_for_every_run():
    from lib import profiles
    plan = profiles.fair_wall("paper")
    cfgs = [c for cs in plan.runs.values() for c in cs] + list(plan.streaming)
    assert {c.max_steps for c in cfgs} == {profiles.FAIR_STEPS["paper"]} and all(c.plateau_stop == 0 for c in cfgs)
    assert {g for g, _ in plan.runs} == {"S5", "A5", "S4"} and len(cfgs) == 3 * 2 * 3 + 6
    assert profiles.fair_wall_groups("paper") == {"wall": "S5", "nc1": "A5", "solvable": "S4"}
    with pytest.raises(ValueError, match="profile"):
        profiles.fair_wall_groups("huge")


def test_fair_wall_results_judge_nc1_against_the_solvable_group_and_streaming_per_seed():
    from types import SimpleNamespace as NS
    def row(seq, ood, dead=False, steps=20000):
        return dict(seq_acc=seq, ood={12: ood[0], 16: ood[1]}, reading=NS(deadlocked=dead),
                    config=NS(max_steps=steps))
    rows = {("S5", "operator_first", 0): row(1.0, (0.5, 0.1)), ("S5", "operator_first", 1): row(0.1, (0, 0)),
            ("S5", "joint", 0): row(0.0, (0, 0), True), ("S5", "joint", 1): row(0.0, (0, 0), False),
            ("A5", "operator_first", 0): row(1.0, (0.6, 0.02)), ("A5", "operator_first", 1): row(1.0, (0.4, 0.0)),
            ("A5", "joint", 0): row(0.2, (0, 0)), ("A5", "joint", 1): row(0.95, (0, 0)),
            ("S4", "operator_first", 0): row(1.0, (0.9, 0.3)), ("S4", "operator_first", 1): row(1.0, (0.7, 0.3)),
            ("S4", "joint", 0): row(1.0, (0.3, 0.0)), ("S4", "joint", 1): row(0.5, (0.0, 0.0))}
    pairs = {("S4", "joint", 0): {"free": {8: 1.0, 12: 0.3}, "streaming": {8: 0.2, 12: 0.1}},
             ("S4", "joint", 1): {"free": {8: 0.95, 12: 0.2}, "streaming": {8: 0.55, 12: 0.2}},
             ("S5", "operator_first", 0): {"free": {8: 0.5, 12: 0.1}, "streaming": {8: 0.0, 12: 0.0}}}
    fair = wall_reader.fair_wall_results
    r = fair(rows, pairs, (12, 16), 0.9, wall="S5", nc1="A5", solvable="S4")
    # S4 carries (mean >= 0.5) at 12 (0.8), not at 16 (0.3): compared at 12, A5's 0.5 against S4's 0.8
    assert r["nc1_compared_at_n"] == 12 and r["nc1_minus_solvable_ood"] == pytest.approx(-0.3)
    assert r["ood_by_group"]["S4"] == {"12": 0.8, "16": 0.3}
    assert r["wall_joint_deadlock_fraction"] == 0.5
    assert r["wall_learned_fraction"] == {"operator_first": 0.5, "joint": 0.0} and r["budgets"] == [20000]
    assert r["nc1_learned_fraction"] == {"operator_first": 1.0, "joint": 0.5}
    # the old absolute row beside it: the worst operator-first A5 seed in distribution or at n = 16
    assert r["a5_ood_acc"] == 0.0 and r["a5_learned_fraction"] == r["nc1_learned_fraction"]
    # S4 joint at n = 8: both free runs learned, gaps 0.8 and 0.4; at 12 free learned nowhere; S5's free
    # run never learned: no gap there
    assert r["streaming_gaps"] == {"S4 joint n=8": pytest.approx(0.6)} and r["streaming_gap"] == pytest.approx(0.6)
    assert fair(rows, {}, (12, 16), 0.9, "S5", "A5", "S4")["streaming_gap"] is None
    # where S4 scores but does not carry, A5 has nothing to be compared with: None, not a pass
    weak = {k: ({**v, "ood": {12: 0.3, 16: 0.06}} if k[0] == "S4" else v) for k, v in rows.items()}
    assert fair(weak, pairs, (12, 16), 0.9, "S5", "A5", "S4")["nc1_minus_solvable_ood"] is None
    with pytest.raises(ValueError, match="group 'S4' needs operator-first and joint runs"):
        fair({k: v for k, v in rows.items() if k[0] != "S4"}, pairs, (12, 16), 0.9, "S5", "A5", "S4")
    with pytest.raises(ValueError, match="the same seeds"):
        fair({k: v for k, v in rows.items() if k != ("A5", "joint", 1)}, pairs, (12, 16), 0.9, "S5", "A5", "S4")
    with pytest.raises(ValueError, match="step budgets"):
        fair({**rows, ("S5", "joint", 1): row(0.0, (0, 0), steps=8000)}, pairs, (12, 16), 0.9, "S5", "A5", "S4")
    for c in claims05.FAIR_WALL_CLAIMS:                            # the pre-registered bars read these numbers
        assert c.key in r and c.notebook == "05_operator_wall"
    assert claims05.FAIR_WALL_CLAIMS[0].holds(-0.05) and not claims05.FAIR_WALL_CLAIMS[0].holds(r["nc1_minus_solvable_ood"])


def _texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]


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
