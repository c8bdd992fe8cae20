"""A time limit on template code: compiling a template, its ground-truth hook, ``verify()``.

Template code is user code; a loop that never ends must cost its own item, not hang the run.
The code runs in the calling thread while one shared watchdog thread keeps the deadlines of
every running block; past a block's limit the watchdog raises :class:`TemplateTimeout` in
that thread (CPython's asynchronous exceptions, which interrupt Python bytecode: a loop in
Python stops, a call blocked inside C code stops only when it returns). Inside a limited block
:mod:`process_guard` slices ``time.sleep`` and blocks ``os._exit``, and
:func:`seconds_left` tells C-level work that can bound itself (template regexes) how long it
has.
"""

from __future__ import annotations

import ctypes
import heapq
import itertools
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from pytest_karenina.templates.process_guard import guarded

DEFAULT_TEMPLATE_TIME_LIMIT = 10.0
"""Seconds template code may run for one step (compile, build, verify)."""


class TemplateTimeout(Exception):
    """Template code ran past its time limit."""


class _Expired(BaseException):
    """Raised inside the template's thread: a BaseException, so that the template's own
    ``except Exception`` cannot swallow it and loop on."""


def _raise_in(thread_id: int, exception: type[BaseException] | None) -> None:
    target = ctypes.c_ulong(thread_id)
    value = ctypes.py_object(exception) if exception is not None else None
    ctypes.pythonapi.PyThreadState_SetAsyncExc(target, value)


class _Watch:
    """One limited block: the thread it runs in and when it must end."""

    __slots__ = ("deadline", "finished", "fired", "thread_id")

    def __init__(self, thread_id: int, deadline: float) -> None:
        self.thread_id = thread_id
        self.deadline = deadline
        self.finished = False
        self.fired = False


class _Watchdog:
    """One thread watching every limited block of the process.

    A thread per block cost 8-9 ms of GIL time per question (two to three blocks each);
    blocks register their deadline here instead. Finished blocks leave the heap when they
    reach its top, and the watcher wakes only for the earliest deadline.
    """

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._heap: list[tuple[float, int, _Watch]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def watch(self, seconds: float) -> _Watch:
        entry = _Watch(threading.get_ident(), time.monotonic() + seconds)
        with self._condition:
            heapq.heappush(self._heap, (entry.deadline, next(self._order), entry))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="karenina-template-watchdog", daemon=True
                )
                self._thread.start()
            elif self._heap[0][2] is entry:  # a new earliest deadline: wake the watcher
                self._condition.notify()
        return entry

    def release(self, entry: _Watch) -> bool:
        """End ``entry``'s watch; whether it fired. A timeout raised in the thread but not
        yet delivered is withdrawn, so it cannot surface after the block."""
        with self._condition:
            entry.finished = True
            heap = self._heap
            while heap and heap[0][2].finished:  # blocks mostly end in the order they began
                heapq.heappop(heap)
            if entry.fired:
                _raise_in(entry.thread_id, None)
            return entry.fired

    def _run(self) -> None:
        heap = self._heap
        with self._condition:
            while True:
                while heap and heap[0][2].finished:
                    heapq.heappop(heap)
                if not heap:
                    self._condition.wait()
                    continue
                delay = heap[0][0] - time.monotonic()
                if delay > 0:
                    self._condition.wait(delay)
                    continue
                entry = heapq.heappop(heap)[2]
                entry.fired = True
                _raise_in(entry.thread_id, _Expired)


_WATCHDOG = _Watchdog()
_deadlines = threading.local()


def seconds_left() -> float | None:
    """Seconds until this thread's innermost limited block expires (None: not limited)."""
    stack: list[float] | None = getattr(_deadlines, "stack", None)
    if not stack:
        return None
    return max(min(stack) - time.monotonic(), 0.0)


@contextmanager
def time_limit(seconds: float | None, what: str) -> Iterator[None]:
    """Run the ``with`` block for at most ``seconds`` (None: no limit); past it raise
    :class:`TemplateTimeout` saying that ``what`` did not finish."""
    if seconds is None:
        with guarded():
            yield
        return
    entry = _WATCHDOG.watch(seconds)
    stack: list[float] = _deadlines.__dict__.setdefault("stack", [])
    stack.append(entry.deadline)
    try:
        with guarded():
            yield
    except _Expired:
        raise TemplateTimeout(f"{what} did not finish within {seconds:g}s") from None
    finally:
        stack.pop()
        _WATCHDOG.release(entry)
