"""pytest fixture for the MCP test server (registered in tests/conftest.py).

``mcp_server``: one :class:`MCPServer` per session (per xdist worker), its tool-call log
cleared before each test, its notes directory empty.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .mcp_server import MCPServer


@pytest.fixture(scope="session")
def mcp_server_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MCPServer]:
    from .mcp_server import running_mcp_server  # the mcp SDK loads only for agent tests

    with running_mcp_server(tmp_path_factory.mktemp("mcp-notes")) as server:
        yield server


@pytest.fixture
def mcp_server(mcp_server_session: MCPServer) -> MCPServer:
    mcp_server_session.reset()
    shutil.rmtree(mcp_server_session.notes_dir)
    mcp_server_session.notes_dir.mkdir()
    return mcp_server_session
