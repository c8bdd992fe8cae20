"""The plugin of the process that reports (the only process, or the xdist controller): the
report header, aggregating payloads, streaming the export, the summary, the gates and GitHub
output. The run's exit status is set here, once, from the gates' decisions."""

from __future__ import annotations

from collections.abc import Generator, Iterable
from typing import Any

import pytest

from pytest_karenina.plugin.collect.items import question_items
from pytest_karenina.plugin.collect.selection import selected_nothing
from pytest_karenina.plugin.gates.baseline_gate import (
    BaselineGate,
    known_failures,
    partial_reason,
)
from pytest_karenina.plugin.gates.baseline_side import baseline_side_by_side
from pytest_karenina.plugin.gates.completeness import CostCapGate, LostExportGate
from pytest_karenina.plugin.gates.judge_kappa import JudgeKappaGate
from pytest_karenina.plugin.gates.pass_rate import PassRateGate
from pytest_karenina.plugin.gates.protocol import Gate, exit_status, junit_properties, run_lines
from pytest_karenina.plugin.options.settings import Settings
from pytest_karenina.plugin.payload import ItemPayload, cost_capped
from pytest_karenina.plugin.process import ProcessRole
from pytest_karenina.plugin.report.compact import compact_failure_summary, compact_notice
from pytest_karenina.plugin.report.export_sink import ExportSink
from pytest_karenina.plugin.report.github import CommandGuard, github_output
from pytest_karenina.plugin.report.header import header_lines
from pytest_karenina.plugin.report.history_keeper import HistoryKeeper
from pytest_karenina.plugin.report.item_record import item_record, run_record
from pytest_karenina.plugin.report.judge_health import JudgeHealth
from pytest_karenina.plugin.report.junit import write_suite_properties
from pytest_karenina.plugin.report.logged import flaky_status, logged_residue
from pytest_karenina.plugin.report.statements import Line
from pytest_karenina.plugin.report.summary import RunSummary
from pytest_karenina.plugin.run.replay_usage import ReplayUsageReport
from pytest_karenina.plugin.stash import CONFIG_KEY, HEAP_KEY, SELECTION_KEY
from pytest_karenina.plugin.verdict.judge_check import reported_check


def write_lines(terminal: Any, lines: Iterable[Line]) -> None:
    """Write ``lines`` to pytest's terminal reporter."""
    for line in lines:
        if line.sep is not None:
            terminal.write_sep(line.sep, line.text)
        elif line.red:
            terminal.write_line(line.text, red=True)
        else:
            terminal.write_line(line.text)


class ControllerPlugin:
    """The header, aggregating payloads, streaming the export, summarising, gating.

    ``narrowed``: a shard or ``--karenina-changed-since`` may leave a run nothing to do, which
    is then a success (exit 0, with ``nothing_note`` in the terminal summary when given), not
    pytest's "no tests collected" (5): a matrix job whose shard holds no question, or a pull
    request that changed none, passes.
    """

    def __init__(
        self,
        config: pytest.Config,
        settings: Settings,
        role: ProcessRole,
        unchanged: frozenset[str] = frozenset(),
        narrowed: bool = False,
        nothing_note: str | None = None,
        judge_health: JudgeHealth | None = None,
    ) -> None:
        self.config = config
        self.settings = settings
        self.role = role
        policy = settings.replicate_policy
        self.summary = RunSummary(
            pass_at=policy.k if policy.kind == "pass@" else None, compare_to=settings.compare_to
        )
        self.export: ExportSink | None = None
        self.scenario_records: list[dict[str, Any]] = []
        """The export's ``scenario_results`` and ``errors``, from the scenario items."""
        self.scenario_errors: list[tuple[str, str]] = []
        self.session: pytest.Session | None = None
        self._logged: dict[str, list[pytest.TestReport]] = {}  # with payloads, until teardown
        self.guard = CommandGuard(config) if settings.ci.github else None
        self.narrowed = narrowed
        self.nothing_note = nothing_note
        self.nothing_to_do = False
        self.lost_export = LostExportGate()
        self.gates: list[Gate] = []
        """Asked in this order; they write their lines in it too."""
        self.judge_health = judge_health
        """A judge check's agreement with people (its labels are no model's pass rate or
        baseline: those gates do not apply)."""
        self.replay_usage: ReplayUsageReport | None = None
        """The replay store's usage, whose lines close the karenina summary (set by
        :func:`~.activate.activate` when the run replays or records)."""
        checking = judge_health is not None
        if settings.min_pass_rate is not None and not checking:
            self.gates.append(PassRateGate(settings.min_pass_rate, settings.gate_on))
        if judge_health is not None and settings.min_judge_kappa is not None:
            self.gates.append(JudgeKappaGate(settings.min_judge_kappa, judge_health))
        if settings.ci.baseline is not None and not checking:
            models = [model.id or "" for model in config.stash[CONFIG_KEY].answering_models]
            self.gates.append(BaselineGate(settings.ci, settings.shard, unchanged, models))
        self.gates += [CostCapGate(), self.lost_export]
        args = config.invocation_params.args
        self.side_by_side = baseline_side_by_side(settings, self.gates, args)
        """Regressions side by side with the baseline run (``--karenina-baseline-results``)."""
        self.history: HistoryKeeper | None = None
        """The run-history file (``--karenina-history``): read now, appended at the end."""
        if settings.ci.history is not None and not checking:
            self.history = HistoryKeeper(
                settings.ci.history, [path.name for path in settings.checkpoints],
                config.stash[CONFIG_KEY].model_dump(mode="json", exclude={"replay_store"}),
                config.rootpath, settings.ci.history_keep, settings.shard,
            )  # fmt: skip

    def pytest_report_teststatus(self, report: pytest.TestReport) -> tuple[str, str, str] | None:
        """A question whose replicates disagreed: ``~`` and ``PASSED (flaky 2/3)`` (``F`` and
        ``FAILED (flaky 1/3)``); the outcome itself is the replicate policy's."""
        return flaky_status(report)

    def pytest_report_header(self) -> list[str]:
        distributed = self.role is ProcessRole.XDIST_CONTROLLER
        return header_lines(self.settings, self.config.stash[CONFIG_KEY], distributed)

    def pytest_report_collectionfinish(self, items: list[pytest.Item]) -> list[str]:
        return compact_notice(self.config, len(question_items(items)))

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session
        if self.settings.results is not None:
            vconfig = self.config.stash[CONFIG_KEY]
            self.export = ExportSink(
                self.settings.results,
                vconfig.model_dump(mode="json", exclude={"replay_store"}),
                run_record(self.settings, None, judge_health=self.judge_health),
            )
            self.lost_export.sink = self.export

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Generator[None, None, None]:
        try:
            return (yield)
        finally:  # after every other implementation has seen the report
            self._take(report)

    def _take(self, report: pytest.TestReport) -> None:
        if self.judge_health is not None:
            self.judge_health.take(report)
        sent = getattr(report, "karenina", None)
        if isinstance(sent, dict):
            payload = ItemPayload.from_json(sent)
            reason = sent.get("reason")
            if reason and payload.nodeid not in self.summary.payloads:
                self.summary.reasons[payload.nodeid] = reason
            if self.summary.add(payload) and self.export is not None:
                self.export.add(payload.results)
                self._scenario_parts(payload)
                check = reported_check(report) if self.judge_health is not None else None
                self.export.add_item(item_record(payload, report.outcome, reason, check))
            sent["results"] = []  # the export has them
            self._logged.setdefault(report.nodeid, []).append(report)
        elif report.failed:
            self.summary.other_failures += 1
        elif report.when == "setup" and report.skipped:
            self.summary.add_skip(report.nodeid)
            self.summary.cost.capped += cost_capped(report)
        if report.when == "teardown":
            for logged in self._logged.pop(report.nodeid, ()):
                logged.karenina = logged_residue(logged.karenina)  # type: ignore[attr-defined]

    def _scenario_parts(self, payload: ItemPayload) -> None:
        scenario = payload.scenario or {}
        self.scenario_records += scenario.get("records") or []
        self.scenario_errors += [(str(d), str(e)) for d, e in scenario.get("errors") or []]

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.summary.other_failures += 1

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        selection = self.config.stash.get(SELECTION_KEY, None)
        stopped = bool(session.shouldstop or session.shouldfail)
        if self.export is not None:
            # Complete: every selected item ran (no interruption, -x stop or internal error).
            finished = exitstatus in (
                pytest.ExitCode.OK,
                pytest.ExitCode.TESTS_FAILED,
                pytest.ExitCode.NO_TESTS_COLLECTED,
            )
            summary = self.summary
            run = run_record(
                self.settings, selection, summary.skipped, summary.other_failures,
                summary.cost.capped, self.judge_health,
            )  # fmt: skip
            self.export.close(
                complete=finished and not stopped, run=run,
                scenario_results=self.scenario_records or None,
                errors=self.scenario_errors or None,
            )  # fmt: skip
        if self.history is not None:
            self.history.record(self.summary.payloads.values())
        partial = partial_reason(self.summary, exitstatus, stopped, selection)
        status = exit_status(session.exitstatus, self.summary, partial, self.gates)
        if self.narrowed and status == pytest.ExitCode.NO_TESTS_COLLECTED:
            self.nothing_to_do = selected_nothing(selection)
            if self.nothing_to_do:
                status = pytest.ExitCode.OK
        session.exitstatus = status
        compact = compact_failure_summary(self.config, self.summary.payloads)
        if compact:  # the reporter exists: compact_failure_summary read it
            write_lines(
                self.config.pluginmanager.get_plugin("terminalreporter"), map(Line, compact)
            )
        if self.role is ProcessRole.XDIST_CONTROLLER:
            # The controller collects no items: the reports it holds measure its heap.
            self.config.stash[HEAP_KEY].settle(len(self.summary.payloads))

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        xml_path = getattr(config.option, "xmlpath", None)
        properties = junit_properties(self.summary, self.gates)
        if self.judge_health is not None:
            properties += self.judge_health.properties()
        if xml_path and properties:
            write_suite_properties(xml_path, properties)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.judge_health is not None:
            write_lines(terminalreporter, self.judge_health.lines())
        write_lines(terminalreporter, run_lines(self.summary, self.gates))
        if self.side_by_side is not None:
            write_lines(terminalreporter, self.side_by_side.lines())
        if self.history is not None:
            write_lines(terminalreporter, self.history.lines())
        reported = bool(self.summary.payloads or self.summary.skipped)
        if self.replay_usage is not None and reported:  # in the summary; none when nothing ran
            write_lines(terminalreporter, map(Line, self.replay_usage.lines))
        if self.guard is not None and self.session is not None:
            title = ", ".join(path.name for path in self.settings.checkpoints)
            status, limit = int(self.session.exitstatus), self.settings.ci.annotations
            known = known_failures(self.gates, self.settings.ci.github_known_failures)
            history = self.history.summary_lines() if self.history is not None else []
            found = github_output(self.summary, title, status, limit, self.gates, known, history)
            self.guard.annotate(found)
        if self.export is not None:
            write_lines(terminalreporter, self.export.report_lines())
        if self.nothing_to_do and self.nothing_note:
            terminalreporter.write_line(self.nothing_note)
