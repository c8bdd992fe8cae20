"""Process roles: what a pytest process does in the run, read from its config."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from pytest_karenina.plugin.process import ProcessRole, process_role


def _config(**attributes: Any) -> pytest.Config:
    return SimpleNamespace(**attributes)  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("config", "role"),
    [
        (_config(workerinput={"workerid": "gw0"}, option=SimpleNamespace(dist="load")),
         ProcessRole.XDIST_WORKER),
        (_config(workerinput={}, option=SimpleNamespace()), ProcessRole.XDIST_WORKER),
        (_config(option=SimpleNamespace(dist="load")), ProcessRole.XDIST_CONTROLLER),
        (_config(option=SimpleNamespace(dist="each")), ProcessRole.XDIST_CONTROLLER),
        (_config(option=SimpleNamespace(dist="no")), ProcessRole.SOLE),
        (_config(option=SimpleNamespace()), ProcessRole.SOLE),
    ],
)  # fmt: skip
def test_process_role(config: pytest.Config, role: ProcessRole) -> None:
    """workerinput makes a worker; a dist mode other than no a controller; else sole."""
    assert process_role(config) is role


@pytest.mark.parametrize(
    ("role", "runs_items", "reports"),
    [
        (ProcessRole.SOLE, True, True),
        (ProcessRole.XDIST_CONTROLLER, False, True),
        (ProcessRole.XDIST_WORKER, True, False),
    ],
)
def test_what_each_role_does(role: ProcessRole, runs_items: bool, reports: bool) -> None:
    """The controller only reports, a worker only runs, a sole process does both."""
    assert (role.runs_items, role.reports) == (runs_items, reports)


def test_role_values() -> None:
    """The role names as they appear in text."""
    assert [role.value for role in ProcessRole] == ["sole", "xdist_controller", "xdist_worker"]
