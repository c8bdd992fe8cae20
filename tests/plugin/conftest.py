"""Plugin tests: every run talks to the scripted server with the e2e canary key."""

from __future__ import annotations

import pytest

from tests.plugin.plugin_helpers import use_key


@pytest.fixture(autouse=True)
def endpoint_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """``OPENAI_API_KEY`` for the openai_endpoint models of the runs (inherited by subprocesses)."""
    use_key(monkeypatch)
