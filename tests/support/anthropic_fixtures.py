"""pytest fixture for the scripted Anthropic Messages API server (registered in tests/conftest.py).

``anthropic_server``: a fresh :class:`AnthropicServer` per test; the test fails at teardown
when the server recorded an unexpected handler error.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .anthropic_server import AnthropicServer


@pytest.fixture
def anthropic_server() -> Iterator[AnthropicServer]:
    with AnthropicServer() as server:
        yield server
    if server.errors:
        pytest.fail("anthropic_server handler errors:\n" + "\n".join(server.errors), pytrace=False)
