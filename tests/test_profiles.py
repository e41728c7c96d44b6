"""Every section's plan builds in every profile (the paper profile once crashed on a rotary control)."""
import pytest

from lib import profiles
from lib.model import LoopedTransformer


@pytest.mark.parametrize("profile", profiles.PROFILES)
@pytest.mark.parametrize("section", sorted(profiles.SECTIONS))
def test_plan_builds(section, profile):
    cfgs = profiles.SECTIONS[section](profile).configs()
    assert cfgs and len(set(cfgs)) == len(cfgs)


def test_rotary_untied_controls_have_even_head_widths():
    plan = profiles.architecture_prior("paper")
    rotary = [c for c in plan.extra if c.pos == "rotary" and not c.tied]
    assert rotary and all((c.d_model // c.n_heads) % 2 == 0 for c in rotary)
    for c in rotary:                                     # still the closest even-head width in parameters
        tied = next(t for t in plan.extra if t.pos == "rotary" and t.tied and t.n_heads == c.n_heads)
        target = LoopedTransformer(tied.model_config()).n_params()
        gap = abs(LoopedTransformer(c.model_config()).n_params() - target)
        for d in (c.d_model - 2 * c.n_heads, c.d_model + 2 * c.n_heads):
            if 0 < d <= tied.d_model:
                other = LoopedTransformer(type(c)(**{**c.to_dict(), "d_model": d}).model_config()).n_params()
                assert gap <= abs(other - target)


def test_the_tail_population_skips_demand_half_after_the_third_seed():
    full = profiles.tail_saturation("quick", list(range(7)))
    assert len(full.settled) == 17 and len(set(full.settled)) == 17
    assert all(c.seed < profiles.DEMANDING_SEEDS or c.demand >= 1 for c in full.settled)
    assert all(c.schedule == "proportional" and c.loss_loops == "tail" for c in full.settled)
    extra = profiles.tail_saturation("quick", [3, 4, 5, 6])        # what a session adds to seeds 0-2
    assert len(extra.settled) == 8 and {c.demand for c in extra.settled} == {1.0, 2.0}
    assert extra.fixed == full.fixed and {c.seed for c in full.fixed} == {0}
    assert all(c.schedule == "fixed" for c in full.fixed)
