"""One MCP server's session, held open by a task of its own, with bounded open and close.

anyio needs a session entered and left in one task: :class:`HeldSession` runs one task per
session that enters it, waits until told to stop, and leaves it. The time limit on entering is
``asyncio.timeout``, never ``asyncio.wait_for``, which on Python 3.11 enters the session in a
task of its own, so leaving it fails (Karenina's MCP runs crash so).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp.types import CallToolResult

OPEN_TIMEOUT = 30.0
"""Seconds to open a server's session (Karenina's bound too)."""
CLOSE_TIMEOUT = 5.0
"""Seconds a session gets to close (ending it at the server, with a stateful server, is a
request the server may never answer); then its task is cancelled, and given as long again."""
CANCEL_REASON = "the agent's time limit was reached"
logger = logging.getLogger(__name__)


class SessionLost(ConnectionError):
    """The session cannot carry the call: it ended, or the server no longer knows it."""


def is_lost(exc: BaseException) -> bool:
    """Whether a tool call's exception says the session is gone (not that the call failed):
    the server answered 404 to the session's id (``Session terminated``), or the session's
    streams are closed."""
    import anyio
    from mcp.shared.exceptions import McpError
    from mcp.types import CONNECTION_CLOSED

    if isinstance(exc, McpError):
        return exc.error.code == CONNECTION_CLOSED or exc.error.message == "Session terminated"
    return isinstance(
        exc, anyio.ClosedResourceError | anyio.BrokenResourceError | anyio.EndOfStream
    )


async def _call_tool(
    session: ClientSession, tool: str, arguments: dict[str, Any], sent: list[Any]
) -> CallToolResult:
    # The SDK numbers requests in order and gives no way to learn a request's id, which a
    # cancellation names: read the next id, then send with no await in between.
    sent.append(getattr(session, "_request_id", None))
    return await session.call_tool(tool, arguments)


class HeldSession:
    """The session of server ``server`` over ``connection`` (a ``langchain-mcp-adapters``
    connection); ``background`` runs work that must not hold up its caller."""

    def __init__(
        self,
        server: str,
        connection: dict[str, Any],
        background: Callable[[Awaitable[None]], None],
    ) -> None:
        self.server = server
        self._connection = connection
        self._background = background
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.session: ClientSession | None = None
        self.ended_by = "the session had ended"

    @property
    def alive(self) -> bool:
        task = self._task
        return task is not None and not task.done() and not self._stop.is_set()

    async def open(self) -> None:
        """Open the session (within :data:`OPEN_TIMEOUT`), or raise why it did not open."""
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        self._task = loop.create_task(self._hold(ready), name=f"mcp-session:{self.server}")
        try:
            await asyncio.shield(ready)
        except asyncio.CancelledError:
            self._background(self.aclose())
            raise

    async def _hold(self, ready: asyncio.Future[None]) -> None:
        from langchain_mcp_adapters.sessions import create_session

        try:
            async with AsyncExitStack() as stack:
                try:
                    async with asyncio.timeout(OPEN_TIMEOUT):
                        session = await stack.enter_async_context(
                            create_session(self._connection)  # type: ignore[arg-type]
                        )
                        await session.initialize()
                except TimeoutError:
                    raise ConnectionError(f"no session within {OPEN_TIMEOUT:g} s") from None
                self.session = session
                ready.set_result(None)
                await self._stop.wait()
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)
            elif self._stop.is_set() and not _closed_stream(exc):
                # Say so rather than leave a session half closed unnoticed. (A reply that
                # arrives as the session closes finds its stream closed: no failure.)
                logger.warning("closing the MCP session of server %r failed: %s",
                               self.server, leaf_reason(exc))  # fmt: skip
            elif self._stop.is_set():
                logger.debug("the MCP session of server %r closed: %s", self.server,
                             leaf_reason(exc))  # fmt: skip
            else:  # the server went away or broke the connection: a later call reconnects
                self.ended_by = leaf_reason(exc)
                logger.debug("the MCP session of server %r ended: %s", self.server, self.ended_by)
        finally:
            self.session = None
            if not ready.done():
                ready.set_exception(ConnectionError("the session was closed as it opened"))

    async def call(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        """Call ``tool`` on this session; :class:`SessionLost` when the session cannot.

        The call ends when the session does (its transport failed), rather than waiting for
        a reply that cannot come. Cancelled (the agent's time limit), it is cancelled at the
        server too, in the background.
        """
        session, holder = self.session, self._task
        if session is None or holder is None or not self.alive:
            raise SessionLost(self.ended_by)
        sent: list[Any] = []
        call = asyncio.ensure_future(_call_tool(session, tool, arguments, sent))
        try:
            await asyncio.wait({call, holder}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            call.cancel()
            if sent and sent[0] is not None:
                self._background(self._cancel_at_server(session, sent[0]))
            raise
        if not call.done():
            call.cancel()
            raise SessionLost(self.ended_by)
        exc = call.exception()
        if exc is not None and is_lost(exc):
            raise SessionLost(leaf_reason(exc)) from exc
        return call.result()

    async def _cancel_at_server(self, session: ClientSession, request_id: Any) -> None:
        from mcp.types import CancelledNotification, CancelledNotificationParams, ClientNotification

        params = CancelledNotificationParams(requestId=request_id, reason=CANCEL_REASON)
        try:
            async with asyncio.timeout(CLOSE_TIMEOUT):
                await session.send_notification(
                    ClientNotification(CancelledNotification(params=params))
                )
        except Exception as exc:  # the server may be stuck or gone: the call is dropped anyway
            logger.debug("cancelling an MCP call at server %r failed: %r", self.server, exc)

    async def aclose(self) -> None:
        """End the session: :data:`CLOSE_TIMEOUT` to close, then its task is cancelled and
        given as long again; a task that still runs is left behind (logged)."""
        task = self._task
        self._stop.set()
        if task is None or task.done():
            return
        done, _ = await asyncio.wait({task}, timeout=CLOSE_TIMEOUT)
        if not done:
            task.cancel()
            done, _ = await asyncio.wait({task}, timeout=CLOSE_TIMEOUT)
        if not done:
            logger.warning(
                "the MCP session of server %r did not close within %g s and was left behind",
                self.server, 2 * CLOSE_TIMEOUT,
            )  # fmt: skip


def _closed_stream(exc: BaseException) -> bool:
    import anyio

    if isinstance(exc, BaseExceptionGroup):
        return all(_closed_stream(inner) for inner in exc.exceptions)
    return isinstance(exc, anyio.ClosedResourceError | anyio.BrokenResourceError)


def leaf_reason(exc: BaseException) -> str:
    """``Type: message`` of the first leaf of an exception group (anyio wraps transport
    errors in groups), or of ``exc`` itself."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
