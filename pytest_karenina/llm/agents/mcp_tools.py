"""An answering model's MCP tools, through ``langchain-mcp-adapters`` and the ``mcp`` SDK.

Each server of ``mcp_urls_dict`` is reached over streamable HTTP, or over SSE when its URL
path ends in ``/sse``, with ``mcp_http_timeout`` and ``mcp_sse_read_timeout``. The tool list
is read once per model. Tool calls go over one session per server, kept open for the process
and reopened when it ends (a server restarted or gone: see :meth:`MCPTools.call`).
``mcp_tool_filter`` keeps the named tools only, and ``mcp_tool_description_overrides``
replaces descriptions (the model sees the override; the server is unchanged). Tool results
are capped (:mod:`.tool_results`).

Nothing here waits on the server past the run's own limits: a session gets
:data:`OPEN_TIMEOUT` to open and :data:`CLOSE_TIMEOUT` to close, after which its task is
cancelled and, if even that does not end it, left behind; a tool call cancelled by the
agent's time limit is cancelled at the server too (``notifications/cancelled``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pytest_karenina.config.secrets import masked_url, url_secrets
from pytest_karenina.llm.agents.mcp_session import (
    CLOSE_TIMEOUT,
    OPEN_TIMEOUT,
    HeldSession,
    SessionLost,
    leaf_reason,
)
from pytest_karenina.llm.agents.tool_results import capped_result
from pytest_karenina.llm.errors import redact

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool
    from langchain_mcp_adapters.interceptors import MCPToolCallRequest
    from mcp.types import CallToolResult

    from pytest_karenina.config.model import ModelConfig

__all__ = ["CLOSE_TIMEOUT", "OPEN_TIMEOUT", "MCPTools", "MCPToolsError", "connections"]

CALL_ATTEMPTS = 3
"""Sessions a tool call is tried on (the open one, then new ones) before it fails."""
RECONNECT_PAUSE = 0.5
"""Seconds before the first new session, doubled before each later one."""
logger = logging.getLogger(__name__)


class MCPToolsError(ConnectionError):
    """The MCP servers could not be reached or listed (retried like a connection error)."""


def connections(model: ModelConfig) -> dict[str, dict[str, Any]]:
    """The ``langchain-mcp-adapters`` connection of each server of ``model``."""
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
    """The tools of one model's MCP servers (on the agent loop). The sessions open on first
    use and stay open: a tool call then costs one request, not a session's handshake."""

    def __init__(self, model: ModelConfig) -> None:
        self.model = model
        self._connections = connections(model)
        self._tools: asyncio.Task[list[BaseTool]] | None = None
        self._sessions: dict[str, HeldSession] = {}
        self._opening: dict[str, asyncio.Lock] = {}
        self._closing: set[asyncio.Task[None]] = set()

    async def get(self) -> list[BaseTool]:
        """The tools (listed on first use; a failed listing is tried again next time)."""
        if self._tools is None:
            self._tools = asyncio.get_running_loop().create_task(self._load())
        tools = self._tools
        try:
            return await asyncio.shield(tools)
        except MCPToolsError:
            if self._tools is tools:
                self._tools = None
            raise

    async def _load(self) -> list[BaseTool]:
        from langchain_mcp_adapters.tools import load_mcp_tools

        tools: list[BaseTool] = []
        try:
            for name in self._connections:
                held = await self._session(name)
                tools += await load_mcp_tools(
                    held.session, server_name=name, tool_interceptors=[self.call]
                )
        except Exception as exc:
            raise self._error("cannot list the tools of MCP server(s)", exc) from None
        return self._shaped(tools)

    async def _session(self, name: str) -> HeldSession:
        """The open session of server ``name``, opened when there is none (one at a time)."""
        held = self._sessions.get(name)
        if held is not None and held.alive:
            return held
        async with self._opening.setdefault(name, asyncio.Lock()):
            held = self._sessions.get(name)
            if held is None or not held.alive:
                held = HeldSession(name, self._connections[name], self._background)
                await held.open()
                self._sessions[name] = held
            return held

    async def call(
        self,
        request: MCPToolCallRequest,
        handler: Callable[[MCPToolCallRequest], Awaitable[Any]],
    ) -> CallToolResult:
        """Every tool call (a ``langchain-mcp-adapters`` interceptor; ``handler`` would call
        the session the tools were listed on, which may have ended, so it is not used).

        The call goes to the server's open session. When that session is lost (the server
        forgot it after a restart, the connection broke), a new one is opened and the call
        made there, :data:`CALL_ATTEMPTS` times in all with pauses in between; then it fails
        with :class:`MCPToolsError` naming the server, which ends the agent's run.
        """
        server = request.server_name
        failures: list[BaseException] = []
        for attempt in range(CALL_ATTEMPTS):
            if attempt:
                await asyncio.sleep(RECONNECT_PAUSE * 2 ** (attempt - 1))
            try:
                held = await self._session(server)
            except Exception as exc:
                failures.append(exc)
                continue
            try:
                return capped_result(await held.call(request.name, request.args))
            except SessionLost as exc:
                failures.append(exc)
                self._discard(held)
        logger.debug("MCP tool call %r failed on %d sessions", request.name, CALL_ATTEMPTS)
        raise self._error(
            f"the tool call {request.name!r} failed after {CALL_ATTEMPTS} attempts to reach "
            "MCP server",
            failures[-1],
            only=server,
        )

    def _discard(self, held: HeldSession) -> None:
        """Forget a lost session and close it in the background (within its bound)."""
        if self._sessions.get(held.server) is held:
            del self._sessions[held.server]
        self._background(held.aclose())

    def _background(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    def _error(self, what: str, exc: BaseException, *, only: str | None = None) -> MCPToolsError:
        urls = {n: u for n, u in (self.model.mcp_urls_dict or {}).items() if only in (None, n)}
        servers = ", ".join(f"{n} ({masked_url(u, '***')})" for n, u in urls.items())
        secrets = [s for u in urls.values() for s in url_secrets(u)]
        reason = str(exc) if isinstance(exc, SessionLost) else leaf_reason(exc)
        return MCPToolsError(f"{what} {servers}: {redact(reason, secrets)}")

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
        """End the sessions (on the agent loop), each within :data:`CLOSE_TIMEOUT` and its
        cancellation; a later :meth:`get` opens new ones."""
        loading, self._tools = self._tools, None
        if loading is not None and not loading.done():
            loading.cancel()
        held, self._sessions = list(self._sessions.values()), {}
        closing = [*(h.aclose() for h in held), *self._closing]
        await asyncio.gather(*closing, return_exceptions=True)  # each logs its own failure
