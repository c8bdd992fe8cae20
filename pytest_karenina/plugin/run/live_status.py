"""A status line for long runs on a terminal: done, in flight, queued, pass rate, ETA.

Pipelines run ahead of pytest's loop, so its progress (items reported) says little about how
far the run is. After an item has reported, :class:`LiveStatus` writes a line like
``karenina: 120 done, 32 in flight, 348 queued; pass rate 81.7% of 118; ETA 0:00:42`` at
most every :data:`INTERVAL` seconds: only on a terminal (a TTY) and not under ``-q``, so CI
logs keep pytest's own progress alone. One process only (under xdist the workers have no
terminal).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

INTERVAL = 10.0
"""Seconds between two status lines."""


@dataclass
class PipelineCounts:
    """How many pipelines are queued, running and done (updated by the worker threads)."""

    queued: int = 0
    running: int = 0
    done: int = 0
    note: Callable[[], str] | None = None
    """More to say in the status line (batch mode: each wave's batch and its counts)."""

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def queue(self) -> None:
        with self._lock:
            self.queued += 1

    def start(self) -> None:
        with self._lock:
            self.queued, self.running = self.queued - 1, self.running + 1

    def finish(self) -> None:
        with self._lock:
            self.running, self.done = self.running - 1, self.done + 1


def status_line(counts: PipelineCounts, passed: int, reported: int, elapsed: float) -> str:
    rate = f"; pass rate {passed / reported:.1%} of {reported}" if reported else ""
    remaining = counts.queued + counts.running
    eta = ""
    if counts.done and remaining:
        seconds = round(remaining * elapsed / counts.done)
        eta = f"; ETA {seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    note = counts.note() if counts.note is not None else ""
    return (
        f"karenina: {counts.done} done, {counts.running} in flight, {counts.queued} queued"
        f"{rate}{eta}{'; ' + note if note else ''}"
    )


class LiveStatus:
    """Writes :func:`status_line` when one is due; ``tally`` gives (passed, reported).

    Build it outside an item (pytest's output capture is off then) to tell a terminal."""

    def __init__(
        self,
        config: pytest.Config,
        counts: PipelineCounts,
        tally: Callable[[], tuple[int, int]],
        clock: Callable[[], float] = time.monotonic,
        terminal: bool | None = None,
    ) -> None:
        self.counts, self.tally, self._clock = counts, tally, clock
        reporter: Any = config.pluginmanager.get_plugin("terminalreporter")
        on_terminal = sys.stdout.isatty() if terminal is None else terminal
        wanted = config.get_verbosity() >= 0 and on_terminal
        self._reporter = reporter if wanted else None
        self._started = clock()
        self._last = self._started

    def tick(self) -> None:
        """Called after an item reported (pytest's capture is off); writes a line when due."""
        now = self._clock()
        if self._reporter is None or now - self._last < INTERVAL:
            return
        self._last = now
        passed, reported = self.tally()
        self._reporter.write_line(status_line(self.counts, passed, reported, now - self._started))
