"""pytest fixtures for the scripted OpenAI-compatible server (registered in tests/conftest.py).

* ``openai_server``: a fresh :class:`OpenAIServer` per test.
* ``openai_server_session``: one server per session (per xdist worker); rules and the request
  log are shared, so call ``.reset()`` at the start of a test that uses it.

Both fail the test at teardown when the server recorded an unexpected handler error.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .openai_server import OpenAIServer


def _check(server: OpenAIServer) -> None:
    if server.errors:
        pytest.fail("openai_server handler errors:\n" + "\n".join(server.errors), pytrace=False)


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as server:
        yield server
    _check(server)


@pytest.fixture(scope="session")
def openai_server_session() -> Iterator[OpenAIServer]:
    with OpenAIServer() as server:
        yield server
    _check(server)
