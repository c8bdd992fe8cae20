"""Role plugins registered in ``pytest_configure`` when pytest-karenina is active.

* :class:`RunnerPlugin` (every process that runs items): starts the scheduler with the run
  loop, stops it on the way out, and attaches ``report.karenina`` payloads.
* :class:`ControllerPlugin` (the process that reports; the xdist controller or the only
  process): aggregates payloads from reports, streams results, prints the summary and
  applies the pass-rate gate.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from pytest_karenina.collect import QuestionItem
from pytest_karenina.scheduler import SCHEDULER_KEY, Scheduler, scheduler_of
from pytest_karenina.settings import SETTINGS_KEY, Settings
from pytest_karenina.summary import RunSummary, write_junit_gate


class RunnerPlugin:
    """Runs the pipelines of the items this process executes."""

    def __init__(self, config: pytest.Config) -> None:
        from pytest_karenina.activate import html_report_wanted

        self.config = config
        self.wants_html = html_report_wanted(config)
        self.full_selection = False

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        if session.config.pluginmanager.hasplugin("dsession"):  # xdist controller: no items
            return (yield)
        from pytest_karenina.xdist_partition import worker_share

        scheduler = scheduler_of(self.config)
        scheduler.start(worker_share(self.config, session.items))
        try:
            return (yield)
        finally:
            scheduler.stop()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if isinstance(item, QuestionItem) and item.verdicts:
            attach = call.when == "call" or (call.when == "setup" and report.failed)
            if attach:
                from pytest_karenina.payload import build_payload

                settings = self.config.stash[SETTINGS_KEY]
                trace = settings.html_trace == "all" or (
                    settings.html_trace == "failed" and not report.passed
                )
                payload = build_payload(
                    nodeid=item.nodeid, question_id=item.question.id,
                    question_text=item.question.text,
                    answering_model=item.variant.answering.id or "",
                    replicate=item.variant.replicate,
                    template_code=item.question.template_code,
                    verdicts=item.verdicts, include_trace=trace,
                )  # fmt: skip
                report.karenina = payload  # type: ignore[attr-defined]
                if self.wants_html:
                    from pytest_karenina.html import add_extras

                    add_extras(report, payload, trace)
        return report

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        from pytest_karenina.replay_report import COLLECTED_KEY

        selected = sum(1 for item in session.items if isinstance(item, QuestionItem))
        self.full_selection = selected == self.config.stash.get(COLLECTED_KEY, 0)

    def pytest_sessionfinish(self) -> None:
        scheduler: Scheduler | None = self.config.stash.get(SCHEDULER_KEY, None)
        if scheduler is None:
            return
        scheduler.stop()
        if scheduler.replay is None:
            return
        from pytest_karenina.replay_report import WORKER_OUTPUT, usage_of

        usage = usage_of(scheduler.replay, self.full_selection)
        workeroutput = getattr(self.config, "workeroutput", None)
        if isinstance(workeroutput, dict):
            workeroutput[WORKER_OUTPUT] = usage
        else:
            report = self.config.pluginmanager.get_plugin("karenina-replay")
            if report is not None:
                report.add(usage)


class ControllerPlugin:
    """Aggregates payloads, streams the export, summarises, gates."""

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        self.summary = RunSummary()
        self.writer: Any = None

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if self.settings.results is not None:
            from pytest_karenina.collect import CONFIG_KEY
            from pytest_karenina.results.writer import ExportWriter

            vconfig = self.config.stash[CONFIG_KEY]
            self.writer = ExportWriter(
                self.settings.results,
                verification_config=vconfig.model_dump(mode="json", exclude={"replay_store"}),
            )

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        payload = getattr(report, "karenina", None)
        if isinstance(payload, dict) and self.summary.add(payload):
            if self.writer is not None:
                for result in payload.get("results", []):
                    self.writer.add(result)
        elif report.when == "setup" and report.skipped:
            self.summary.add_skip(report.nodeid)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.writer is not None:
            interrupted = exitstatus == pytest.ExitCode.INTERRUPTED
            self.writer.close(complete=not interrupted)
        self.summary.apply_gate(session, self.settings.min_pass_rate)

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        xml_path = getattr(config.option, "xmlpath", None)
        if xml_path and self.summary.gate is not None:
            write_junit_gate(xml_path, self.summary)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        self.summary.write(terminalreporter)
