"""Gates that fail a run which did not do all it had to: items the cost cap left unstarted,
results the export lost, shards a merge lacks. Each is strict: its failure fails the run
whatever the questions' verdicts and the other gates say."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_karenina.plugin.report.export_sink import ExportSink
from pytest_karenina.plugin.report.statements import Line
from pytest_karenina.plugin.report.summary import RunSummary


class _Completeness:
    """A strict gate whose failure is one line (also its headline) and no JUnit property."""

    strict = True

    def __init__(self) -> None:
        self.problem: str | None = None

    def _line(self) -> Line | None:
        return None if self.problem is None else Line(self.problem)

    def headline(self) -> str | None:
        return self.problem

    def details(self) -> Sequence[tuple[str, Sequence[str]]]:
        return []

    def lines(self) -> list[Line]:
        line = self._line()
        return [] if line is None else [line]

    def junit_properties(self) -> list[tuple[str, str]]:
        return []


class CostCapGate(_Completeness):
    """``--karenina-max-cost``: items the cap did not start fail the run (a run that left
    questions unanswered must not pass for a whole one)."""

    def decide(self, summary: RunSummary, partial: str | None = None) -> bool | None:
        capped = summary.cost.capped
        self.problem = f"karenina cost cap reached: {capped} items not started" if capped else None
        return False if capped else None


class LostExportGate(_Completeness):
    """``--karenina-results``: results the export could not write fail the run (the export
    says it is incomplete; see :class:`~..report.export_sink.ExportSink`)."""

    def __init__(self) -> None:
        super().__init__()
        self.sink: ExportSink | None = None
        """The run's export, once the session has started."""

    def decide(self, summary: RunSummary, partial: str | None = None) -> bool | None:
        sink = self.sink
        self.problem = sink.failure() if sink is not None else None
        return False if self.problem is not None else None

    def _line(self) -> Line | None:
        return None if self.problem is None else Line(self.problem, red=True)


class IncompleteMergeGate(_Completeness):
    """``pytest-karenina merge``: a merge missing shards, or of shards that did not finish,
    fails (it is written and summarised all the same)."""

    def __init__(self, incomplete: Sequence[str]) -> None:
        super().__init__()
        self.incomplete = list(incomplete)

    def decide(self, summary: RunSummary, partial: str | None = None) -> bool | None:
        if not self.incomplete:
            return None
        self.problem = f"pytest-karenina merge: incomplete: {'; '.join(self.incomplete)}"
        return False
