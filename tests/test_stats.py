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


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_vectorised_intervals_equal_one_scipy_call_per_resample(seed):
    # the reference: scipy's own spearmanr / mannwhitneyu on every resample (constant or one-class
    # resamples scored 0 and 0.5), which the library replaced for speed
    from scipy import stats as st
    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(size=7), 1)              # small and rounded: ties and constant resamples occur
    y = np.round(x + rng.normal(size=7), 0)
    pos = np.array([1, 0, 0, 1, 0, 1, 0], bool)

    def rho(a, b):
        return 0.0 if np.ptp(a) == 0 or np.ptp(b) == 0 else st.spearmanr(a, b).statistic

    def auc(a, p):
        p = p.astype(bool)
        return 0.5 if p.all() or (~p).all() else st.mannwhitneyu(a[p], a[~p]).statistic / (p.sum() * (~p).sum())

    def reference(f, data):
        res = st.bootstrap(data, f, paired=True, vectorized=False, n_resamples=400, method="percentile",
                           random_state=np.random.default_rng(seed))
        return res.confidence_interval
    r, a = stats.spearman(x, y, seed=seed, n_resamples=400), stats.auroc(x, pos, seed=seed, n_resamples=400)
    assert (r.low, r.high) == pytest.approx(tuple(reference(rho, (x, y))), abs=1e-12)
    assert (a.low, a.high) == pytest.approx(tuple(reference(auc, (x, pos.astype(float)))), abs=1e-12)


def test_chance_bound_is_the_binomial_quantile_by_brute_force():
    from math import comb

    def quantile(n, p=0.05, level=0.95):          # smallest k with P(X <= k) >= level, summed by hand
        total = 0.0
        for k in range(n + 1):
            total += comb(n, k) * p ** k * (1 - p) ** (n - k)
            if total >= level - 1e-12:
                return k
    for n in (0, 1, 5, 15, 30, 90):
        assert stats.chance_bound(n) == quantile(n), n
    assert stats.chance_bound(15) == 2                 # 15 tail AUROCs: up to 2 significant by chance alone
    for bad in (-1, 2.5, True, "15"):
        with pytest.raises(ValueError, match="tests"):
            stats.chance_bound(bad)


def test_the_exact_auroc_test_reaches_the_smallest_p_and_agrees_with_scipy_without_ties():
    from scipy.stats import mannwhitneyu
    assert stats.auroc_exact_p(range(16), [i >= 12 for i in range(16)]) == pytest.approx(stats.smallest_p(16, 4))
    x = np.random.default_rng(0).normal(size=16)
    pos = np.arange(16) % 3 == 0
    assert stats.auroc_exact_p(x, pos) == pytest.approx(mannwhitneyu(x[pos], x[~pos], method="exact").pvalue)
    with pytest.raises(ValueError, match="positive: need"):
        stats.auroc_exact_p([1.0, 2.0], [True, True])
    with pytest.raises(ValueError, match="scores: finite"):
        stats.auroc_exact_p([1.0, float("nan"), 2.0], [True, False, False])


def test_the_exact_auroc_test_takes_a_side_of_one_case_and_keeps_ties():
    # one generalizing seed of 16: 16 relabellings, the single case's rank read against all of them
    assert stats.auroc_exact_p(np.arange(16.0), np.arange(16) == 15) == pytest.approx(stats.smallest_p(16, 1))
    assert stats.auroc_exact_p(np.arange(16.0), np.arange(16) != 3) == pytest.approx(2 * 4 / 16)
    # ties: 3 positives {1, 1, 2} against negatives {0, 1, 2}; checked against scipy's permutation test
    from scipy.stats import permutation_test, rankdata
    x = np.array([1.0, 1.0, 2.0, 0.0, 1.0, 2.0])
    pos = np.array([True, True, True, False, False, False])

    def u(a, b, axis=-1):
        r = rankdata(np.concatenate([a, b], axis=axis), axis=axis)
        return r[..., :a.shape[axis]].sum(axis) - a.shape[axis] * (a.shape[axis] + 1) / 2
    ref = permutation_test((x[pos], x[~pos]), u, permutation_type="independent", vectorized=True, n_resamples=np.inf)
    assert stats.auroc_exact_p(x, pos) == pytest.approx(min(1.0, ref.pvalue))


def test_the_permutation_spearman_is_small_for_a_monotone_pair_and_large_for_noise():
    x = np.arange(16.0)
    assert stats.spearman_permutation_p(x, x ** 3) < 0.001
    assert stats.spearman_permutation_p(x, np.random.default_rng(1).permutation(16)) > 0.05
    with pytest.raises(ValueError, match="constant"):
        stats.spearman_permutation_p(x, np.ones(16))


def test_holm_steps_down_and_the_binomial_test_counts_untied_pairs():
    assert stats.holm([0.01, 0.04, 0.03, 0.5]) == [True, False, False, False]
    assert stats.holm([0.001, 0.01, 0.02]) == [True, True, True]
    assert stats.holm([]) == []
    assert stats.one_sided_binomial_p(5, 0) == pytest.approx(1 / 32)
    assert stats.one_sided_binomial_p(0, 0) == 1.0


def test_the_difference_of_two_proportions_has_newcombes_interval():
    """Newcombe (1998), Statistics in Medicine 17: 873-890, table II, method 10 (hybrid score)."""
    from lib.stats import difference_of_proportions
    e = difference_of_proportions(56, 70, 48, 80)
    assert e.value == pytest.approx(0.2) and (e.low, e.high) == pytest.approx((0.0524, 0.3339), abs=1e-4)
    e = difference_of_proportions(9, 10, 3, 10)
    assert (e.low, e.high) == pytest.approx((0.1705, 0.8090), abs=1e-4)
    e = difference_of_proportions(3, 3, 3, 3)                 # 3 v 3 seeds all learned: nothing rejected
    assert e.value == 0 and e.low < -0.5 and e.high > 0.5
