"""Statistics the notebooks report, thin wrappers over scipy.stats (no hand-rolled statistics).

- Spearman rank correlation with a bootstrap percentile interval (resampling models with replacement).
- AUROC of a score for a binary outcome, computed as U / (n1 * n0) from the Mann-Whitney U test,
  with a bootstrap interval.
"""
from __future__ import annotations

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
    res = stats.bootstrap(data, statistic, paired=True, vectorized=False, n_resamples=n_resamples,
                          method="percentile", random_state=np.random.default_rng(seed))
    lo, hi = res.confidence_interval
    return float(lo), float(hi)


def spearman(x, y, seed: int = 0, n_resamples: int = 2000) -> Estimate:
    """Spearman's rho of x and y with a 95 % bootstrap interval; nan where undefined (ties only)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if len(x) != len(y) or len(x) < 3:
        raise ValueError(f"x, y: need two equally long samples of at least 3, got {len(x)} and {len(y)}")

    def rho(a, b):   # a resample can be constant: its correlation is undefined, count it as 0
        return 0.0 if np.ptp(a) == 0 or np.ptp(b) == 0 else stats.spearmanr(a, b).statistic
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

    def auc(a, p):
        p = p.astype(bool)
        if p.all() or (~p).all():
            return 0.5
        return stats.mannwhitneyu(a[p], a[~p]).statistic / (p.sum() * (~p).sum())
    value = auc(s, pos)
    lo, hi = _bootstrap(auc, (s, pos.astype(float)), seed, n_resamples)
    return Estimate(float(value), lo, hi, len(s))
