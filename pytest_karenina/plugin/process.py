"""What this pytest process is for: its role under xdist, and whether it runs pipelines."""

from __future__ import annotations

from enum import StrEnum

import pytest


class ProcessRole(StrEnum):
    """What a pytest process does in the run (as xdist's ``is_xdist_worker`` and
    ``is_xdist_controller`` tell)."""

    SOLE = "sole"
    """No xdist: collects, runs and reports."""
    XDIST_CONTROLLER = "xdist_controller"
    """Distributes items to the workers and reports; runs nothing."""
    XDIST_WORKER = "xdist_worker"
    """Collects and runs its share; reports through the controller."""

    @property
    def runs_items(self) -> bool:
        return self is not ProcessRole.XDIST_CONTROLLER

    @property
    def reports(self) -> bool:
        return self is not ProcessRole.XDIST_WORKER


def process_role(config: pytest.Config) -> ProcessRole:
    """The role of this process (known from ``pytest_configure`` on)."""
    if hasattr(config, "workerinput"):
        return ProcessRole.XDIST_WORKER
    if getattr(config.option, "dist", "no") != "no":
        return ProcessRole.XDIST_CONTROLLER
    return ProcessRole.SOLE


def runs_pipelines(config: pytest.Config) -> bool:
    """Whether this run answers questions: not when it only collects or plans (``--co``,
    ``--setup-plan``, ``--setup-only``), which must never call a model."""
    option = config.option
    return not (option.collectonly or option.setupplan or option.setuponly)


def writes_html_report(config: pytest.Config) -> bool:
    """pytest-html is active and writes a report (``--html``) in this run."""
    return config.pluginmanager.hasplugin("html") and bool(getattr(config.option, "htmlpath", None))
