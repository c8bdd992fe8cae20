"""Shared fixtures for the whole test suite."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import pytest

pytest_plugins = [
    "pytester",
    "tests.support.openai_fixtures",
    "tests.support.anthropic_fixtures",
    "tests.support.mcp_fixtures",
    "tests.support.process_marks",
]


@pytest.fixture
def pytester(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> Iterator[pytest.Pytester]:
    """pytest's ``pytester``, with Python's default warning filters while the test runs.

    An in-process run would otherwise inherit this suite's ``filterwarnings = error``
    (a warning of some plugin of the environment would then break the run); a run in its
    own process starts with the default filters, and so does every run here. The runs' own
    pytest still catches and reports their warnings.

    The runs leave out the environment's plugins that this suite's configuration leaves out
    too: pytest-benchmark warns at configuration time under xdist, and the warning filters
    are process-wide state that library threads (MCP servers, agent loops) swap with
    ``catch_warnings`` while a run configures itself, which turned that warning into an
    INTERNALERROR now and then. Hypothesis's plugin is left out too: no run of a test uses
    it, and it costs every process a run starts (each xdist worker, each subprocess) about
    half a second of CPU.
    """
    monkeypatch.setenv(
        "PYTEST_ADDOPTS", "-p no:benchmark -p no:langsmith_plugin -p no:hypothesispytest"
    )
    with warnings.catch_warnings():
        warnings.resetwarnings()
        yield pytester


@pytest.fixture(autouse=True)
def _no_ci_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs started by a test see no CI service, wherever the suite itself runs.

    On CI (``CI`` or ``BUILD_NUMBER`` set) pytest prints whole failure messages in the
    short summary instead of their first line, and the plugin writes GitHub annotations
    and a job summary under GitHub Actions. A test that wants either sets the variables.
    """
    for name in ("CI", "BUILD_NUMBER", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)
