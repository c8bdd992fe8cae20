"""Transport around a :class:`~.ports.RawModel`: timeout, bounded retries, concurrency cap.

Transient classes (``connection``, ``timeout``, ``rate_limit``, ``server_error``)
are retried with exponential back-off and jitter within per-category budgets and
a total time budget; ``auth``/``client_error``/``permanent`` fail at once. Layer
as ``ReplayingModel(RetryingModel(adapter))`` so replay hits never take a slot.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, replace
from typing import Any

from pytest_karenina.config.model import CategoryRetryConfig, ErrorPatternConfig, RetryPolicy
from pytest_karenina.llm.errors import (
    RETRYABLE_CLASSES,
    ErrorClass,
    RetryCategory,
    Scrubber,
    classify_error,
    env_secrets,
    is_retryable,
    redact,
    retry_after_seconds,
)
from pytest_karenina.llm.limits import ConcurrencyLimiter, RateLimiter
from pytest_karenina.llm.ports import LLMCallError, ModelReply, ModelRequest, RawModel


@dataclass(frozen=True)
class RetryEvent:
    """One failed attempt of a retryable class, reported to ``on_retry``.

    ``used``: retries of ``error_class`` made so far in this call, counting the one
    about to happen; ``budget``: the category's ``max_attempts`` (retries allowed).
    ``wait_seconds`` is ``None`` when giving up (then ``used`` is not incremented).
    """

    call_kind: str
    question_id: str | None
    error_class: ErrorClass
    used: int
    budget: int
    attempt: int
    wait_seconds: float | None
    message: str

    @property
    def will_retry(self) -> bool:
        return self.wait_seconds is not None


class TransportError(LLMCallError):
    """A call that failed for good: ``error_class``, ``attempts`` made, ``retry_counts``, and
    ``budget_spent`` when it ended because the whole call's time budget ran out."""

    def __init__(
        self, call_kind: str, reason: str, *, error_class: ErrorClass, attempts: int,
        retry_counts: dict[str, dict[str, int]], budget_spent: bool = False,
    ) -> None:  # fmt: skip
        super().__init__(call_kind, reason)
        self.error_class = error_class
        self.attempts = attempts
        self.retry_counts = retry_counts
        self.budget_spent = budget_spent


TIME_BUDGET = "time budget"
"""How a give-up for lack of time (``max_total_seconds``) starts its reason."""


def backoff_seconds(config: CategoryRetryConfig, retry: int, rng: random.Random) -> float:
    """Seconds to wait before the ``retry``-th retry (1-based) of a category.

    Exponential back-off with jitter: ``uniform(backoff_min, min(backoff_max,
    backoff_min * backoff_multiplier**retry))``, so never below ``backoff_min``
    (a ``backoff_min`` of 0 means no waiting) nor above ``backoff_max``.
    """
    low = min(config.backoff_min, config.backoff_max)
    ceiling = min(config.backoff_max, config.backoff_min * config.backoff_multiplier**retry)
    return rng.uniform(low, max(low, ceiling))


class RetryingModel:
    """A :class:`~.ports.RawModel` that adds a timeout, retries and a concurrency cap.

    ``policy``: per-category budgets (``max_attempts`` = retries after the first call)
    and back-off; ``None`` = Karenina's defaults. ``timeout``: wall-clock cap per
    attempt in seconds (``None`` = none), grown on timeout retries by the policy's
    ``timeout_escalation``; an attempt over it fails as ``timeout`` (the abandoned
    request keeps its concurrency slot until it returns). ``max_total_seconds``
    bounds a whole call, waits included. ``limiter_key`` defaults to adapter,
    provider, model and base URL of the inner identity. ``secrets`` (and
    secret-looking environment values) are redacted from error messages.
    ``error_patterns`` (the run's ``custom_error_patterns``) classify errors first. ``on_retry``
    gets a :class:`RetryEvent` per failed retryable attempt, in the calling thread.
    """

    def __init__(
        self,
        inner: RawModel,
        policy: RetryPolicy | None = None,
        *,
        timeout: float | None = None,
        max_total_seconds: float | None = 600.0,
        limiter: ConcurrencyLimiter | None = None,
        rate_limiter: RateLimiter | None = None,
        limiter_key: str | None = None,
        secrets: Iterable[str] = (),
        error_patterns: Sequence[ErrorPatternConfig] = (),
        on_retry: Callable[[RetryEvent], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
    ) -> None:
        if timeout is not None and timeout <= 0:
            raise ValueError("timeout must be > 0 or None")
        self.inner = inner
        self.policy = policy if policy is not None else RetryPolicy()
        self.timeout = timeout
        self.max_total_seconds = max_total_seconds
        self.limiter = limiter
        self.rate_limiter = rate_limiter
        self.limiter_key = limiter_key or model_limiter_key(inner.replay_identity)
        self.secrets = tuple(secrets)
        self.error_patterns = tuple(error_patterns)
        # Read once: replies are scrubbed on every call (errors, rare, read the environment anew).
        self._scrubber = Scrubber(self.secrets)
        self.on_retry = on_retry
        self._sleep = sleep
        self._clock = clock
        self._rng = rng if rng is not None else random.Random()

    @property
    def replay_identity(self) -> dict[str, Any]:
        """The inner model's identity: retrying does not change what a model says."""
        return self.inner.replay_identity

    def retry_counts(self, used: Mapping[str, int]) -> dict[str, dict[str, int]]:
        """``{category: {"used": n, "budget": max_attempts}}`` for the four retryable classes."""
        return {
            name: {"used": used.get(name, 0), "budget": self.policy.budget(name).max_attempts}
            for name in RETRYABLE_CLASSES
        }

    def invoke(self, request: ModelRequest) -> ModelReply:
        """Send ``request``, retrying transient failures; raise :class:`TransportError` at the end.

        An inner model's ``prepare()`` (building its client, importing its SDK) runs before
        each attempt, outside the attempt's timeout.

        An :class:`~.ports.LLMCallError` from the inner model is already final and
        propagates unchanged; ``BaseException``s that are not ``Exception`` are not caught.
        The provider exception is not chained (it may quote credentials).
        """
        start = self._clock()
        used: dict[str, int] = {}
        attempt = 0
        prepare = getattr(self.inner, "prepare", None)
        while True:
            attempt += 1
            try:
                if prepare is not None:  # building the client is not part of any attempt
                    prepare()
                if self.rate_limiter is not None:
                    self.rate_limiter.wait_turn(self.limiter_key)
                timeout = self._bounded(self.attempt_timeout(used.get("timeout", 0)), start)
                return self._scrubbed(self._attempt(request, timeout))
            except LLMCallError:
                raise
            except Exception as exc:
                error_class = classify_error(exc, self.error_patterns)
                message = redact(str(exc) or type(exc).__name__, (*self.secrets, *env_secrets()))
                out_of_time = False
                if is_retryable(error_class):
                    category = error_class
                    wait, why = self._next_wait(exc, category, used.get(category, 0), start)
                    out_of_time = wait is None and why.startswith(TIME_BUDGET)
                    if wait is not None:
                        used[category] = used.get(category, 0) + 1
                    if self.on_retry is not None:
                        self.on_retry(RetryEvent(
                            request.call_kind, request.question_id, error_class,
                            used.get(category, 0), self.policy.budget(category).max_attempts,
                            attempt, wait, message,
                        ))  # fmt: skip
                    if wait is not None:
                        self._sleep(wait)
                        continue
                    reason = f"{error_class} error, gave up after {attempt} attempts: {why}"
                else:
                    reason = f"{error_class} error, not retried (attempt {attempt})"
                raise TransportError(
                    request.call_kind, f"{reason}; {type(exc).__name__}: {message}",
                    error_class=error_class, attempts=attempt, retry_counts=self.retry_counts(used),
                    budget_spent=out_of_time,
                ) from None  # fmt: skip

    def _scrubbed(self, reply: ModelReply) -> ModelReply:
        """``reply`` without any configured secret or secret-named environment value (as
        the environment was when this model was built) in its text: a model that echoes a
        key must not put it in the export, JUnit, the terminal or the report. Exact values
        only (no patterns): the answer is otherwise left as it is."""
        text = self._scrubber.text(reply.text)
        return reply if text is reply.text else replace(reply, text=text)

    def _next_wait(
        self, exc: Exception, category: RetryCategory, retries: int, start: float
    ) -> tuple[float | None, str]:
        """Seconds to wait before the next attempt, or ``None`` and why we give up."""
        config = self.policy.budget(category)
        if retries >= config.max_attempts:
            return None, f"{category} retry budget of {config.max_attempts} exhausted"
        wait = backoff_seconds(config, retries + 1, self._rng)
        hinted = retry_after_seconds(exc)
        if hinted is not None and category in ("rate_limit", "server_error"):
            wait = min(hinted, config.backoff_max)
        elapsed = self._clock() - start
        budget = self.max_total_seconds
        if budget is not None and elapsed + wait > budget:
            spent = f"{elapsed:.1f}s spent, next wait {wait:.1f}s"
            return None, f"{TIME_BUDGET} of {budget:g}s exhausted ({spent})"
        return wait, ""

    def _bounded(self, timeout: float | None, start: float) -> float | None:
        """``timeout`` cut to what is left of the call's ``max_total_seconds``."""
        if self.max_total_seconds is None:
            return timeout
        left = self.max_total_seconds - (self._clock() - start)
        if left <= 0:
            raise TimeoutError(f"the call's {self.max_total_seconds:g}s time budget is spent")
        # Without a per-attempt timeout no watchdog runs; the budget is checked between attempts.
        return None if timeout is None else min(timeout, left)

    def attempt_timeout(self, timeout_retries: int) -> float | None:
        """The attempt timeout after ``timeout_retries`` timeouts (policy escalation)."""
        base, escalation = self.timeout, self.policy.timeout_escalation
        if base is None or escalation is None or timeout_retries == 0:
            return base
        cap = escalation.max_timeout
        if escalation.strategy == "additive":
            grown = base + escalation.increment * timeout_retries
        elif escalation.strategy == "multiplicative":
            grown = base * escalation.multiplier**timeout_retries
        else:  # linear: from base to max_timeout over the timeout retry budget
            assert cap is not None
            steps = max(1, self.policy.timeout.max_attempts)
            grown = base + (cap - base) * min(1.0, timeout_retries / steps)
        return grown if cap is None else min(grown, max(cap, base))

    def _attempt(self, request: ModelRequest, timeout: float | None) -> ModelReply:
        """One call under the concurrency cap; the timeout is sent with the request when
        the adapter enforces it (``enforces_timeout``), else watched from a helper thread."""
        semaphore = self.limiter.semaphore(self.limiter_key) if self.limiter else None
        if timeout is not None and getattr(self.inner, "enforces_timeout", False):
            request, timeout = request.with_timeout(timeout), None
        if timeout is None:
            with semaphore or nullcontext():
                return self.inner.invoke(request)
        outcome: list[ModelReply | BaseException] = []
        done = threading.Event()

        def run() -> None:
            try:
                outcome.append(self.inner.invoke(request))
            except BaseException as exc:  # handed over to the waiting thread
                outcome.append(exc)
            finally:
                if semaphore is not None:  # held until the request really ends
                    semaphore.release()
                done.set()

        if semaphore is not None:
            semaphore.acquire()
        try:
            threading.Thread(target=run, name="karenina-llm-call", daemon=True).start()
        except BaseException:
            if semaphore is not None:
                semaphore.release()
            raise
        if not done.wait(timeout):
            raise TimeoutError(f"no reply within the {timeout:g}s request timeout")
        if isinstance(outcome[0], BaseException):
            raise outcome[0]
        return outcome[0]


def model_limiter_key(identity: Mapping[str, Any]) -> str:
    """The key a model's concurrency cap and pacing are shared under (adapter, provider,
    model, base URL of its replay identity)."""
    parts = (identity.get(name) for name in ("adapter", "provider", "model", "base_url"))
    return ":".join("" if part is None else str(part) for part in parts)
