"""The gate protocol, and how the gates' decisions make the run's exit status.

A gate checks the whole run once it ended (the plugin's controller, or ``pytest-karenina
merge``): it decides, then says what it decided (terminal lines, a headline and lists for the
reports, JUnit suite properties). The exit status is set in one place, :func:`exit_status`,
from the gates' decisions; a new gate is one more object in the list the controller asks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import pytest

from pytest_karenina.plugin.report.statements import GateStatement, Line
from pytest_karenina.plugin.report.summary import RunSummary


class Gate(GateStatement, Protocol):
    """One check of a whole run."""

    @property
    def strict(self) -> bool:
        """Whether a failure of this gate fails the run whatever else happened (a run that
        lost results, left items unstarted, refused to write its baseline). A gate that is not
        strict decides only a run whose questions reported (:func:`exit_status`)."""
        ...

    def decide(self, summary: RunSummary, partial: str | None) -> bool | None:
        """Passed (True), failed (False), or nothing to decide (None). Called once, when the
        run has ended; ``partial`` says why the run does not stand for the whole benchmark
        (None when it does)."""
        ...

    def lines(self) -> list[Line]:
        """What the terminal says of the decision, after the run summary (nothing when the
        gate has nothing to say)."""
        ...

    def junit_properties(self) -> list[tuple[str, str]]:
        """``karenina.*`` properties for every ``<testsuite>`` of the JUnit file."""
        ...


def exit_status(
    status: int, summary: RunSummary, partial: str | None, gates: Sequence[Gate]
) -> int:
    """Ask every gate, then the run's exit status starting from pytest's ``status``.

    Interrupted, usage-error, internal-error and empty runs keep their status. Otherwise a
    strict gate that failed makes it 1; and when some gate decided and questions reported,
    the gates replace pytest's verdict: 0 when every gate passed and nothing failed outside
    the questions, else 1 (a pass-rate gate forgives failed questions). A run without a
    decision keeps its status.
    """
    decisions = [(gate, gate.decide(summary, partial)) for gate in gates]
    if status not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        return status
    if any(decided is False and gate.strict for gate, decided in decisions):
        return pytest.ExitCode.TESTS_FAILED
    said = [decided for _, decided in decisions if decided is not None]
    if not said or not summary.total:
        return status
    ok = all(said) and not summary.other_failures
    return pytest.ExitCode.OK if ok else pytest.ExitCode.TESTS_FAILED


def run_lines(summary: RunSummary, gates: Sequence[Gate]) -> list[Line]:
    """The terminal's karenina section: the run summary, then each gate's lines."""
    return [*summary.lines(), *(line for gate in gates for line in gate.lines())]


def junit_properties(summary: RunSummary, gates: Sequence[Gate]) -> list[tuple[str, str]]:
    """The run's JUnit suite properties: the summary's, then each gate's."""
    return [*summary.suite_properties(), *(p for gate in gates for p in gate.junit_properties())]
