"""Pass rates with their 95% intervals, over a run's item payloads.

Each item is one verdict. Items of the same question and answering model (its replicates)
are one cluster: their verdicts are not independent, so the interval is
:func:`~pytest_karenina.results.statistics.clustered_wilson` over those clusters (plain
Wilson when every question ran once).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pytest_karenina.plugin.payload import ItemPayload
from pytest_karenina.plugin.verdict.outcome import Outcome
from pytest_karenina.results.statistics import clustered_wilson


@dataclass(frozen=True)
class PassRate:
    """``passed`` of ``total`` items, the rate and its 95% interval."""

    passed: int
    total: int
    rate: float
    low: float
    high: float

    def describe(self) -> str:
        """``81.0% [95% CI 72.2-87.5%] (81/100)``."""
        return (
            f"{self.rate:.1%} [95% CI {self.low:.1%}-{self.high:.1%}] ({self.passed}/{self.total})"
        )


def pass_rate(payloads: Iterable[ItemPayload]) -> PassRate | None:
    """The pass rate of ``payloads`` (None without any)."""
    clusters: dict[tuple[str, str | None], list[int]] = {}
    for payload in payloads:
        question = payload.question_id or payload.nodeid  # a crashed item names no question
        counts = clusters.setdefault((question, payload.answering_model), [0, 0])
        counts[0] += payload.category is Outcome.PASS
        counts[1] += 1
    if not clusters:
        return None
    pairs = [(k, n) for k, n in clusters.values()]
    rate, low, high = clustered_wilson(pairs)
    return PassRate(sum(k for k, _ in pairs), sum(n for _, n in pairs), rate, low, high)


def pass_rates_by_model(payloads: Iterable[ItemPayload]) -> dict[str, PassRate]:
    """Answering model -> its pass rate."""
    grouped: dict[str, list[ItemPayload]] = {}
    for payload in payloads:
        grouped.setdefault(payload.answering_model or "?", []).append(payload)
    found = {model: pass_rate(items) for model, items in sorted(grouped.items())}
    return {model: rate for model, rate in found.items() if rate is not None}
