"""The plugin of processes that run items (the only process, or an xdist worker): it starts
the prefetcher with the run loop, stops it on the way out, and attaches each item's
``report.karenina`` payload and JUnit properties."""

from __future__ import annotations

from collections.abc import Generator

import pytest

from pytest_karenina.plugin.collect.items import QuestionItem, question_items
from pytest_karenina.plugin.collect.selection import selected_everything
from pytest_karenina.plugin.options.settings import Settings
from pytest_karenina.plugin.process import (
    ProcessRole,
    process_role,
    runs_pipelines,
)
from pytest_karenina.plugin.report.html import add_extras
from pytest_karenina.plugin.report.item_record import first_line
from pytest_karenina.plugin.run.live_status import LiveStatus
from pytest_karenina.plugin.run.pipeline_logs import shield_capture_handlers
from pytest_karenina.plugin.run.prefetch import Prefetcher
from pytest_karenina.plugin.run.replay_usage import ReplayUsageReport, store_usage
from pytest_karenina.plugin.run.signals import remove_workspaces_in_use
from pytest_karenina.plugin.run.xdist_partition import (
    worker_journal,
    worker_share,
)
from pytest_karenina.plugin.stash import (
    HEAP_KEY,
    PREFETCHER_KEY,
    REPLAY_USAGE_OUTPUT,
)

REPLAY_REPORT = "karenina-replay"
"""Name of the replay usage plugin, which runners on the reporting process feed directly."""


class RunnerPlugin:
    """Runs the pipelines of the items this process executes."""

    def __init__(self, config: pytest.Config, settings: Settings, wants_html: bool) -> None:
        self.config = config
        self.settings = settings
        self.wants_html = wants_html
        self.live: LiveStatus | None = None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        if not runs_pipelines(self.config):
            return (yield)
        journal = worker_journal(self.config)
        prefetcher = self.config.stash[PREFETCHER_KEY] = Prefetcher(self.config, journal=journal)
        share = worker_share(self.config, question_items(session.items))
        self.config.stash[HEAP_KEY].settle(len(share))
        prefetcher.start(share)
        if process_role(self.config) is ProcessRole.SOLE:
            self.live = LiveStatus(self.config, prefetcher.counts, self._tally)
        try:
            return (yield)
        finally:
            prefetcher.stop()

    def _tally(self) -> tuple[int, int]:
        controller = self.config.pluginmanager.get_plugin("karenina-controller")
        summary = getattr(controller, "summary", None)
        return (summary.passed, summary.total) if summary is not None else (0, 0)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "teardown" and self.live is not None:
            self.live.tick()

    # pytest installs its log capture per phase: keep the pipelines' records out of each.
    def pytest_runtest_setup(self) -> None:
        shield_capture_handlers()

    def pytest_runtest_call(self) -> None:
        shield_capture_handlers()

    def pytest_runtest_teardown(self) -> None:
        shield_capture_handlers()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if call.when == "setup" and isinstance(item, QuestionItem) and item.results:
            # Setup waited for the pipeline, which may have run long before: the item's
            # time is its pipeline's (pytest's --durations, JUnit and pytest-html show it).
            report.duration = sum(result.metadata.execution_time for result in item.results)
        attach = call.when == "call" or (call.when == "setup" and report.failed)
        if not (isinstance(item, QuestionItem) and item.verdicts and attach):
            return report
        trace = self.settings.html_trace == "all" or (
            self.settings.html_trace == "failed" and not report.passed
        )
        payload = item.payload(include_trace=trace)
        sent = payload.to_json()
        if not report.passed:  # here, before xdist adds its worker line to the text
            sent["reason"] = first_line(report.longreprtext)
        report.karenina = sent  # type: ignore[attr-defined]
        if self.wants_html:
            add_extras(report, payload, trace)
        return report

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if self.config.option.collectonly:  # no run loop to settle the heap in
            self.config.stash[HEAP_KEY].settle(len(question_items(session.items)))

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        prefetcher = self.config.stash.get(PREFETCHER_KEY, None)
        if prefetcher is None:
            return
        prefetcher.stop()
        remove_workspaces_in_use()
        self.config.stash[HEAP_KEY].settle(len(session.items))
        if prefetcher.replay is None:
            return
        usage = store_usage(prefetcher.replay, selected_everything(self.config))
        workeroutput = getattr(self.config, "workeroutput", None)
        if isinstance(workeroutput, dict):
            workeroutput[REPLAY_USAGE_OUTPUT] = usage
        else:
            report = self.config.pluginmanager.get_plugin(REPLAY_REPORT)
            if isinstance(report, ReplayUsageReport):
                report.add(usage)
