"""One asyncio event loop in a daemon thread, for the async agent runtimes.

MCP tools from ``langchain-mcp-adapters`` are async only, so agents run as coroutines. The
pipeline's worker threads are synchronous: each hands its run to this loop and waits for the
result, and the loop interleaves every run in flight (one loop for all, not one per call).
Model calls that LangChain runs in an executor get a pool as large as the run's concurrency.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
EXECUTOR_THREADS = 64


class AgentEventLoop:
    """Runs coroutines on a private loop thread, started on first use."""

    def __init__(self, name: str = "karenina-agents") -> None:
        self._name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                loop.set_default_executor(
                    concurrent.futures.ThreadPoolExecutor(
                        EXECUTOR_THREADS, thread_name_prefix=f"{self._name}-call"
                    )
                )
                started = threading.Event()

                def serve() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(started.set)
                    loop.run_forever()

                threading.Thread(target=serve, name=self._name, daemon=True).start()
                started.wait()
                self._loop = loop
            return self._loop

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the loop and return its result (or raise its exception)."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self._running_loop())
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise

    def close(self) -> None:
        """Stop the loop thread (a later :meth:`run` starts a new one)."""
        with self._lock:
            loop, self._loop = self._loop, None
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(loop.stop)


SHARED_LOOP = AgentEventLoop()
"""The process's agent loop: every agent adapter of a run drives its runs here."""
