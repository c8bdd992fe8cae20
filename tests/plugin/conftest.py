"""Plugin tests: every run talks to the scripted server with the e2e canary key.

Runs are in-process ``pytester.runpytest`` by default; a subprocess only where a real
process is the point (signals, a fresh interpreter's imports). A test that also runs under
xdist takes the ``dist`` fixture below for its ``-n 2`` leg.

An in-process run drops every module it imported first when it ends, so the plugin's
dependencies are imported here once per test session: no run pays seconds of imports again,
and no run builds a second copy of a class that an earlier run's objects still use.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import pkgutil

import pytest

import pytest_karenina
from pytest_karenina.pipeline.run import run_verification
from tests.e2e.cases import checkpoint
from tests.e2e.scripting import make_config
from tests.plugin.plugin_helpers import MULTI, scripted, use_key
from tests.support.openai_server import OpenAIServer

PRELOADED = (
    "hypothesis",  # its pytest plugin imports it at the end of every run
    "langchain.chat_models",
    "langchain_openai",
    "openai",
    "anthropic",  # claude_tool (the claude extra)
    "httpx",
    "xdist.scheduler",
    "pytest_html",
    "pytest_html.extras",
    "cloudpickle",
)
for _name in PRELOADED:
    with contextlib.suppress(ImportError):  # extras a plain `pip install -e .` lacks
        importlib.import_module(_name)
for _module in pkgutil.walk_packages(pytest_karenina.__path__, "pytest_karenina."):
    importlib.import_module(_module.name)
# Every in-process run ends with full garbage collections (pytest looks for unraisable
# exceptions); the modules above live until the end, so keep them out of every collection.
gc.freeze()


@pytest.fixture(scope="session", autouse=True)
def first_calls_imported() -> None:
    """One benchmark run over HTTP before any run of a test: what an LLM call imports on
    first use (the HTTP stack, parts of the SDK) is then loaded for good. Imported inside a
    run, it would be dropped at the run's end, maybe while a pipeline thread still imports
    it (an ImportError naming a module of the HTTP stack)."""
    with pytest.MonkeyPatch.context() as monkeypatch, OpenAIServer() as server:
        use_key(monkeypatch)
        scripted(server)
        results = run_verification(checkpoint(MULTI), make_config(server)).results
    assert results and all(r.metadata.completed_without_errors for r in results)


@pytest.fixture(autouse=True)
def endpoint_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """``OPENAI_API_KEY`` for the openai_endpoint models of the runs (inherited by subprocesses)."""
    use_key(monkeypatch)


@pytest.fixture(
    params=[
        pytest.param([], id="one-process"),
        pytest.param(["-n", "2"], id="xdist", marks=pytest.mark.xdist),
    ]
)
def dist(request: pytest.FixtureRequest) -> list[str]:
    """Arguments for a run in one process, then for the same run on two xdist workers.

    A test that takes this fixture runs twice; the xdist leg carries the ``xdist`` marker,
    so ``-m "not xdist and not subprocess"`` keeps only the in-process leg.
    """
    return list(request.param)
