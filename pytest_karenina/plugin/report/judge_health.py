"""``--karenina-judge-check``: how well each judge agrees with people, on the reporting
process.

:class:`JudgeHealth` takes the label checks the items' reports carry (the first report of an
item counts, as for payloads) and computes, per judge over the labels it judged: accuracy,
the true and false positive rates (positive = people passed the answer) and Cohen's kappa
with its 95% interval (:mod:`pytest_karenina.results.agreement`), the agreement of each
labelled field, and the disagreements with the judge's extraction. Labels a judge reached no
verdict on are unmeasured: counted apart, never as agreement or disagreement. It writes the
terminal's "karenina judge health" section, JUnit suite properties, and the pytest-html
report's "Judge health" section (:class:`JudgeHealthHtml`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from typing import Any

import pytest

from pytest_karenina.plugin.report.statements import Line, title
from pytest_karenina.plugin.safe_text import terminal_safe
from pytest_karenina.plugin.verdict.judge_check import LabelCheck, reported_check
from pytest_karenina.results.agreement import BinaryAgreement, Kappa, Rate, binary_agreement

MAX_SHOWN = 120
"""Characters of a value or extraction the reports show."""
UNDEFINED = (
    "undefined: people and the judge gave every label the same verdict (label answers of both "
    "kinds)"
)


def _rate(rate: Rate, interval: bool = False) -> str:
    if rate.value is None:
        return "n/a (0/0)"
    text = f"{rate.value:.1%} ({rate.hits}/{rate.of}"
    if interval:
        low, high = rate.interval
        text += f", 95% CI {low:.1%}-{high:.1%}"
    return text + ")"


def kappa_text(kappa: Kappa) -> str:
    """``0.70 (95% CI 0.48 to 0.92)``, or why kappa is undefined."""
    if kappa.value is None or kappa.low is None or kappa.high is None:
        return UNDEFINED if kappa.n else "undefined: no label measured"
    return f"{kappa.value:.2f} (95% CI {kappa.low:.2f} to {kappa.high:.2f})"


def _shown(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str, sort_keys=True)
    text = repr(text) if isinstance(value, str) else text
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 3] + "..."


class JudgeHealth:
    """The label checks of a judge-check run and what they say of each judge."""

    def __init__(self, source: str, labels: int) -> None:
        self.source = source
        """The labels file, as the run named it."""
        self.labels = labels
        """How many labels the file holds (the run may select fewer)."""
        self.checks: dict[str, LabelCheck] = {}
        """By node id, the first report's."""

    def take(self, report: pytest.TestReport) -> None:
        """Keep the label check ``report`` carries (the item's first)."""
        check = reported_check(report)
        if check is not None and report.nodeid not in self.checks:
            self.checks[report.nodeid] = check

    def ordered(self) -> list[tuple[str, LabelCheck]]:
        """The checks in the labels file's order (xdist delivers them in any order)."""
        return sorted(self.checks.items(), key=lambda found: (found[1].order, found[0]))

    def judges(self) -> list[str]:
        found: dict[str, None] = {}
        for _, check in self.ordered():
            for reading in check.readings:
                found.setdefault(reading.judge, None)
        return list(found)

    def agreement(self, judge: str) -> BinaryAgreement:
        """The judge's verdicts against people's, over the labels it judged."""
        pairs = []
        for _, check in self.ordered():
            verdict = check.judge_verdicts().get(judge)
            if verdict is not None:
                pairs.append((check.people_pass, verdict))
        return binary_agreement(pairs)

    def unmeasured(self) -> list[str]:
        """Node ids of the labels some judge reached no verdict on."""
        return [nodeid for nodeid, check in self.ordered() if check.agrees is None]

    def fields(self, judge: str) -> dict[str, Rate]:
        """Per labelled field: how often the judge's reading agreed with people's."""
        counts: dict[str, list[int]] = {}
        for _, check in self.ordered():
            for reading in check.readings:
                if reading.judge != judge:
                    continue
                for found in reading.fields:
                    tally = counts.setdefault(found.field, [0, 0])
                    tally[0] += found.agrees
                    tally[1] += 1
        return {name: Rate(hits, of) for name, (hits, of) in counts.items()}

    def disagreements(self) -> list[tuple[str, LabelCheck]]:
        return [(nodeid, check) for nodeid, check in self.ordered() if check.agrees is False]

    def headline(self) -> str:
        people = [check.people_pass for check in self.checks.values()]
        unmeasured = len(self.unmeasured())
        return (
            f"{self.source}: {len(people)} of {self.labels} labels judged (people pass "
            f"{sum(people)}, fail {len(people) - sum(people)}), {unmeasured} unmeasured"
        )

    def judge_line(self, judge: str) -> str:
        found = self.agreement(judge)
        return (
            f"judge {judge}: accuracy {_rate(found.accuracy, interval=True)}; true positive "
            f"rate {_rate(found.true_positive_rate)}; false positive rate "
            f"{_rate(found.false_positive_rate)}; Cohen's kappa {kappa_text(found.kappa)}"
        )

    @staticmethod
    def describe(nodeid: str, check: LabelCheck) -> str:
        """One disagreement: the label, each judge's verdict, fields and extraction."""
        people = "pass" if check.people_pass else "fail"
        parts = [f"{nodeid}: people {people}"]
        for reading in check.readings:
            said = {True: "pass", False: "fail", None: "no verdict"}[reading.passed]
            parts.append(f"judge {reading.judge} {said} ({reading.outcome}, {reading.stage})")
            parts += [
                f"{f.field}: judge {_shown(f.parsed)}, people {_shown(f.people)}"
                for f in reading.fields
                if not f.agrees
            ]
            parts.append(f"extraction {_shown(dict(reading.extraction))}")
        return "; ".join(parts)

    def lines(self) -> list[Line]:
        """The terminal's "karenina judge health" section (none without a label check)."""
        if not self.checks:
            return []
        found = [title("karenina judge health"), Line(terminal_safe(self.headline()))]
        for judge in self.judges():
            found.append(Line(terminal_safe(self.judge_line(judge))))
            fields = self.fields(judge)
            if fields:
                text = ", ".join(
                    f"{name} {rate.hits}/{rate.of} agree" for name, rate in fields.items()
                )
                found.append(Line(terminal_safe(f"  fields: {text}")))
        unmeasured = self.unmeasured()
        if unmeasured:
            text = f"unmeasured (no verdict, not counted): {', '.join(unmeasured)}"
            found.append(Line(terminal_safe(text), red=True))
        disagreements = self.disagreements()
        if disagreements:
            found.append(Line(f"disagreements ({len(disagreements)}):"))
            found += [Line(terminal_safe("  " + self.describe(*d))) for d in disagreements]
        return found

    def properties(self) -> list[tuple[str, str]]:
        """JUnit suite properties: per judge (named after it when there are several) the
        kappa, its interval, accuracy and the two rates; the labels measured and not."""
        if not self.checks:
            return []
        judges = self.judges()
        found = [
            ("karenina.judge_labels", str(len(self.checks))),
            ("karenina.judge_unmeasured", str(len(self.unmeasured()))),
        ]
        for judge in judges:
            suffix = f".{judge}" if len(judges) > 1 else ""
            agreement = self.agreement(judge)
            kappa = agreement.kappa
            values = {
                "judge_kappa": kappa.value,
                "judge_kappa_ci_low": kappa.low,
                "judge_kappa_ci_high": kappa.high,
                "judge_accuracy": agreement.accuracy.value,
                "judge_tpr": agreement.true_positive_rate.value,
                "judge_fpr": agreement.false_positive_rate.value,
            }
            found += [
                (f"karenina.{name}{suffix}", "n/a" if value is None else f"{value:.4f}")
                for name, value in values.items()
            ]
        return found

    def html(self) -> str:
        """The pytest-html report's "Judge health" section (escaped)."""
        rows = []
        for judge in self.judges():
            agreement = self.agreement(judge)
            cells = (
                judge,
                str(agreement.n),
                _rate(agreement.accuracy, interval=True),
                _rate(agreement.true_positive_rate),
                _rate(agreement.false_positive_rate),
                kappa_text(agreement.kappa),
            )
            rows.append("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>")
        head = ("judge", "labels", "accuracy", "true positive rate", "false positive rate",
                "Cohen's kappa")  # fmt: skip
        parts = [
            '<div class="karenina-judge-health"><h2>Judge health</h2>',
            f"<p>{escape(self.headline())}</p>",
            _table("karenina-judges", head, rows),
        ]
        field_rows = [
            "<tr>" + "".join(f"<td>{escape(c)}</td>" for c in (judge, name, _rate(rate))) + "</tr>"
            for judge in self.judges()
            for name, rate in self.fields(judge).items()
        ]
        if field_rows:
            parts.append(
                _table("karenina-judge-fields", ("judge", "field", "agreement"), field_rows)
            )
        disagreements = [
            f"<li>{escape(self.describe(nodeid, check))}</li>"
            for nodeid, check in self.disagreements()
        ]
        if disagreements:
            parts.append(
                f"<p>Disagreements ({len(disagreements)})</p>"
                f'<ul class="karenina-disagreements">{"".join(disagreements)}</ul>'
            )
        return "".join(parts) + "</div>"


def _table(css: str, head: Sequence[str], rows: Sequence[str]) -> str:
    header = "".join(f"<th>{escape(cell)}</th>" for cell in head)
    return f'<table class="{css}"><tr>{header}</tr>{"".join(rows)}</table>'


class JudgeHealthHtml:
    """Adds the "Judge health" section to the pytest-html summary (after karenina's)."""

    def __init__(self, health: JudgeHealth) -> None:
        self.health = health

    @pytest.hookimpl(trylast=True)
    def pytest_html_results_summary(self, prefix: list[str], session: pytest.Session) -> None:
        if self.health.checks:
            prefix.append(self.health.html())
