"""The plugin of processes that run items (the only process, or an xdist worker): it starts
the prefetcher with the run loop, stops it on the way out, and attaches what the reports learn
about each item (its ``report.karenina`` payload, JUnit properties, pytest-html extras) when
pytest makes the item's reports."""

from __future__ import annotations

from collections.abc import Generator
from typing import cast

import pytest

from pytest_karenina.plugin.collect.base import karenina_items
from pytest_karenina.plugin.collect.fingerprint import Fingerprints
from pytest_karenina.plugin.collect.items import QuestionItem
from pytest_karenina.plugin.collect.judge_check import JudgeCheckItem
from pytest_karenina.plugin.collect.scenario_items import ScenarioItem
from pytest_karenina.plugin.collect.scenario_payload import scenario_payload
from pytest_karenina.plugin.collect.selection import selected_everything
from pytest_karenina.plugin.options.settings import Settings
from pytest_karenina.plugin.payload import ItemPayload, mark_cost_capped
from pytest_karenina.plugin.process import ProcessRole, process_role, runs_pipelines
from pytest_karenina.plugin.report.html import add_extras
from pytest_karenina.plugin.report.item_record import first_line
from pytest_karenina.plugin.report.junit import scenario_properties, user_properties
from pytest_karenina.plugin.report.saved_workspaces import (
    add_links,
    report_directory,
    saved_properties,
)
from pytest_karenina.plugin.report.summary import RunSummary
from pytest_karenina.plugin.run.live_status import LiveStatus
from pytest_karenina.plugin.run.pipeline_logs import shield_capture_handlers
from pytest_karenina.plugin.run.prefetch import AnyItem, Prefetcher
from pytest_karenina.plugin.run.replay_usage import ReplayUsageReport, store_usage
from pytest_karenina.plugin.run.signals import remove_workspaces_in_use
from pytest_karenina.plugin.run.xdist_partition import worker_journal, worker_share
from pytest_karenina.plugin.stash import (
    CONFIG_KEY,
    GATE_POLICY_KEY,
    HEAP_KEY,
    PREFETCHER_KEY,
    REPLAY_USAGE_OUTPUT,
)
from pytest_karenina.plugin.verdict.judge_check import attach_check


def item_payload(
    item: QuestionItem,
    include_trace: bool,
    settings: Settings,
    fingerprints: Fingerprints | None = None,
) -> ItemPayload:
    """What the reports learn about ``item`` (after its setup decided its verdicts);
    ``fingerprints``: the run's, for the item's fingerprint."""
    rubrics = (item.global_rubric, item.question.rubric, item.dynamic_rubric)
    fingerprint = fingerprints.of(item.question, rubrics) if fingerprints is not None else None
    return ItemPayload.of_verdicts(
        nodeid=item.nodeid, question_id=item.question.id, question_text=item.question.text,
        answering_model=item.model_replicate.answering.id or "",
        replicate=item.model_replicate.replicate, facts=item.facts,
        verdicts=item.verdicts, include_trace=include_trace, vote=item.vote,
        prices=settings.ci.prices, fingerprint=fingerprint,
    )  # fmt: skip


class RunnerPlugin:
    """Runs the pipelines of the items this process executes.

    On the only process of a run, the controller's ``summary`` feeds the status line of long
    runs and ``replay_report`` takes the replay store's usage (an xdist worker sends it through
    ``workeroutput`` instead).
    """

    def __init__(
        self,
        config: pytest.Config,
        settings: Settings,
        wants_html: bool,
        summary: RunSummary | None = None,
        replay_report: ReplayUsageReport | None = None,
    ) -> None:
        self.config = config
        self.settings = settings
        self.wants_html = wants_html
        self.summary = summary
        self.replay_report = replay_report
        self.live: LiveStatus | None = None
        self.fingerprints: Fingerprints | None = None
        """The run's fingerprints, once an item reports."""

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        if not runs_pipelines(self.config):
            return (yield)
        journal = worker_journal(self.config)
        prefetcher = self.config.stash[PREFETCHER_KEY] = Prefetcher(
            self.config, self.settings, self.config.stash[CONFIG_KEY], journal=journal
        )
        share = worker_share(self.config, karenina_items(session.items))
        self.config.stash[HEAP_KEY].settle(len(share))
        prefetcher.start(cast("list[AnyItem]", share))  # questions and scenarios
        if process_role(self.config) is ProcessRole.SOLE:
            self.live = LiveStatus(self.config, prefetcher.counts, self._tally)
        try:
            return (yield)
        finally:
            prefetcher.stop()

    def _tally(self) -> tuple[int, int]:
        summary = self.summary
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
        if isinstance(item, ScenarioItem):
            return self._scenario_report(item, call, report)
        if not isinstance(item, QuestionItem):
            return report
        if call.when == "setup":
            self._setup_ended(item, report)
        attach = call.when == "call" or (call.when == "setup" and report.failed)
        if not (item.verdicts and attach):
            return report
        trace = self.settings.html_trace == "all" or (
            self.settings.html_trace == "failed" and not report.passed
        )
        payload = item_payload(item, trace, self.settings, self._fingerprints())
        sent = payload.to_json()
        if not report.passed:  # here, before xdist adds its worker line to the text
            sent["reason"] = first_line(report.longreprtext)
        report.karenina = sent  # type: ignore[attr-defined]
        if isinstance(item, JudgeCheckItem) and item.check is not None:
            attach_check(report, item.check)
        if self.wants_html:
            add_extras(report, payload, trace)
            add_links(report, item.results, report_directory(self.config))
        return report

    def _fingerprints(self) -> Fingerprints:
        if self.fingerprints is None:
            vconfig = self.config.stash[CONFIG_KEY]
            gating = self.settings.rubric_gating(vconfig.evaluation_mode)
            self.fingerprints = Fingerprints(vconfig, self.config.stash[GATE_POLICY_KEY], gating)
        return self.fingerprints

    def _scenario_report(
        self, item: ScenarioItem, call: pytest.CallInfo[None], report: pytest.TestReport
    ) -> pytest.TestReport:
        if call.when == "setup" and item.results:
            report.duration = sum(result.metadata.execution_time for result in item.results)
        if call.when == "setup" and item.cost_capped and report.skipped:
            mark_cost_capped(report)
        payload = scenario_payload(item, self.settings.ci.prices, self._fingerprints())
        if call.when == "setup" and payload.scenario is not None:
            verdict = item.verdict.outcome if item.verdict is not None else "error"
            found = scenario_properties(payload.scenario, verdict)
            item.user_properties.extend(found)  # see _setup_ended
            report.user_properties.extend(found)
        if not (call.when == "call" or (call.when == "setup" and report.failed)):
            return report
        sent = payload.to_json()
        if not report.passed:
            sent["reason"] = first_line(report.longreprtext)
        report.karenina = sent  # type: ignore[attr-defined]
        if self.wants_html:
            add_extras(report, payload, False)
        return report

    def _setup_ended(self, item: QuestionItem, report: pytest.TestReport) -> None:
        """What the setup report learns: the pipeline's time, the cost cap's skip, the JUnit
        properties of the item's verdicts."""
        if item.results:
            # Setup waited for the pipeline, which may have run long before: the item's
            # time is its pipeline's (pytest's --durations, JUnit and pytest-html show it).
            report.duration = sum(result.metadata.execution_time for result in item.results)
        if item.cost_capped and report.skipped:
            mark_cost_capped(report)
        found = user_properties(item.verdicts, item.vote, self.settings.ci.prices)
        found += saved_properties(item.results)
        # pytest's JUnit writer reads the teardown report's properties, which copies the
        # item's list: extend that list, and this report's copy, made before.
        item.user_properties.extend(found)
        report.user_properties.extend(found)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if self.config.option.collectonly:  # no run loop to settle the heap in
            self.config.stash[HEAP_KEY].settle(len(karenina_items(session.items)))

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        prefetcher = self.config.stash.get(PREFETCHER_KEY, None)
        if prefetcher is None:
            return
        prefetcher.stop()
        remove_workspaces_in_use()
        self.config.stash[HEAP_KEY].settle(len(session.items))
        if prefetcher.replay is None:
            return
        usage = store_usage(
            prefetcher.replay, selected_everything(self.config), prefetcher.judge_usage()
        )
        workeroutput = getattr(self.config, "workeroutput", None)
        if isinstance(workeroutput, dict):
            workeroutput[REPLAY_USAGE_OUTPUT] = usage
        elif self.replay_report is not None:
            self.replay_report.add(usage)
