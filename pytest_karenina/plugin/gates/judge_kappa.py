"""``--karenina-min-judge-kappa X``: every judge's Cohen's kappa against people's labels must
reach X (a ``--karenina-judge-check`` run)."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_karenina.plugin.report.judge_health import JudgeHealth, kappa_text
from pytest_karenina.plugin.report.statements import Line
from pytest_karenina.plugin.report.summary import RunSummary
from pytest_karenina.plugin.safe_text import terminal_safe


class JudgeKappaGate:
    """Passes when the point estimate of every judge's kappa is at least the threshold, every
    label reported reached a verdict, and nothing failed outside the labels; then the run
    exits 0 even with disagreements (as the pass-rate gate forgives failed questions). An
    undefined kappa (every label and verdict alike), an unmeasured label or a label item that
    reported no check (its worker crashed) fails it: the gate cannot vouch for what it did
    not measure. Decides nothing for a run without labels."""

    strict = False

    def __init__(self, threshold: float, health: JudgeHealth) -> None:
        self.threshold = threshold
        self.health = health
        self.passed: bool | None = None
        self.below: list[str] = []
        """The judges whose kappa is below the threshold or undefined, with it."""
        self.held_back: str | None = None
        """Why the gate fails whatever the kappas (unmeasured labels, failures elsewhere)."""

    def decide(self, summary: RunSummary, partial: str | None = None) -> bool | None:
        if not summary.total and not self.health.checks:
            return None
        self.below = []
        judges = self.health.judges()
        for judge in judges:
            kappa = self.health.agreement(judge).kappa
            if kappa.value is None or kappa.value < self.threshold:
                self.below.append(f"{judge}: {kappa_text(kappa)}")
        unmeasured = len(self.health.unmeasured())
        unchecked = summary.total - len(self.health.checks)
        self.held_back = None
        if summary.other_failures:
            self.held_back = f"{summary.other_failures} failures outside the labels"
        elif unchecked > 0:  # e.g. a crashed worker: no judge saw these labels
            self.held_back = f"{unchecked} labels never judged"
        elif not judges:
            self.held_back = "no label reached a verdict"
        elif unmeasured:
            self.held_back = f"{unmeasured} labels unmeasured"
        self.passed = not self.below and not self.held_back
        return self.passed

    def describe(self) -> str:
        verdict = "passed" if self.passed else "FAILED"
        kappas = "; ".join(
            f"{judge} {kappa_text(self.health.agreement(judge).kappa)}"
            for judge in self.health.judges()
        )
        text = f"judge kappa {kappas or 'n/a'}, needs {self.threshold:g}: gate {verdict}"
        return f"{text} ({self.held_back})" if self.held_back else text

    def headline(self) -> str | None:
        return None if self.passed is None else f"karenina gate: {self.describe()}"

    def details(self) -> Sequence[tuple[str, Sequence[str]]]:
        return [("judges below the kappa", self.below)] if self.below else []

    def lines(self) -> list[Line]:
        headline = self.headline()
        return [] if headline is None else [Line(terminal_safe(headline))]

    def junit_properties(self) -> list[tuple[str, str]]:
        if self.passed is None:
            return []
        return [
            ("karenina.judge_gate", "passed" if self.passed else "failed"),
            ("karenina.min_judge_kappa", f"{self.threshold:g}"),
        ]
