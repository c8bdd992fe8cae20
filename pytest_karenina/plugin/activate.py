"""Switching the plugin on: settings resolved once, and the plugins each process registers by
its role.

* :class:`~.runner.RunnerPlugin` (processes that run items: the only process, or an xdist
  worker);
* :class:`~.controller.ControllerPlugin` (the process that reports: the only process, or the
  xdist controller). Beside it: the replay usage report, the xdist partition and pytest-html
  columns when they apply.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_karenina.checkpoint import Benchmark
from pytest_karenina.plugin.collect.changed_since import ChangedSincePlugin, change_set
from pytest_karenina.plugin.collect.judge_check import labelled_items
from pytest_karenina.plugin.collect.labels import LabelError, load_labels, shown
from pytest_karenina.plugin.collect.selection import SelectionPlugin
from pytest_karenina.plugin.collect.shards import ShardPlugin
from pytest_karenina.plugin.controller import ControllerPlugin
from pytest_karenina.plugin.estimate import offline_estimate
from pytest_karenina.plugin.options.config_place import misplaced_config
from pytest_karenina.plugin.options.preflight import check_needs
from pytest_karenina.plugin.options.run_config import build_config, check_run, with_search_tools
from pytest_karenina.plugin.options.settings import Settings, resolve_settings
from pytest_karenina.plugin.process import (
    ProcessRole,
    process_role,
    runs_pipelines,
    writes_html_report,
)
from pytest_karenina.plugin.report.cpu_meter import CpuMeter
from pytest_karenina.plugin.report.github import GUARD
from pytest_karenina.plugin.report.history_html import HistoryHtml
from pytest_karenina.plugin.report.html import HtmlPlugin
from pytest_karenina.plugin.report.judge_health import JudgeHealth, JudgeHealthHtml
from pytest_karenina.plugin.run.heap import HeapSettler
from pytest_karenina.plugin.run.replay_usage import ReplayUsageReport
from pytest_karenina.plugin.run.signals import interrupt_on_sigterm
from pytest_karenina.plugin.run.xdist_partition import XdistControllerPlugin
from pytest_karenina.plugin.runner import RunnerPlugin
from pytest_karenina.plugin.stash import (
    CONFIG_KEY,
    GATE_POLICY_KEY,
    HEAP_KEY,
    LABELLED_ITEMS_KEY,
    SETTINGS_KEY,
)

REPLAY_REPORT = "karenina-replay"
"""Name of the replay usage plugin (on the reporting process)."""


def activate(config: pytest.Config, checkpoints: tuple[Path, ...]) -> None:
    """Resolve settings once, build the VerificationConfig, register the role plugins.

    Plugins that need one another are handed each other here; none looks another up by name.
    """
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
    elif runs_pipelines(config):  # keys and stores, once, before any question runs
        check_needs(settings, vconfig)
    config.stash[SETTINGS_KEY] = settings
    config.stash[CONFIG_KEY] = vconfig
    config.stash[GATE_POLICY_KEY] = settings.gate_policy()
    health = judge_check(config, settings, checkpoints)
    manager = config.pluginmanager
    shards = ShardPlugin(*settings.shard) if settings.shard is not None else None
    if shards is not None:
        manager.register(shards, "karenina-shard")
    manager.register(SelectionPlugin(config), "karenina-selection")
    changes = None
    if settings.ci.changed_since is not None:
        shared = [path for path in (settings.preset, config.inipath) if path is not None]
        changes = change_set(
            settings.ci.changed_since, settings.checkpoints, shared, settings.include_unfinished,
            settings.workspace_root,
        )  # fmt: skip
        manager.register(ChangedSincePlugin(changes), "karenina-changed-since")
    config.stash[HEAP_KEY] = HeapSettler(config)
    interrupt_on_sigterm(config)
    manager.register(CpuMeter(config, role.runs_items, role.reports), "karenina-cpu-meter")
    html = writes_html_report(config)
    controller = replay = None
    if role.reports:
        unchanged = changes.unchanged if changes is not None else frozenset()
        narrowed = shards is not None or settings.ci.changed_since is not None
        note = shards.empty_note() if shards is not None else None
        controller = ControllerPlugin(
            config, settings, role, unchanged, narrowed, note, judge_health=health
        )
        if settings.replay != "off":
            replay = controller.replay_usage = ReplayUsageReport(config, settings)
    if role.runs_items:
        summary = controller.summary if controller is not None else None
        manager.register(RunnerPlugin(config, settings, html, summary, replay), "karenina-runner")
    if controller is None:
        return
    manager.register(controller, "karenina-controller")
    if controller.guard is not None:
        manager.register(controller.guard, GUARD)
    if replay is not None:
        manager.register(replay, REPLAY_REPORT)
    if role is ProcessRole.XDIST_CONTROLLER:
        manager.register(XdistControllerPlugin(config, settings), "karenina-xdist")
    if html:
        plugin = HtmlPlugin(config, controller.summary, controller.gates, controller.side_by_side)
        manager.register(plugin, "karenina-html")
        if controller.history is not None:
            manager.register(HistoryHtml(controller.history), "karenina-history-html")
        if health is not None:
            manager.register(JudgeHealthHtml(health), "karenina-judge-health-html")


def judge_check(
    config: pytest.Config, settings: Settings, checkpoints: tuple[Path, ...]
) -> JudgeHealth | None:
    """``--karenina-judge-check``: read the labels (a labels file that does not fit the run is
    a usage error: nothing runs), make them the checkpoints' items, and return the report of
    the judge's agreement with people (None without labels)."""
    if settings.judge_check is None:
        return None
    vconfig = config.stash[CONFIG_KEY]
    try:
        labels = load_labels(settings.judge_check, checkpoints, vconfig.template_time_limit)
    except LabelError as exc:
        raise pytest.UsageError(f"--karenina-judge-check: {exc}") from None

    def items(file: pytest.File, benchmark: Benchmark) -> list[pytest.Item]:
        return labelled_items(file, benchmark, labels, vconfig)

    config.stash[LABELLED_ITEMS_KEY] = items
    return JudgeHealth(shown(labels.path), len(labels.labels))
