"""Switching the plugin on, and the plugins each process registers by its role.

* :class:`~.runner.RunnerPlugin` (processes that run items: the only process, or an xdist
  worker), in its own module.
* :class:`ControllerPlugin` (the process that reports: the only process, or the xdist
  controller): the report header, aggregating payloads, streaming the export, the summary,
  the gates (pass rate, baseline) and GitHub output. Beside it: the replay usage report,
  the xdist partition and pytest-html columns when they apply.
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.plugin.baseline_gate import BaselineGate, partial_reason
from pytest_karenina.plugin.changes import ChangedSincePlugin, change_set
from pytest_karenina.plugin.collect import question_items
from pytest_karenina.plugin.config_place import misplaced_config
from pytest_karenina.plugin.cost_cap import SKIP_PREFIX
from pytest_karenina.plugin.estimate import offline_estimate
from pytest_karenina.plugin.heap import HeapSettler
from pytest_karenina.plugin.process import (
    ProcessRole,
    process_role,
    writes_html_report,
)
from pytest_karenina.plugin.report.compact import compact_failure_summary, compact_notice
from pytest_karenina.plugin.report.export_sink import ExportSink
from pytest_karenina.plugin.report.github import GUARD, CommandGuard, github_output
from pytest_karenina.plugin.report.header import header_lines
from pytest_karenina.plugin.report.html import HtmlPlugin
from pytest_karenina.plugin.report.item_record import item_record, run_record
from pytest_karenina.plugin.report.junit import write_suite_properties
from pytest_karenina.plugin.report.logged import flaky_status, logged_residue
from pytest_karenina.plugin.report.payload import ItemPayload
from pytest_karenina.plugin.report.replay_usage import ReplayUsageReport
from pytest_karenina.plugin.report.summary import RunSummary
from pytest_karenina.plugin.run_config import build_config, check_run, with_search_tools
from pytest_karenina.plugin.runner import REPLAY_REPORT, RunnerPlugin
from pytest_karenina.plugin.selection import SelectionPlugin
from pytest_karenina.plugin.settings import Settings, resolve_settings
from pytest_karenina.plugin.shards import ShardPlugin
from pytest_karenina.plugin.signals import interrupt_on_sigterm
from pytest_karenina.plugin.stash import (
    CONFIG_KEY,
    GATE_POLICY_KEY,
    HEAP_KEY,
    SELECTION_KEY,
    SETTINGS_KEY,
)
from pytest_karenina.plugin.xdist_partition import (
    XdistControllerPlugin,
)


def activate(config: pytest.Config, checkpoints: tuple[Path, ...]) -> None:
    """Resolve settings once, build the VerificationConfig, register the role plugins."""
    problem = misplaced_config(config, checkpoints)
    if problem is not None:
        raise pytest.UsageError(problem)
    settings = resolve_settings(config, checkpoints)
    vconfig = with_search_tools(config, build_config(settings))
    check_run(settings, vconfig)
    settings = settings.with_default_replay(vconfig)
    role = process_role(config)
    if settings.ci.estimate:
        settings = offline_estimate(config, settings, role)
    config.stash[SETTINGS_KEY] = settings
    config.stash[CONFIG_KEY] = vconfig
    config.stash[GATE_POLICY_KEY] = settings.gate_policy()
    shards = ShardPlugin(*settings.shard) if settings.shard is not None else None
    if shards is not None:
        config.pluginmanager.register(shards, "karenina-shard")
    narrowed = shards is not None or settings.ci.changed_since is not None
    note = shards.empty_note() if shards is not None else None
    config.pluginmanager.register(SelectionPlugin(config, narrowed, note), "karenina-selection")
    changes = None
    if settings.ci.changed_since is not None:
        shared = [path for path in (settings.preset, config.inipath) if path is not None]
        changes = change_set(
            settings.ci.changed_since, settings.checkpoints, shared, settings.include_unfinished,
            settings.workspace_root,
        )  # fmt: skip
        config.pluginmanager.register(ChangedSincePlugin(changes), "karenina-changed-since")
    config.stash[HEAP_KEY] = HeapSettler(config)
    interrupt_on_sigterm(config)
    manager = config.pluginmanager
    html = writes_html_report(config)
    if role.runs_items:
        manager.register(RunnerPlugin(config, settings, html), "karenina-runner")
    if not role.reports:
        return
    unchanged = changes.unchanged if changes is not None else frozenset()
    controller = ControllerPlugin(config, settings, role, unchanged)
    manager.register(controller, "karenina-controller")
    if controller.guard is not None:
        manager.register(controller.guard, GUARD)
    if settings.replay != "off":
        manager.register(ReplayUsageReport(config, settings), REPLAY_REPORT)
    if role is ProcessRole.XDIST_CONTROLLER:
        manager.register(XdistControllerPlugin(config, settings), "karenina-xdist")
    if html:
        manager.register(HtmlPlugin(config), "karenina-html")


class ControllerPlugin:
    """The header, aggregating payloads, streaming the export, summarising, gating."""

    def __init__(
        self,
        config: pytest.Config,
        settings: Settings,
        role: ProcessRole,
        unchanged: frozenset[str] = frozenset(),
    ) -> None:
        self.config = config
        self.settings = settings
        self.role = role
        policy = settings.replicate_policy
        self.summary = RunSummary(
            pass_at=policy.k if policy.kind == "pass@" else None, compare_to=settings.compare_to
        )
        self.export: ExportSink | None = None
        self.session: pytest.Session | None = None
        self.baseline = BaselineGate(settings.ci, settings.shard, unchanged)
        self._logged: dict[str, list[pytest.TestReport]] = {}  # with payloads, until teardown
        self.guard = CommandGuard(config) if settings.ci.github else None

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
                run_record(self.settings, None),
            )

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Generator[None, None, None]:
        try:
            return (yield)
        finally:  # after every other implementation has seen the report
            self._take(report)

    def _take(self, report: pytest.TestReport) -> None:
        sent = getattr(report, "karenina", None)
        if isinstance(sent, dict):
            payload = ItemPayload.from_json(sent)
            reason = sent.get("reason")
            if reason and payload.nodeid not in self.summary.payloads:
                self.summary.reasons[payload.nodeid] = reason
            if self.summary.add(payload) and self.export is not None:
                self.export.add(payload.results)
                self.export.add_item(item_record(payload, report.outcome, reason))
            sent["results"] = []  # the export has them
            self._logged.setdefault(report.nodeid, []).append(report)
        elif report.failed:
            self.summary.other_failures += 1
        elif report.when == "setup" and report.skipped:
            self.summary.add_skip(report.nodeid)
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
            self.summary.cost.capped += reason.startswith(f"Skipped: {SKIP_PREFIX}")
        if report.when == "teardown":
            for logged in self._logged.pop(report.nodeid, ()):
                logged.karenina = logged_residue(logged.karenina)  # type: ignore[attr-defined]

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
                summary.cost.capped,
            )  # fmt: skip
            self.export.close(complete=finished and not stopped, run=run)
        partial = partial_reason(self.summary, exitstatus, stopped, selection)
        self.baseline.settle(self.summary, partial)
        self.summary.apply_gate(session, self.settings.min_pass_rate, self.settings.gate_on)
        if self.export is not None and self.export.problem and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED  # results were lost
        compact_failure_summary(self.config, self.summary.payloads)
        if self.role is ProcessRole.XDIST_CONTROLLER:
            self.config.stash[HEAP_KEY].settle(len(session.items))

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        xml_path = getattr(config.option, "xmlpath", None)
        properties = self.summary.suite_properties()
        if xml_path and properties:
            write_suite_properties(xml_path, properties)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        self.summary.write(terminalreporter)
        if self.guard is not None and self.session is not None:
            title = ", ".join(path.name for path in self.settings.checkpoints)
            status, limit = int(self.session.exitstatus), self.settings.ci.annotations
            self.guard.annotate(github_output(self.summary, title, status, limit))
        for line in self.export.report_lines() if self.export is not None else ():
            terminalreporter.write_line(line, red=True)
