"""The paper profile runs: every section's paper configs build and train (2 steps, tiny batch, CPU),
and the default profile's upper-bound cost fits the 6 h one H200 session is given."""
import math

import pytest

from bench import paper_plan
from lib import profiles
from lib.config import RunConfig


def test_every_paper_config_trains_and_the_profile_fits_one_gpu_session():
    rows = paper_plan.plan(train_steps=2)
    assert [r["section"] for r in rows] == list(profiles.SECTIONS)
    every = {c for section in profiles.SECTIONS.values() for c in section("paper").configs()}
    assert sum(r["runs"] for r in rows) == len(every)          # a run two sections read is counted once
    assert all(math.isfinite(r["pflop"]) and (r["pflop"] > 0) == (r["runs"] > 0) for r in rows)
    assert sum(r["h200_hours"] for r in rows) <= 6.0


def test_flops_grow_with_loops_batch_and_size():
    base = RunConfig(task="S4", n_train=8, T_train=4, n_layers=1, d_model=32, n_heads=2, batch=4)
    f = paper_plan.flops_per_step(base)
    assert paper_plan.flops_per_step(RunConfig(**{**base.to_dict(), "T_train": 8})) == pytest.approx(2 * f, rel=0.05)
    assert paper_plan.flops_per_step(RunConfig(**{**base.to_dict(), "batch": 8})) == pytest.approx(2 * f)
    assert paper_plan.flops_per_step(RunConfig(**{**base.to_dict(), "T_jitter": 2.0})) > 1.9 * f


def test_the_large_size_is_optional_and_named():
    default = profiles.budget_law("paper").configs()
    with_l = profiles.budget_law("paper", sizes=profiles.PAPER_SIZES_WITH_L).configs()
    assert {c.d_model for c in default} == {128, 256} and 512 in {c.d_model for c in with_l}
    with pytest.raises(ValueError, match="SIZES"):
        profiles.budget_law("paper", sizes=("xl",))
