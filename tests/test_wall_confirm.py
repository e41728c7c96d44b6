"""The C05-wall readings (`sections.s05_operator_wall.confirm`) on constructed rows, and the entry's rules applied
to them through `claims.CONFIRMATORY`: each rule's bands reachable, rule 3's "any joint S5 seed learns"."""
from dataclasses import replace
from types import SimpleNamespace

import pytest

from lib import claims, rules
from lib.config import RunConfig
from lib.sections.s05_operator_wall.confirm import leave_step, wall_confirm_results
from lib.sections.s05_operator_wall.read import operator_entropy_level

LONG = (10, 12, 14, 16)
BASE = RunConfig(task="S5", n_train=8, T_train=8, max_steps=60000, mode="cpu-eager-fp32")


def row(group, curriculum, seed, acc, ood=0.0, dead=False, losses=(4.0,)):
    cfg = replace(BASE, task=group, seed=seed, curriculum_start=2 if curriculum == "operator_first" else 8)
    n_classes = {"S5": 120, "A5": 60, "S4": 24}[group]
    log = [{"step": 50 * (k + 1), "loss": v, "length": 8} for k, v in enumerate(losses)]
    return (group, curriculum, seed), dict(config=cfg, seq_acc=acc, ood={n: ood for n in LONG}, log=log,
                                           reading=SimpleNamespace(deadlocked=dead),
                                           entropy_at_n_train=operator_entropy_level(n_classes, 8))


def wall(s5_joint=(0.0, 0.0, 0.0), dead=(True, True, True), a5_first=(1.0, 1.0, 1.0), a5_ood=0.8, s4_ood=0.8,
         s4_joint=(1.0, 1.0, 1.0)):
    rows = {}
    for seed in (100, 101, 102):
        k = seed - 100
        rows.update([row("S5", "operator_first", seed, 1.0), row("S5", "joint", seed, s5_joint[k], dead=dead[k]),
                     row("A5", "operator_first", seed, a5_first[k], a5_ood), row("A5", "joint", seed, 0.0),
                     row("S4", "operator_first", seed, 1.0, s4_ood), row("S4", "joint", seed, s4_joint[k])])
    pairs = {("S4", "joint", s): {"free": {8: 1.0, **{n: 0.5 for n in LONG}}, "streaming": {8: 0.1, **{n: 0.0 for n in LONG}}}
             for s in (100, 101, 102)}
    return wall_confirm_results(rows, pairs, LONG, 0.9)


def conf(results, key):
    return claims.confirmatory_verdict(claims.claim(key))[0] if rules.record_confirmatory("C05-wall", results) else None


def test_every_rule_reads_reproduced_on_the_paper_picture(store_root):
    r = wall()
    assert r["wall_joint_deadlock_score"] == 1.0 and r["nc1_compared_at_n"] == 16
    assert r["nc1_minus_solvable_ood"] == 0.0 and r["streaming_gap"] == 0.9
    assert r["learned_by_cell"]["S5 joint"] == {"learned": 0, "of": 3, "interval": [0.0, 0.561]}
    for key in ("a5_ood_acc", "nc1_minus_solvable_ood", "wall_joint_deadlock_fraction",
                "wall_operator_first_fraction", "streaming_gap"):
        assert conf(r, key) == "reproduced", key


def test_a_joint_s5_seed_that_learns_is_not_reproduced_whatever_share_deadlocked(store_root):
    r = wall(s5_joint=(0.95, 0.0, 0.0), dead=(False, True, True))
    assert r["wall_joint_deadlock_fraction"] == pytest.approx(0.667, abs=1e-3) and r["wall_joint_deadlock_score"] == 0.0
    assert conf(r, "wall_joint_deadlock_fraction") == "not reproduced"
    r = wall(s5_joint=(0.5, 0.0, 0.0), dead=(False, True, True))          # stalled, left the plateau, not learned
    assert conf(r, "wall_joint_deadlock_fraction") == "partly"


def test_a5_against_s4_uses_learned_seeds_only_and_needs_two_of_each(store_root):
    r = wall(a5_first=(1.0, 0.0, 0.0))                                   # one learned A5 seed
    assert r["nc1_compared_at_n"] is None and conf(r, "nc1_minus_solvable_ood") == "not measured"
    assert conf(r, "a5_ood_acc") == "partly"
    r = wall(a5_ood=0.2, s4_ood=0.8)
    assert r["nc1_minus_solvable_ood"] == pytest.approx(-0.6) and conf(r, "nc1_minus_solvable_ood") == "not reproduced"
    assert r["a5_absolute_at_2n"] is None and not r["s4_passes_absolute_at_2n"]   # S4 fails 0.9 at 16: not read
    r = wall(s4_ood=0.3)                                                 # S4 never carries 0.5
    assert r["nc1_compared_at_n"] is None


def test_leave_step_is_the_first_logged_step_below_the_level():
    _, r = row("S5", "joint", 100, 0.0, losses=(4.5, 4.2, 3.5, 4.0))
    assert round(0.8 * r["entropy_at_n_train"], 3) == 3.351
    assert leave_step(r) is None
    _, r = row("S5", "joint", 100, 0.0, losses=(4.5, 3.2, 4.0))
    assert leave_step(r) == 100


def test_the_ledger_prints_the_readings_the_entry_puts_beside_a_verdict(store_root):
    r = wall(a5_first=(1.0, 1.0, 0.0))
    rules.record_confirmatory("C05-wall", r)
    v, value, why = claims.confirmatory_verdict(claims.claim("wall_joint_deadlock_fraction"))
    assert v == "reproduced" and "beside: wall_joint_deadlock_fraction 1" in why and "a5_joint_learned_fraction 0" in why


def test_streaming_counts_a_free_run_learned_by_its_in_distribution_accuracy(store_root):
    """The pairs' shared words at n = 8 read 1.0 for every free run; two free runs miss 0.9 on their own
    in-distribution sets, so they are not learned and rule 5's precondition (2 of 3) fails."""
    r = wall(s4_joint=(1.0, 0.85, 0.5))
    assert r["free_learned_fraction"] == pytest.approx(1 / 3) and conf(r, "streaming_gap") == "not measured"
    r = wall(s4_joint=(1.0, 1.0, 0.5))
    assert r["free_learned_fraction"] == pytest.approx(2 / 3) and conf(r, "streaming_gap") == "reproduced"
