"""A real MCP server for agent tests: the ``mcp`` SDK's FastMCP over streamable HTTP (and
SSE), served by uvicorn on ``127.0.0.1`` from a daemon thread.

Tools:

* ``add(a, b)``: the sum of two integers;
* ``lookup_capital(country)``: the capital of a few countries, an error for others;
* ``broken(reason)``: always fails (the agent sees a failed tool call);
* ``read_note(name)``: the text of ``name`` in :attr:`MCPServer.notes_dir`;
* ``slow(seconds)``: answers after sleeping (for time limits); ``slow cancelled`` is
  recorded when the client cancels it;
* ``stuck(seconds)``: sleeps without yielding, so the whole server answers nothing meanwhile;
* ``big(size)``: a text of ``size`` characters.

``stateless`` (the default) serves every request on its own; a stateful server issues session
ids and forgets them when it stops, as FastMCP's default does.

``calls`` records every tool call as ``(tool, arguments)``.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn
from mcp.server.fastmcp import FastMCP

CAPITALS = {"france": "Paris", "italy": "Rome", "japan": "Tokyo"}


class MCPServer:
    """The server; use :func:`running_mcp_server` (or the ``mcp_server`` fixture)."""

    def __init__(self, notes_dir: Path, *, stateless: bool = True) -> None:
        self.notes_dir = notes_dir
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self.app = FastMCP("karenina-test", stateless_http=stateless, json_response=True,
                           log_level="WARNING")  # fmt: skip
        self._register()
        self.port = 0
        self._server: uvicorn.Server | None = None

    def _record(self, tool: str, **arguments: Any) -> None:
        with self._lock:
            self.calls.append((tool, arguments))

    def _register(self) -> None:
        app = self.app

        @app.tool()
        def add(a: int, b: int) -> int:
            """Add two integers and return the sum."""
            self._record("add", a=a, b=b)
            return a + b

        @app.tool()
        def lookup_capital(country: str) -> str:
            """The capital city of a country."""
            self._record("lookup_capital", country=country)
            found = CAPITALS.get(country.strip().lower())
            if found is None:
                raise ValueError(f"no capital known for {country!r}")
            return found

        @app.tool()
        def broken(reason: str) -> str:
            """A tool that always fails."""
            self._record("broken", reason=reason)
            raise RuntimeError(f"broken tool: {reason}")

        @app.tool()
        def read_note(name: str) -> str:
            """The text of a note by file name."""
            self._record("read_note", name=name)
            return (self.notes_dir / Path(name).name).read_text(encoding="utf-8")

        @app.tool()
        async def slow(seconds: float) -> str:
            """Wait, then answer."""
            self._record("slow", seconds=seconds)
            try:
                await asyncio.sleep(seconds)
            except asyncio.CancelledError:
                self._record("slow cancelled", seconds=seconds)
                raise
            return "done"

        @app.tool()
        def stuck(seconds: float) -> str:
            """Hold the server, then answer."""
            self._record("stuck", seconds=seconds)
            time.sleep(seconds)
            return "done"

        @app.tool()
        def big(size: int) -> str:
            """A long text."""
            self._record("big", size=size)
            return "x" * size

    @property
    def url(self) -> str:
        """The streamable HTTP endpoint."""
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def sse_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/sse"

    def tool_calls(self, tool: str) -> list[dict[str, Any]]:
        with self._lock:
            return [arguments for name, arguments in self.calls if name == tool]

    def reset(self) -> None:
        with self._lock:
            self.calls.clear()

    def start(self, port: int = 0) -> None:
        """Serve on ``port`` (0: a free one)."""
        from starlette.applications import Starlette
        from starlette.routing import Mount

        http = self.app.streamable_http_app()
        sse = self.app.sse_app()
        # One server for both transports: streamable HTTP at /mcp, SSE at /sse.
        combined = Starlette(routes=[*http.routes, Mount("/", app=sse)],
                             lifespan=http.router.lifespan_context)  # fmt: skip
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        self.port = listener.getsockname()[1]
        config = uvicorn.Config(combined, log_level="warning", lifespan="on")
        self._server = uvicorn.Server(config)
        thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [listener]}, daemon=True
        )
        thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the MCP test server did not start")
            time.sleep(0.01)

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True


@contextmanager
def running_mcp_server(notes_dir: Path) -> Iterator[MCPServer]:
    """Start the server (quiet logs), yield it, stop it."""
    for name in ("mcp", "httpx", "uvicorn", "sse_starlette"):
        logging.getLogger(name).setLevel(logging.WARNING)
    server = MCPServer(notes_dir)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def main() -> None:
    """``python -m tests.support.mcp_server NOTES_DIR [--port N] [--stateful]``: serve until
    killed, after printing the port (tests that stop and restart a server process)."""
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("notes_dir", type=Path)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--stateful", action="store_true")
    options = parser.parse_args()
    for name in ("mcp", "httpx", "uvicorn", "sse_starlette"):
        logging.getLogger(name).setLevel(logging.WARNING)
    server = MCPServer(options.notes_dir, stateless=not options.stateful)
    server.start(options.port)
    print(server.port, flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
