"""Limits on the requests a process sends to one model: how many at once, how many a minute.

Both are process-wide on purpose: every RetryingModel built for the same model (one per
question, per role, per thread) must share one budget, just as Karenina's
``max_concurrent_requests`` caps the whole process. Under pytest-xdist the plugin gives each
worker its share of a model's limits, so ``-n 4`` does not multiply a provider's load by 4.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext

# Guarded by _REGISTRY_LOCK.
_REGISTRY_LOCK = threading.Lock()
_REGISTRY: dict[tuple[str, int], threading.BoundedSemaphore] = {}


class ConcurrencyLimiter:
    """Caps in-flight requests per model key at ``max_concurrent_requests`` (None = no cap).

    Semaphores live in a process-wide registry keyed by ``(key, limit)``, so all
    limiters with the same limit share the cap of a key. Thread-safe.
    """

    def __init__(self, max_concurrent_requests: int | None) -> None:
        if max_concurrent_requests is not None and max_concurrent_requests < 1:
            raise ValueError("max_concurrent_requests must be >= 1 or None")
        self.max_concurrent_requests = max_concurrent_requests

    def semaphore(self, key: str) -> threading.BoundedSemaphore | None:
        """The shared semaphore of ``key`` (``None`` when unlimited)."""
        limit = self.max_concurrent_requests
        if limit is None:
            return None
        with _REGISTRY_LOCK:
            semaphore = _REGISTRY.get((key, limit))
            if semaphore is None:
                semaphore = _REGISTRY[key, limit] = threading.BoundedSemaphore(limit)
            return semaphore

    @contextmanager
    def acquire(self, key: str) -> Iterator[None]:
        """Hold one of ``key``'s slots for the duration of the ``with`` block (blocks if full)."""
        with self.semaphore(key) or nullcontext():
            yield


class _Pace:
    """The next start time a key may use; reserving a start moves it on by one interval."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.next_start = 0.0


_PACES: dict[tuple[str, float], _Pace] = {}


class RateLimiter:
    """At most ``requests_per_minute`` request starts per model key, evenly spaced.

    Starts are ``60 / requests_per_minute`` seconds apart (fractional rates work, which a
    worker's share of a limit often is); callers sleep until their reserved start. Spacing
    rather than a burst window keeps a fleet of threads from hitting the provider together.
    Process-wide per ``(key, rate)``, like :class:`ConcurrencyLimiter`.
    """

    def __init__(
        self,
        requests_per_minute: float | None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if requests_per_minute is not None and requests_per_minute <= 0:
            raise ValueError("requests_per_minute must be > 0 or None")
        self.requests_per_minute = requests_per_minute
        self._clock = clock
        self._sleep = sleep

    def wait_turn(self, key: str) -> float:
        """Block until ``key`` may start a request; returns the seconds waited."""
        rate = self.requests_per_minute
        if rate is None:
            return 0.0
        with _REGISTRY_LOCK:
            pace = _PACES.setdefault((key, rate), _Pace())
        with pace.lock:
            now = self._clock()
            start = max(now, pace.next_start)
            pace.next_start = start + 60.0 / rate
        wait = start - now
        if wait > 0:
            self._sleep(wait)
        return wait
