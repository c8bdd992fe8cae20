"""Agent middleware that gives every model call of an agent run the transport of chat calls.

The model's concurrency cap and request pacing are the ones its chat calls share (same
limiter keys), and transient failures are retried with the model's retry policy, backing
off between attempts, each retry reported like a chat call's (``metadata.retry_counts``).
A call that fails for good ends the run with a :class:`~...transport.TransportError`.

Secrets (the model's configured ones and secret-named environment values) are scrubbed from
each model reply before the agent acts on it and from each tool result before the model reads
it (:mod:`.scrub`), as chat replies are scrubbed.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware

from pytest_karenina.config.model import ErrorPatternConfig, RetryPolicy
from pytest_karenina.llm.agents.scrub import scrubbed_output
from pytest_karenina.llm.errors import (
    Scrubber,
    classify_error,
    is_retryable,
    redact,
    retry_after_seconds,
)
from pytest_karenina.llm.limits import ConcurrencyLimiter, RateLimiter
from pytest_karenina.llm.transport import RetryEvent, TransportError, backoff_seconds


class TransportMiddleware(AgentMiddleware):
    """Concurrency cap, pacing, retries and secret scrubbing around each model call of an
    agent, and secret scrubbing of each tool result."""

    def __init__(
        self,
        *,
        key: str,
        policy: RetryPolicy | None = None,
        limiter: ConcurrencyLimiter | None = None,
        rate_limiter: RateLimiter | None = None,
        secrets: tuple[str, ...] = (),
        error_patterns: tuple[ErrorPatternConfig, ...] = (),
        on_retry: Callable[[RetryEvent], None] | None = None,
        call_kind: str = "answer_generation",
    ) -> None:
        super().__init__()
        self.key = key
        self.policy = policy or RetryPolicy()
        self.limiter = limiter
        self.rate_limiter = rate_limiter
        self.secrets = secrets
        self.scrubber = Scrubber(secrets)
        self.error_patterns = error_patterns
        self.on_retry = on_retry
        self.call_kind = call_kind
        self._rng = random.Random()

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        used: dict[str, int] = {}
        attempt = 0
        while True:
            attempt += 1
            try:
                return scrubbed_output(await self._once(request, handler), self.scrubber)
            except Exception as exc:
                error_class = classify_error(exc, self.error_patterns)
                message = redact(str(exc) or type(exc).__name__, self.scrubber.values)
                wait = self._wait(exc, error_class, used) if is_retryable(error_class) else None
                if is_retryable(error_class):
                    if wait is not None:
                        used[error_class] = used.get(error_class, 0) + 1
                    if self.on_retry is not None:
                        budget = self.policy.budget(error_class).max_attempts
                        self.on_retry(RetryEvent(
                            self.call_kind, None, error_class, used.get(error_class, 0),
                            budget, attempt, wait, message,
                        ))  # fmt: skip
                if wait is None:
                    raise TransportError(
                        self.call_kind,
                        f"{error_class} error in an agent model call (attempt {attempt}); "
                        f"{type(exc).__name__}: {message}",
                        error_class=error_class, attempts=attempt, retry_counts={},
                    ) from None  # fmt: skip
                await asyncio.sleep(wait)

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        return scrubbed_output(await handler(request), self.scrubber)

    async def _once(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        if self.rate_limiter is not None and self.rate_limiter.requests_per_minute is not None:
            await asyncio.to_thread(self.rate_limiter.wait_turn, self.key)  # unpaced: no thread
        semaphore = self.limiter.semaphore(self.key) if self.limiter is not None else None
        if semaphore is None:
            return await handler(request)
        await asyncio.to_thread(semaphore.acquire)
        try:
            return await handler(request)
        finally:
            semaphore.release()

    def _wait(self, exc: Exception, error_class: str, used: dict[str, int]) -> float | None:
        config = self.policy.budget(error_class)  # type: ignore[arg-type]
        retries = used.get(error_class, 0)
        if retries >= config.max_attempts:
            return None
        wait = backoff_seconds(config, retries + 1, self._rng)
        hinted = retry_after_seconds(exc)
        if hinted is not None and error_class in ("rate_limit", "server_error"):
            wait = min(hinted, config.backoff_max)
        return wait
