"""An answering model's MCP tools, through ``langchain-mcp-adapters``.

Each server of ``mcp_urls_dict`` is reached over streamable HTTP, or over SSE when its URL
path ends in ``/sse``, with ``mcp_http_timeout`` and ``mcp_sse_read_timeout``. The tool list
is read once per model, over one session per server kept open for the process.
``mcp_tool_filter`` keeps the named tools only, and ``mcp_tool_description_overrides``
replaces descriptions (the model sees the override; the server is unchanged).
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pytest_karenina.config.secrets import masked_url, url_secrets
from pytest_karenina.llm.errors import redact

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from pytest_karenina.config.model import ModelConfig

TOOL_LIST_TIMEOUT = 30.0
"""Seconds to open a server's session (Karenina's bound too)."""
logger = logging.getLogger(__name__)


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
    """The tools of one model's MCP servers, over one session per server that stays open
    for the process (on the agent loop): a tool call then costs one request, not a session's
    handshake. The sessions open on first use."""

    def __init__(self, model: ModelConfig) -> None:
        self.model = model
        self._tools: asyncio.Future[list[BaseTool]] | None = None
        self._holder: asyncio.Task[None] | None = None
        self._closed: asyncio.Event | None = None

    async def get(self) -> list[BaseTool]:
        if self._tools is None:
            loop = asyncio.get_running_loop()
            self._tools = loop.create_future()
            self._closed = asyncio.Event()
            self._holder = loop.create_task(self._hold(self._tools, self._closed))
        try:
            return await asyncio.shield(self._tools)
        except MCPToolsError:
            self._tools = None  # the next run tries again
            raise

    async def _hold(self, ready: asyncio.Future[list[BaseTool]], closed: asyncio.Event) -> None:
        """Open every server's session, hand out the tools, keep the sessions until closed.

        anyio needs a session entered and left in one task: this one. The time limit is
        ``asyncio.timeout``, never ``asyncio.wait_for``, which on Python 3.11 enters the
        session in a task of its own, so leaving it fails (Karenina's MCP runs crash so).
        """
        from langchain_mcp_adapters.client import MultiServerMCPClient
        from langchain_mcp_adapters.tools import load_mcp_tools

        client = MultiServerMCPClient(connections(self.model))  # type: ignore[arg-type]
        try:
            async with AsyncExitStack() as stack:
                tools: list[BaseTool] = []
                for name in self.model.mcp_urls_dict or {}:
                    async with asyncio.timeout(TOOL_LIST_TIMEOUT):
                        session = await stack.enter_async_context(client.session(name))
                    tools += await load_mcp_tools(session, server_name=name)
                ready.set_result(self._shaped(tools))
                await closed.wait()
        except Exception as exc:
            if not ready.done():
                ready.set_exception(self._error(exc))
            else:  # the run is over; say so rather than leave sessions half closed unnoticed
                logger.warning(
                    "closing the MCP sessions of model %r failed: %s: %s",
                    self.model.id, type(exc).__name__, redact(_innermost(exc)),
                )  # fmt: skip
        finally:
            if self._tools is ready:  # sessions gone: the next run opens new ones
                self._tools = None

    def _error(self, exc: BaseException) -> MCPToolsError:
        urls = self.model.mcp_urls_dict or {}
        servers = ", ".join(f"{n} ({masked_url(u, '***')})" for n, u in urls.items())
        secrets = [s for u in urls.values() for s in url_secrets(u)]
        return MCPToolsError(
            f"cannot list the tools of MCP server(s) {servers}: "
            f"{type(exc).__name__}: {redact(_innermost(exc), secrets)}"
        )

    def _shaped(self, tools: list[BaseTool]) -> list[BaseTool]:
        wanted = self.model.mcp_tool_filter
        if wanted is not None:
            tools = [tool for tool in tools if tool.name in set(wanted)]
        overrides = self.model.mcp_tool_description_overrides or {}
        for tool in tools:
            if tool.name in overrides:
                tool.description = overrides[tool.name]
        return tools

    async def aclose(self) -> None:
        """End the sessions (on the agent loop); a later :meth:`get` opens new ones."""
        holder, closed = self._holder, self._closed
        self._tools = self._holder = self._closed = None
        if closed is not None:
            closed.set()
        if holder is not None:
            await holder


def _innermost(exc: BaseException) -> str:
    """The message of the first leaf of an exception group (anyio wraps transport errors)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return str(exc) or type(exc).__name__
