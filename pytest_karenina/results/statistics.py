"""Statistics for noisy verdicts: pass-rate intervals, pass@k, paired model comparison.

* :func:`wilson_interval`: the Wilson score interval of a proportion (95% by default), which
  behaves at 0 and 1 and for small samples, unlike the normal approximation.
* :func:`clustered_wilson`: the same when verdicts come in clusters (the replicates of one
  question are not independent): the variance of the pooled rate is estimated across
  clusters, and the Wilson interval uses the effective sample size it implies (at least the
  number of clusters, at most the number of verdicts).
* :func:`pass_at_k`: the unbiased estimator of the chance that at least one of ``k`` tries
  passes, from ``c`` passes in ``n >= k`` tries: ``1 - C(n - c, k) / C(n, k)``.
* :func:`mcnemar_exact`: the two-sided exact McNemar test of two models on the same
  questions, from the discordant pairs only (``b``: first passes, second fails; ``c``: the
  reverse): ``min(1, 2 * P(X <= min(b, c)))`` for ``X ~ Binomial(b + c, 1/2)``.
* :func:`fisher_exact`: Fisher's exact test of a 2x2 table (two-sided), e.g. the pass and
  fail counts of one question's replicates in two runs: the probability, given the table's
  margins, of every table at most as likely as the one observed (the hypergeometric
  weights are compared as exact integers, so equally likely tables are never lost to
  rounding).
* :func:`fisher_floor`: the smallest p-value Fisher's test can give for tables of given
  margins. A table whose margins allow no p-value below the level (e.g. every replicate
  passed on both sides: one table is possible, p = 1) can never be significant, so it need
  not take a share of a multiple-test correction (Tarone's refinement for discrete tests).
* :func:`holm`: Holm's step-down adjustment of p-values for testing several hypotheses at
  once (the family-wise error rate stays at the level without assuming independence).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Z95 = 1.959963984540054
"""The two-sided 95% quantile of the standard normal distribution."""


def wilson_interval(successes: float, trials: float, z: float = Z95) -> tuple[float, float]:
    """``(low, high)`` of the Wilson score interval; ``(0, 1)`` without trials."""
    if trials <= 0:
        return 0.0, 1.0
    p = min(max(successes / trials, 0.0), 1.0)
    z2 = z * z
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    margin = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    return max(0.0, centre - margin), min(1.0, centre + margin)


def clustered_wilson(
    clusters: Sequence[tuple[int, int]], z: float = Z95
) -> tuple[float, float, float]:
    """``(rate, low, high)`` over clusters of ``(passes, verdicts)``.

    With one verdict per cluster this is :func:`wilson_interval`. Otherwise the pooled
    rate's variance is the ratio estimator's across clusters, and the interval is Wilson's
    at the effective sample size ``rate * (1 - rate) / variance``, kept between the number
    of clusters and the number of verdicts.
    """
    kept = [(k, n) for k, n in clusters if n > 0]
    total = sum(n for _, n in kept)
    if not kept or total == 0:
        return 0.0, 0.0, 1.0
    passes = sum(k for k, _ in kept)
    rate = passes / total
    m = len(kept)
    effective = float(total)
    if m > 1 and 0 < rate < 1 and total > m:
        spread = sum((k - rate * n) ** 2 for k, n in kept) * m / (m - 1) / (total * total)
        if spread > 0:
            effective = min(float(total), max(float(m), rate * (1 - rate) / spread))
    low, high = wilson_interval(rate * effective, effective, z)
    return rate, low, high


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k estimate from ``c`` passes in ``n`` tries (``1 <= k <= n``)."""
    if not 1 <= k <= n or not 0 <= c <= n:
        raise ValueError(f"pass@k needs 1 <= k <= n and 0 <= c <= n (n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts ``b`` and ``c``."""
    if b < 0 or c < 0:
        raise ValueError("discordant counts cannot be negative")
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / (1 << n)
    return min(1.0, 2 * tail)


def fisher_exact(a: int, b: int, c: int, d: int) -> float:
    """Two-sided p-value of Fisher's exact test for the table ``[[a, b], [c, d]]``."""
    if min(a, b, c, d) < 0:
        raise ValueError("the cells of a 2x2 table cannot be negative")
    first, second, column = a + b, c + d, a + c
    low, high = max(0, column - second), min(first, column)

    def weight(x: int) -> int:  # proportional to the hypergeometric probability of a = x
        return math.comb(first, x) * math.comb(second, column - x)

    observed = weight(a)
    extreme = sum(w for x in range(low, high + 1) if (w := weight(x)) <= observed)
    return min(1.0, extreme / math.comb(first + second, column))


def fisher_floor(first_row: int, second_row: int, first_column: int) -> float:
    """The smallest two-sided p-value of :func:`fisher_exact` over the tables with these
    margins: that of the least likely table (with any as unlikely as it)."""
    if min(first_row, second_row, first_column) < 0 or first_column > first_row + second_row:
        raise ValueError("the margins of a 2x2 table cannot be negative or exceed its total")
    low, high = max(0, first_column - second_row), min(first_row, first_column)
    weights = [
        math.comb(first_row, x) * math.comb(second_row, first_column - x)
        for x in range(low, high + 1)
    ]
    least = min(weights)
    return min(1.0, least * weights.count(least) / math.comb(first_row + second_row, first_column))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values, in the order given: the ``i``-th smallest of ``m`` is
    multiplied by ``m - i + 1``, kept at least as large as the adjusted ones before it and
    at most 1. A hypothesis is rejected at level alpha when its adjusted p-value is below
    alpha."""
    m = len(p_values)
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted
