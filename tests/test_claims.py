import json
import math

import pytest

from lib import claims


@pytest.mark.parametrize("c", claims.CLAIMS, ids=lambda c: c.key)
def test_reproduced_only_with_a_value_inside_tolerance(c):
    assert claims.verdict(c, None, ran=False) == "not run"
    assert claims.verdict(c, None, ran=True) == "not reproduced"
    assert claims.verdict(c, float("nan")) == "not reproduced"
    for v in [-10.0, -1.0, 0.0, 0.05, 0.5, 0.9, 0.95, 0.98, 1.0, 1.05, 1.2, 2.0, 10.0, math.inf]:
        if claims.verdict(c, v) == "reproduced":
            assert c.holds(v)
    assert claims.verdict(c, -1e9) != "reproduced" or c.holds(-1e9)


def test_report_lists_every_finding_and_reads_results(store_root):
    text = claims.report()
    for finding in range(1, 7):
        assert f"| {finding} |" in text, f"finding {finding} of PAPER.md has no row"
    assert "not run" in text and "| reproduced |" not in text
    claims.record("03_budget_law", {"budget_exponent": 0.97, "budget_r2": 0.5})
    text = claims.report()
    row = next(l for l in text.splitlines() if "(n_train/T_train)^b" in l)
    assert "| 0.97 |" in row and "| reproduced |" in row
    row = next(l for l in text.splitlines() if "power law fits" in l)
    assert "| not reproduced |" in row
    row = next(l for l in text.splitlines() if "T = n" in l)
    assert "| not reproduced |" in row        # the notebook ran but did not measure it


def test_unknown_claim():
    with pytest.raises(KeyError, match="claim"):
        claims.claim("nope")
