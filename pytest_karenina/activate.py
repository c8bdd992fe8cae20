"""Switching the plugin on: settings, the run's config and the role plugins."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_karenina.collect import CONFIG_KEY
from pytest_karenina.settings import SETTINGS_KEY, resolve_settings


def activate(config: pytest.Config, checkpoints: tuple[Path, ...]) -> None:
    """Resolve settings once, build the VerificationConfig and register plugins by role."""
    from pytest_karenina.session import ControllerPlugin, RunnerPlugin

    settings = resolve_settings(config, checkpoints)
    vconfig = settings.verification_config()
    settings = settings.with_default_replay(vconfig)
    config.stash[SETTINGS_KEY] = settings
    config.stash[CONFIG_KEY] = vconfig
    manager = config.pluginmanager
    is_worker = hasattr(config, "workerinput")
    manager.register(RunnerPlugin(config), "karenina-runner")
    if not is_worker:
        manager.register(ControllerPlugin(config, settings), "karenina-controller")
        if settings.replay != "off":
            from pytest_karenina.replay_report import ReplayReport

            manager.register(ReplayReport(config, settings), "karenina-replay")
        if manager.hasplugin("xdist"):
            from pytest_karenina.xdist_partition import XdistControllerPlugin

            manager.register(XdistControllerPlugin(config), "karenina-xdist")
        if html_report_wanted(config):
            from pytest_karenina.html import HtmlPlugin

            manager.register(HtmlPlugin(config), "karenina-html")


def html_report_wanted(config: pytest.Config) -> bool:
    """pytest-html is active and writes a report (``--html``) in this run."""
    return config.pluginmanager.hasplugin("html") and bool(getattr(config.option, "htmlpath", None))


def header_lines(config: pytest.Config) -> list[str]:
    settings = config.stash.get(SETTINGS_KEY, None)
    vconfig = config.stash.get(CONFIG_KEY, None)
    if settings is None or vconfig is None:
        return []
    answering, parsing = vconfig.stamped_models()

    def names(models: list[object]) -> str:
        return ", ".join(
            str(getattr(m, "id", None) or getattr(m, "model_name", "?")) for m in models
        )

    replay = settings.replay
    if replay != "off":
        replay += f" ({settings.replay_store.name if settings.replay_store else 'default store'})"
    lines = [
        f"karenina: answering {names(list(answering))}; parsing {names(list(parsing))}",
        f"karenina: mode {vconfig.evaluation_mode}, replicates {vconfig.replicate_count}, "
        f"concurrency {settings.concurrency}, replay {replay}",
    ]
    if settings.replay_note:
        lines.append(f"karenina: {settings.replay_note}")
    limits = [
        f"{settings.max_concurrent_requests} in flight" if settings.max_concurrent_requests else "",
        f"{settings.requests_per_minute:g}/min" if settings.requests_per_minute else "",
        f"{settings.llm_timeout:g}s per call" if settings.llm_timeout else "",
        f"at most {settings.max_retries} retries" if settings.max_retries is not None else "",
    ]
    if any(limits):
        shared = " (split across xdist workers)" if config.getoption("numprocesses", None) else ""
        lines.append(f"karenina: per model {', '.join(x for x in limits if x)}{shared}")
    return lines
