"""Agreement between a judge and people: Cohen's kappa with its interval, and the rates of a
binary confusion table.

* :func:`cohen_kappa`: Cohen's (1960) kappa of a square table of two raters' counts, with the
  large-sample standard error of Fleiss, Cohen & Everitt (1969) (not the null-hypothesis one,
  nor Cohen's 1960 approximation ``sqrt(po (1 - po) / n) / (1 - pe)``) and the Wald interval
  ``kappa +- z * se``, clipped to [-1, 1]. It is the formula SAS's PROC FREQ (``AGREE``)
  reports as the ASE of the simple kappa.
* :func:`binary_agreement`: a judge's pass/fail verdicts against people's, as a confusion
  table where **positive means the people passed the answer**: accuracy, the true positive
  rate (the people's passes the judge passed too), the false positive rate (the people's
  fails the judge passed: a wrong answer waved through), each with its Wilson interval, and
  kappa.

Pure functions of counts: nothing here knows of pytest or of a run.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pytest_karenina.results.statistics import Z95, wilson_interval


@dataclass(frozen=True)
class Kappa:
    """Cohen's kappa of ``n`` paired ratings; ``value`` and the rest are None when kappa is
    undefined (no ratings, or chance agreement of 1: both raters used one category only)."""

    n: int
    observed: float | None
    """``po``: the share of ratings on which the raters agree."""
    expected: float | None
    """``pe``: the agreement expected by chance from the raters' margins."""
    value: float | None
    se: float | None
    """Fleiss, Cohen & Everitt's (1969) large-sample standard error."""
    low: float | None
    high: float | None

    @property
    def defined(self) -> bool:
        return self.value is not None


def cohen_kappa(table: Sequence[Sequence[int]], z: float = Z95) -> Kappa:
    """Kappa of ``table[i][j]``: how many items the first rater put in category ``i`` and the
    second in ``j`` (a square table of non-negative counts)."""
    size = len(table)
    if any(len(row) != size for row in table):
        raise ValueError("a kappa table must be square")
    if any(count < 0 for row in table for count in row):
        raise ValueError("the counts of a kappa table cannot be negative")
    n = sum(sum(row) for row in table)
    if n == 0:
        return Kappa(0, None, None, None, None, None, None)
    p = [[count / n for count in row] for row in table]
    rows = [sum(row) for row in p]
    columns = [sum(p[i][j] for i in range(size)) for j in range(size)]
    observed = sum(p[i][i] for i in range(size))
    expected = sum(rows[i] * columns[i] for i in range(size))
    if math.isclose(expected, 1.0):
        return Kappa(n, observed, expected, None, None, None, None)
    kappa = (observed - expected) / (1 - expected)
    rest = 1 - kappa
    agreeing = sum(p[i][i] * (1 - (rows[i] + columns[i]) * rest) ** 2 for i in range(size))
    disagreeing = rest**2 * sum(
        p[i][j] * (columns[i] + rows[j]) ** 2 for i in range(size) for j in range(size) if i != j
    )
    correction = (kappa - expected * rest) ** 2
    variance = (agreeing + disagreeing - correction) / (n * (1 - expected) ** 2)
    se = math.sqrt(max(variance, 0.0))
    low, high = max(-1.0, kappa - z * se), min(1.0, kappa + z * se)
    return Kappa(n, observed, expected, kappa, se, low, high)


@dataclass(frozen=True)
class Rate:
    """``hits`` of ``of``, with the Wilson interval; ``value`` is None when ``of`` is 0."""

    hits: int
    of: int

    @property
    def value(self) -> float | None:
        return self.hits / self.of if self.of else None

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.hits, self.of)


@dataclass(frozen=True)
class BinaryAgreement:
    """A judge's verdicts against people's; positive = the people passed the answer."""

    tp: int
    """People pass, judge pass."""
    fp: int
    """People fail, judge pass: a wrong answer the judge let through."""
    fn: int
    """People pass, judge fail: a right answer the judge rejected."""
    tn: int
    """People fail, judge fail."""

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    @property
    def accuracy(self) -> Rate:
        return Rate(self.tp + self.tn, self.n)

    @property
    def true_positive_rate(self) -> Rate:
        """Of the answers people passed, the share the judge passed (sensitivity)."""
        return Rate(self.tp, self.tp + self.fn)

    @property
    def false_positive_rate(self) -> Rate:
        """Of the answers people failed, the share the judge passed (1 - specificity)."""
        return Rate(self.fp, self.fp + self.tn)

    @property
    def kappa(self) -> Kappa:
        """Cohen's kappa of the table (people's verdict by row, the judge's by column)."""
        return cohen_kappa([[self.tp, self.fn], [self.fp, self.tn]])


def binary_agreement(pairs: Iterable[tuple[bool, bool]]) -> BinaryAgreement:
    """The confusion table of ``(people pass, judge pass)`` pairs."""
    counts = {(True, True): 0, (False, True): 0, (True, False): 0, (False, False): 0}
    for people, judge in pairs:
        counts[(bool(people), bool(judge))] += 1
    return BinaryAgreement(
        tp=counts[(True, True)],
        fp=counts[(False, True)],
        fn=counts[(True, False)],
        tn=counts[(False, False)],
    )
