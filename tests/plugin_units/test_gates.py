"""The gate protocol: how the gates' decisions make the exit status, and what each gate says."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from pytest_karenina.plugin.gates.completeness import (
    CostCapGate,
    IncompleteMergeGate,
    LostExportGate,
)
from pytest_karenina.plugin.gates.protocol import Gate, exit_status, junit_properties, run_lines
from pytest_karenina.plugin.payload import ItemPayload
from pytest_karenina.plugin.report.export_sink import ExportSink
from pytest_karenina.plugin.report.statements import Line, plain_text, title
from pytest_karenina.plugin.report.summary import RunSummary
from pytest_karenina.plugin.verdict.outcome import Outcome

OK, FAILED = pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED


class Verdict:
    """A gate that decides ``decision``; ``strict`` as given."""

    def __init__(self, decision: bool | None, strict: bool = False) -> None:
        self.decision = decision
        self.strict = strict
        self.asked = 0

    def decide(self, summary: RunSummary, partial: str | None) -> bool | None:
        self.asked += 1
        return self.decision

    def headline(self) -> str | None:
        return None if self.decision is None else f"fake gate: {self.decision}"

    def details(self) -> Sequence[tuple[str, Sequence[str]]]:
        return []

    def lines(self) -> list[Line]:
        return [Line(text)] if (text := self.headline()) else []

    def junit_properties(self) -> list[tuple[str, str]]:
        return [("karenina.fake", str(self.decision))]


def _summary(*categories: Outcome) -> RunSummary:
    summary = RunSummary()
    for index, category in enumerate(categories):
        summary.add(ItemPayload(nodeid=f"b.jsonld::q{index}", category=category))
    return summary


def _status(status: int, summary: RunSummary, *gates: Gate) -> int:
    return int(exit_status(status, summary, None, list(gates)))


def test_every_gate_is_asked_once_whatever_the_status() -> None:
    """Gates decide even for runs whose status they cannot change (they still report)."""
    gates = [Verdict(True), Verdict(False, strict=True)]
    assert _status(pytest.ExitCode.INTERRUPTED, _summary(Outcome.PASS), *gates) == 2
    assert [gate.asked for gate in gates] == [1, 1]


@pytest.mark.parametrize("status", [OK, FAILED])
def test_a_strict_failure_fails_the_run_even_without_questions(status: int) -> None:
    assert _status(status, _summary(), Verdict(False, strict=True)) == FAILED
    assert _status(status, _summary(Outcome.PASS), Verdict(True), Verdict(False, True)) == FAILED


def test_a_gate_that_is_not_strict_decides_only_a_run_whose_questions_reported() -> None:
    """Without questions the status stays pytest's; with them the gates replace it (a passed
    gate forgives failed questions, a failed one fails a green run)."""
    assert _status(OK, _summary(), Verdict(False)) == OK
    assert _status(FAILED, _summary(Outcome.VERIFY_FAIL), Verdict(True)) == OK
    assert _status(OK, _summary(Outcome.PASS), Verdict(True), Verdict(False)) == FAILED


def test_no_decision_leaves_the_status_alone() -> None:
    summary = _summary(Outcome.VERIFY_FAIL)
    assert _status(FAILED, summary, Verdict(None), CostCapGate()) == FAILED
    assert _status(OK, _summary(Outcome.PASS), Verdict(None, strict=True)) == OK


def test_failures_outside_the_questions_are_never_forgiven() -> None:
    summary = _summary(Outcome.PASS)
    summary.other_failures = 1
    assert _status(FAILED, summary, Verdict(True)) == FAILED


@pytest.mark.parametrize(
    "status", [pytest.ExitCode.INTERRUPTED, pytest.ExitCode.USAGE_ERROR, 5]
)  # fmt: skip
def test_other_statuses_are_kept(status: int) -> None:
    assert _status(status, _summary(Outcome.PASS), Verdict(False, strict=True)) == status


def test_the_cost_cap_gate_fails_and_says_how_many_items_did_not_start() -> None:
    summary = _summary(Outcome.PASS)
    summary.cost.capped = 2
    gate = CostCapGate()
    assert _status(OK, summary, gate) == FAILED
    assert gate.lines() == [Line("karenina cost cap reached: 2 items not started")]
    assert gate.headline() == "karenina cost cap reached: 2 items not started"
    assert gate.junit_properties() == []


def test_a_lost_export_fails_the_run_and_says_so_in_red(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file where a directory should be")
    sink = ExportSink(tmp_path / "taken" / "out.json", {})
    gate = LostExportGate()
    assert _status(OK, _summary(Outcome.PASS), gate) == OK  # no export yet: nothing lost
    gate.sink = sink
    assert _status(OK, _summary(Outcome.PASS), gate) == FAILED
    (line,) = gate.lines()
    assert line.red and line.text.startswith(f"karenina: the export to {sink.path} failed (")
    sink.close(complete=False)


def test_an_incomplete_merge_fails_with_its_reasons() -> None:
    gate = IncompleteMergeGate(["shard 2/3 missing", "s1.json did not finish"])
    assert _status(OK, _summary(Outcome.PASS), gate) == FAILED
    text = "pytest-karenina merge: incomplete: shard 2/3 missing; s1.json did not finish"
    assert gate.lines() == [Line(text)]
    assert IncompleteMergeGate([]).decide(_summary(), None) is None


def test_the_gates_lines_and_properties_follow_the_summarys() -> None:
    summary = _summary(Outcome.PASS)
    gates = [Verdict(True), Verdict(None)]
    exit_status(OK, summary, None, gates)
    lines = run_lines(summary, gates)
    assert lines[0] == title("karenina summary")
    assert lines[-1] == Line("fake gate: True")
    assert junit_properties(summary, gates)[-2:] == [
        ("karenina.fake", "True"), ("karenina.fake", "None"),
    ]  # fmt: skip
    # Nothing reported: no summary section, but a gate that has something to say says it.
    assert run_lines(RunSummary(), gates) == [Line("fake gate: True")]


def test_plain_text_centres_a_title_between_its_separators() -> None:
    lines = [title("karenina summary"), Line("warning", red=True)]
    assert plain_text(lines, 40) == [
        "=========== karenina summary ===========",
        "warning",
    ]
