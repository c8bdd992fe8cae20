"""``--karenina-min-pass-rate``: the run's pass rate (or its 95% interval's lower bound)
against a threshold."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_karenina.plugin.report.pass_rates import pass_rate
from pytest_karenina.plugin.report.statements import Line
from pytest_karenina.plugin.report.summary import RunSummary


class PassRateGate:
    """Passes at or above the threshold even with failed items (errors count as not passed);
    ``on="lower"`` compares the 95% interval's lower bound instead of the rate. Decides
    nothing for a run without questions."""

    strict = False

    def __init__(self, threshold: float, on: str = "point") -> None:
        self.threshold = threshold
        self.on = on
        self.passed: bool | None = None
        self.pass_rate = 0.0
        self.held_back: str | None = None
        """Why the run fails although the rate is met (failures the gate does not forgive)."""
        self.lower_bound: float | None = None
        """Set when the gate is on the 95% interval's lower bound (``on="lower"``)."""

    @property
    def measured(self) -> float:
        """What is compared with the threshold: the rate, or its interval's lower bound."""
        return self.pass_rate if self.lower_bound is None else self.lower_bound

    def decide(self, summary: RunSummary, partial: str | None = None) -> bool | None:
        if not summary.total:
            return None
        self.pass_rate = summary.pass_rate or 0.0
        interval = pass_rate(summary.payloads.values())
        low = interval.low if self.on == "lower" and interval is not None else None
        self.lower_bound = low
        decided = sum(1 for payload in summary.payloads.values() if not payload.category.is_error)
        self.held_back = None
        if summary.other_failures:
            self.held_back = f"{summary.other_failures} failures outside the questions"
        elif decided == 0:
            self.held_back = "no question reached a verdict"
        self.passed = self.measured >= self.threshold and not self.held_back
        return self.passed

    def describe(self) -> str:
        verdict = "passed" if self.passed else "FAILED"
        op = ">=" if self.measured >= self.threshold else "<"
        what = f"pass rate {self.pass_rate:.1%}"
        if self.lower_bound is not None:
            what += f", 95% CI lower bound {self.lower_bound:.1%}"
        text = f"{what} {op} {self.threshold:.1%}: gate {verdict}"
        return f"{text} ({self.held_back})" if self.held_back else text

    def headline(self) -> str | None:
        return None if self.passed is None else f"karenina gate: {self.describe()}"

    def details(self) -> Sequence[tuple[str, Sequence[str]]]:
        return []

    def lines(self) -> list[Line]:
        headline = self.headline()
        return [] if headline is None else [Line(headline)]

    def junit_properties(self) -> list[tuple[str, str]]:
        if self.passed is None:
            return []
        return [
            ("karenina.gate", "passed" if self.passed else "failed"),
            ("karenina.min_pass_rate", f"{self.threshold:g}"),
            ("karenina.gate_on", "point" if self.lower_bound is None else "lower"),
        ]
