"""Plugin tests: every run talks to the scripted server with the e2e canary key.

Runs are in-process ``pytester.runpytest`` by default; a subprocess only where a real
process is the point (signals, a fresh interpreter's imports). An in-process run drops every
module it imported first when it ends, so the plugin's dependencies are imported here once
per test session: no run pays seconds of imports again, and no run builds a second copy of
a class that an earlier run's objects still use.
"""

from __future__ import annotations

import gc
import importlib
import pkgutil

import pytest

import pytest_karenina
from tests.plugin.plugin_helpers import use_key

PRELOADED = (
    "hypothesis",  # its pytest plugin imports it at the end of every run
    "langchain.chat_models",
    "langchain_openai",
    "openai",
    "httpx",
    "xdist.scheduler",
    "pytest_html",
    "pytest_html.extras",
    "cloudpickle",
)
for _name in PRELOADED:
    importlib.import_module(_name)
for _module in pkgutil.walk_packages(pytest_karenina.__path__, "pytest_karenina."):
    importlib.import_module(_module.name)
# Every in-process run ends with full garbage collections (pytest looks for unraisable
# exceptions); the modules above live until the end, so keep them out of every collection.
gc.freeze()


@pytest.fixture(autouse=True)
def endpoint_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """``OPENAI_API_KEY`` for the openai_endpoint models of the runs (inherited by subprocesses)."""
    use_key(monkeypatch)
