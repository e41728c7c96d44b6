import numpy as np
import pytest

from lib import stats


def test_spearman_known_values():
    x = np.arange(10)
    assert stats.spearman(x, x ** 3).value == pytest.approx(1.0)
    assert stats.spearman(x, -x).value == pytest.approx(-1.0)
    # rho of [1..5] vs [2, 1, 4, 3, 5]: 1 - 6*sum(d^2)/(n(n^2-1)) = 1 - 6*4/120 = 0.8
    e = stats.spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5])
    assert e.value == pytest.approx(0.8)
    assert e.low <= e.value <= e.high


def test_auroc_known_values():
    assert stats.auroc([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1]).value == pytest.approx(1.0)
    assert stats.auroc([0.9, 0.8, 0.2, 0.1], [0, 0, 1, 1]).value == pytest.approx(0.0)
    # one of four positive-negative pairs ordered wrongly -> 0.75; a tie counts half
    assert stats.auroc([0.1, 0.6, 0.5, 0.9], [0, 0, 1, 1]).value == pytest.approx(0.75)
    assert stats.auroc([0.5, 0.5], [0, 1]).value == pytest.approx(0.5)


def test_interval_shrinks_with_more_data():
    rng = np.random.default_rng(0)
    small = rng.normal(size=12)
    big = rng.normal(size=400)
    e_small = stats.spearman(small, small + rng.normal(size=12))
    e_big = stats.spearman(big, big + rng.normal(size=400))
    assert (e_big.high - e_big.low) < (e_small.high - e_small.low)


def test_bad_input():
    with pytest.raises(ValueError, match="x, y"):
        stats.spearman([1, 2], [1, 2])
    with pytest.raises(ValueError, match="positive"):
        stats.auroc([1, 2, 3], [1, 1, 1])
