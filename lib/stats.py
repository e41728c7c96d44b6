"""Statistics the notebooks report, thin wrappers over scipy.stats (no hand-rolled statistics).

- Spearman rank correlation with a bootstrap percentile interval (resampling models with replacement).
- AUROC of a score for a binary outcome, computed as U / (n1 * n0) from the Mann-Whitney U test,
  with a bootstrap interval.
- A difference of two proportions with Newcombe's interval, built from scipy's Wilson intervals.
- The smallest p-value a contest's split allows (exact permutation bound): a contest's power.

The bootstrap statistics are vectorised over resamples (scipy's `vectorized=True`): the same
resamples and the same statistics as one call per resample, without 2,000 scipy calls per interval.
Inside the bootstrap, Spearman's rho is Pearson's r of the ranks (its definition; scipy.stats.pearsonr
over the resamples' axis) and U is the positives' rank sum less n1 (n1 + 1) / 2 (how mannwhitneyu
computes it), ranks by scipy.stats.rankdata with ties averaged, as both tests rank.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass
class Estimate:
    value: float
    low: float
    high: float
    n: int

    def __str__(self) -> str:
        return f"{self.value:+.2f} [{self.low:+.2f}, {self.high:+.2f}] (n={self.n})"


def _bootstrap(statistic, data, seed: int, n_resamples: int) -> tuple[float, float]:
    res = stats.bootstrap(data, statistic, paired=True, vectorized=True, n_resamples=n_resamples,
                          method="percentile", random_state=np.random.default_rng(seed))
    lo, hi = res.confidence_interval
    return float(lo), float(hi)


def _constant(a: np.ndarray) -> np.ndarray:
    return np.ptp(a, axis=-1) == 0


def spearman(x, y, seed: int = 0, n_resamples: int = 2000) -> Estimate:
    """Spearman's rho of x and y with a 95 % bootstrap interval; nan where undefined (ties only)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if len(x) != len(y) or len(x) < 3:
        raise ValueError(f"x, y: need two equally long samples of at least 3, got {len(x)} and {len(y)}")

    def rho(a, b, axis=-1):   # a resample can be constant: its correlation is undefined, count it as 0
        flat = _constant(a) | _constant(b)
        ra = np.where(flat[..., None], np.arange(a.shape[-1]), stats.rankdata(a, axis=-1))
        rb = np.where(flat[..., None], np.arange(b.shape[-1]), stats.rankdata(b, axis=-1))
        return np.where(flat, 0.0, stats.pearsonr(ra, rb, axis=-1).statistic)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return Estimate(float("nan"), float("nan"), float("nan"), len(x))
    value = stats.spearmanr(x, y).statistic
    lo, hi = _bootstrap(rho, (x, y), seed, n_resamples)
    return Estimate(float(value), lo, hi, len(x))


def auroc(scores, positive, seed: int = 0, n_resamples: int = 2000) -> Estimate:
    """Probability that a random positive scores higher than a random negative (ties count half)."""
    s, pos = np.asarray(scores, float), np.asarray(positive, bool)
    if pos.all() or (~pos).all():
        raise ValueError("positive: need at least one positive and one negative case")

    def auc(a, p, axis=-1):   # a resample with one class only has no ordering to score: 0.5
        p = p.astype(bool)
        n1, n0 = p.sum(-1), (~p).sum(-1)
        u = np.where(p, stats.rankdata(a, axis=-1), 0.0).sum(-1) - n1 * (n1 + 1) / 2
        return np.where((n1 == 0) | (n0 == 0), 0.5, u / np.maximum(n1 * n0, 1))
    value = stats.mannwhitneyu(s[pos], s[~pos]).statistic / (pos.sum() * (~pos).sum())
    lo, hi = _bootstrap(auc, (s, pos.astype(float)), seed, n_resamples)
    return Estimate(float(value), lo, hi, len(s))


def chance_bound(tests: int, alpha: float = 0.05, level: float = 0.95) -> int:
    """How many of `tests` results at false-positive rate `alpha` each can come out significant by chance
    alone, at most, with probability `level`: the `level` quantile of Binomial(tests, alpha). Taken as
    independent tests; correlated ones (metrics of the same seeds) spread the chance count wider, so
    against them this bound is strict."""
    if isinstance(tests, bool) or not isinstance(tests, (int, np.integer)) or tests < 0:
        raise ValueError(f"tests: a count >= 0, got {tests!r}")
    return int(stats.binom.ppf(level, tests, alpha))


def proportion(k: int, n: int, level: float = 0.95) -> Estimate:
    """k of n with the Wilson score interval (scipy's `binomtest(...).proportion_ci(method="wilson")`):
    the interval the confirmatory entries name for learned fractions and class shares."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n: a count >= 1, got {n!r}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k <= n:
        raise ValueError(f"k: a count in [0, n={n}], got {k!r}")
    ci = stats.binomtest(int(k), int(n)).proportion_ci(confidence_level=level, method="wilson")
    return Estimate(k / n, float(ci.low), float(ci.high), int(n))


def difference_of_proportions(k1: int, n1: int, k2: int, n2: int, level: float = 0.95) -> Estimate:
    """k1/n1 - k2/n2 with Newcombe's hybrid score interval (his method 10): the two Wilson intervals of
    `proportion` combined, d - sqrt((p1 - l1)^2 + (u2 - p2)^2) to d + sqrt((u1 - p1)^2 + (p2 - l2)^2). It
    stays inside [-1, 1] and is not degenerate at 0 or n, where the Wald interval of a difference is."""
    a, b = proportion(k1, n1, level), proportion(k2, n2, level)
    d = a.value - b.value
    return Estimate(d, d - math.hypot(a.value - a.low, b.high - b.value),
                    d + math.hypot(a.high - a.value, b.value - b.low), int(n1 + n2))


def smallest_p(seeds: int, generalize: int) -> float:
    """The smallest two-sided p-value any metric's AUROC can reach in a contest where `generalize` of
    `seeds` seeds generalize: a perfect ranking, against every way of choosing which seeds generalize
    (exact permutation test: 2 / C(seeds, generalize), at most 1). At 0.05 or more no metric can predict
    significantly in that contest, whatever it measures: the split, not the metric, decides."""
    if not 0 <= generalize <= seeds:
        raise ValueError(f"generalize: between 0 and seeds={seeds}, got {generalize}")
    return min(1.0, 2 / math.comb(seeds, generalize))


# ---------------------------------------------------------------------------------------------
# Tests the confirmatory entries name (C41): exact where the design is small enough to enumerate

EXACT_LIMIT = 2_000_000     # relabellings an exact test enumerates at most (16 seeds: at most 12,870)


def auroc_exact_p(scores, positive) -> float:
    """Two-sided p of the AUROC (Mann-Whitney U) of `scores` for `positive`, by the exact permutation
    test: every relabelling of which cases are positive enumerated (ties ranked by their average; the
    null and the two-sided rule of scipy's `permutation_test`), twice the smaller one-sided p, at most 1.
    A perfect ranking of k of n reaches `smallest_p(n, k)`; one positive (or negative) case is enough."""
    s, pos = np.asarray(scores, float), np.asarray(positive, bool)
    if s.shape != pos.shape or not np.isfinite(s).all():
        raise ValueError(f"scores: finite, one per case, got {s.shape} scores for {pos.shape} labels")
    if pos.all() or (~pos).all():
        raise ValueError("positive: need at least one positive and one negative case")
    if math.comb(len(s), int(pos.sum())) > EXACT_LIMIT:
        raise ValueError(f"scores: {len(s)} cases with {int(pos.sum())} positive have more than {EXACT_LIMIT} "
                         "relabellings; the exact test is for seed contests (about 16 seeds)")

    # Enumerated here rather than by scipy's `permutation_test`, which refuses a side of one case (a contest
    # where one seed of 16 generalizes still has an exact test: 16 relabellings). The smaller side is
    # enumerated: U of the other side is k*m - U, which mirrors the null and leaves the two-sided p unchanged.
    ranks = stats.rankdata(s)
    side = pos if pos.sum() <= (~pos).sum() else ~pos
    k = int(side.sum())
    observed = ranks[side].sum()
    null = np.fromiter((sum(c) for c in itertools.combinations(ranks.tolist(), k)), float, math.comb(len(s), k))
    tol = abs(observed) * np.finfo(float).eps * 100      # rank sums of tied cases are halves: compare with slack
    less, greater = (null <= observed + tol).mean(), (null >= observed - tol).mean()
    return float(min(1.0, 2 * min(less, greater)))


def spearman_permutation_p(x, y, n_resamples: int = 20_000, seed: int = 0) -> float:
    """Two-sided p of Spearman's rho by a permutation test over pairings (scipy's `permutation_test`,
    `n_resamples` seeded random pairings: 16 cases have 16! of them)."""
    a, b = np.asarray(x, float), np.asarray(y, float)
    if a.shape != b.shape or len(a) < 3 or not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError(f"x, y: finite, equal lengths >= 3, got {a.shape} and {b.shape}")
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        raise ValueError("x, y: a constant variable has no rank correlation")

    def statistic(v, axis=-1):      # rho of x with the permuted y, over the resamples' axis
        rv, ra = stats.rankdata(v, axis=-1), stats.rankdata(a)
        rv = rv - rv.mean(-1, keepdims=True)
        ra = ra - ra.mean()
        return (rv * ra).sum(-1) / np.sqrt((rv ** 2).sum(-1) * (ra ** 2).sum())
    res = stats.permutation_test((b,), statistic, permutation_type="pairings", vectorized=True,
                                 n_resamples=n_resamples, alternative="two-sided", random_state=seed)
    return float(min(1.0, res.pvalue))


def holm(pvalues, alpha: float = 0.05) -> list[bool]:
    """Which of `pvalues` Holm's step-down procedure rejects at family-wise `alpha` (in their order):
    the k-th smallest is compared with alpha / (m - k + 1), stopping at the first that is not below."""
    p = np.asarray(pvalues, float)
    reject = np.zeros(len(p), bool)
    for k, i in enumerate(np.argsort(p, kind="stable")):
        if not p[i] < alpha / (len(p) - k):
            break
        reject[i] = True
    return reject.tolist()


def one_sided_binomial_p(wins: int, losses: int) -> float:
    """P(X >= wins) for X ~ Binomial(wins + losses, 1/2): the exact one-sided sign test (paired steps) and
    McNemar's test (discordant pairs) alike; 1.0 when there are no untied pairs."""
    if wins < 0 or losses < 0:
        raise ValueError(f"wins, losses: counts >= 0, got {wins}, {losses}")
    if wins + losses == 0:
        return 1.0
    return float(stats.binomtest(int(wins), int(wins + losses), 0.5, alternative="greater").pvalue)
