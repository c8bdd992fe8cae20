"""An answering model's MCP tools, through ``langchain-mcp-adapters``.

Each server of ``mcp_urls_dict`` is reached over streamable HTTP, or over SSE when its URL
path ends in ``/sse``, with ``mcp_http_timeout`` and ``mcp_sse_read_timeout``. The tool list
is read once per model and kept; each tool call opens its own session, as the adapters do.
``mcp_tool_filter`` keeps the named tools only, and ``mcp_tool_description_overrides``
replaces descriptions (the model sees the override; the server is unchanged).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pytest_karenina.llm.errors import redact

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from pytest_karenina.config.model import ModelConfig

TOOL_LIST_TIMEOUT = 30.0
"""Seconds to list a server's tools (Karenina's bound too)."""


class MCPToolsError(ConnectionError):
    """The MCP servers could not be reached or listed (retried like a connection error)."""


def connections(model: ModelConfig) -> dict[str, dict[str, Any]]:
    """The ``MultiServerMCPClient`` connection of each server of ``model``."""
    found: dict[str, dict[str, Any]] = {}
    for name, url in (model.mcp_urls_dict or {}).items():
        transport = "sse" if urlsplit(url).path.rstrip("/").endswith("/sse") else "streamable_http"
        connection: dict[str, Any] = {"transport": transport, "url": url}
        if model.mcp_http_timeout is not None:
            connection["timeout"] = model.mcp_http_timeout
        if model.mcp_sse_read_timeout is not None:
            connection["sse_read_timeout"] = model.mcp_sse_read_timeout
        found[name] = connection
    return found


class MCPTools:
    """The tools of one model's MCP servers, listed on first use (on the agent loop)."""

    def __init__(self, model: ModelConfig) -> None:
        self.model = model
        self._tools: list[BaseTool] | None = None
        self._lock = asyncio.Lock()

    async def get(self) -> list[BaseTool]:
        async with self._lock:
            if self._tools is None:
                self._tools = await self._load()
            return self._tools

    async def _load(self) -> list[BaseTool]:
        from langchain_mcp_adapters.client import MultiServerMCPClient

        client = MultiServerMCPClient(connections(self.model))  # type: ignore[arg-type]
        try:
            tools = await asyncio.wait_for(client.get_tools(), TOOL_LIST_TIMEOUT)
        except Exception as exc:
            servers = ", ".join(f"{n} ({u})" for n, u in (self.model.mcp_urls_dict or {}).items())
            raise MCPToolsError(
                f"cannot list the tools of MCP server(s) {servers}: "
                f"{type(exc).__name__}: {redact(_innermost(exc))}"
            ) from None
        wanted = self.model.mcp_tool_filter
        if wanted is not None:
            tools = [tool for tool in tools if tool.name in set(wanted)]
        overrides = self.model.mcp_tool_description_overrides or {}
        for tool in tools:
            if tool.name in overrides:
                tool.description = overrides[tool.name]
        return tools


def _innermost(exc: BaseException) -> str:
    """The message of the first leaf of an exception group (anyio wraps transport errors)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return str(exc) or type(exc).__name__
