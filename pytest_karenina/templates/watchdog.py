"""The one thread that ends template code past its time limit, and what it must not interrupt.

Past a limited block's deadline the watchdog raises an asynchronous exception in the block's
thread (CPython's ``PyThreadState_SetAsyncExc``): it lands at the next bytecode that thread
runs, wherever that is. Landing inside an import leaves the module half-initialised for the
rest of the process (every later ``import torch`` fails with "partially initialized module",
and a library whose C part was set up halfway can crash the process later); landing inside a
library's loading code is as bad. So the watchdog holds its exception back:

- inside an *uninterrupted* section (:func:`uninterrupted`: template code's imports, see
  :mod:`process_guard`): the timeout is raised when the section ends, synchronously, in the
  code that left it; a section entered after the deadline raises at once, before it begins;
- inside a *paused* section (:func:`paused`: engine work done for template code, such as
  loading an embedding model): as above, and the section's time does not count against the
  thread's limits;
- while the thread's stack holds frames of the import system (imports that C code or a
  bound ``import_module`` start, which no wrapper sees): it looks again every
  :data:`IMPORT_POLL` seconds. Frames older than the limited block do not count, so a block
  run by module code that is being imported is still limited.

Sections and the watchdog change a thread's state only under the watchdog's lock, so no
exception is sent between a section's start and its body (one sent just before is withdrawn).
"""

from __future__ import annotations

import ctypes
import heapq
import itertools
import math
import queue
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

IMPORT_POLL = 0.01
"""Seconds between two looks at a thread that is inside an import past its deadline."""

_IMPORT_SYSTEM = frozenset({"importlib._bootstrap", "importlib._bootstrap_external"})


class Expired(BaseException):
    """Raised inside a limited block's thread: a BaseException, so that the template's own
    ``except Exception`` cannot swallow it and loop on."""


def _raise_in(thread_id: int, exception: type[BaseException] | None) -> None:
    value = ctypes.py_object(exception) if exception is not None else None
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), value)


class ThreadState:
    """A thread's limited blocks (innermost last) and how deep it is in sections."""

    __slots__ = ("ident", "sections", "watches")

    def __init__(self) -> None:
        self.ident = threading.get_ident()
        self.watches: list[Watch] = []
        self.sections = 0


class Watch:
    """One limited block: its thread, its deadline and where the watchdog stands with it."""

    __slots__ = ("base", "deadline", "due", "finished", "fired", "thread", "wake")

    def __init__(self, thread: ThreadState, deadline: float, base: FrameType | None) -> None:
        self.thread = thread
        self.deadline = deadline
        self.base = base  # the frame that entered the block: imports below it do not count
        self.wake = deadline  # when the watchdog looks next; an older heap record is stale
        self.finished = False
        self.fired = False  # the timeout was raised (asynchronously or by a section)
        self.due = False  # the deadline passed inside a section: raise when it ends

    @property
    def expired(self) -> bool:
        return self.fired or self.due or self.deadline <= time.monotonic()


_local = threading.local()


def thread_state() -> ThreadState:
    """This thread's state (made on first use)."""
    state: ThreadState | None = getattr(_local, "state", None)
    if state is None:
        state = _local.state = ThreadState()
    return state


def _importing(watch: Watch) -> bool:
    """Whether the watch's thread runs the import system above the block's own frame."""
    frame = sys._current_frames().get(watch.thread.ident)
    while frame is not None and frame is not watch.base:
        if frame.f_globals.get("__name__") in _IMPORT_SYSTEM:
            return True
        frame = frame.f_back
    return False


class Watchdog:
    """One thread watching every limited block of the process.

    A thread per block cost 8-9 ms of GIL time per question (two to three blocks each);
    blocks register their deadline here instead. Finished blocks leave the heap when they
    reach its top, and the watcher wakes only for the earliest deadline.

    A limited thread holds only C-level locks here (a raw lock, a ``SimpleQueue`` to wake
    the watcher): an exception that lands in Python code while one is held still releases
    it, where ``threading.Condition``'s own Python code could leave it held.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._wakeups: queue.SimpleQueue[None] = queue.SimpleQueue()
        self._heap: list[tuple[float, int, Watch]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def watch(self, entry: Watch) -> None:
        """Start ``entry``'s watch (if this raises, :meth:`release` it)."""
        with self._lock:
            self._schedule(entry, entry.deadline)
            entry.thread.watches.append(entry)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="karenina-template-watchdog", daemon=True
                )
                self._thread.start()

    def release(self, entry: Watch) -> bool:
        """End ``entry``'s watch; whether it fired. A timeout raised in the thread but not
        yet delivered is withdrawn, so it cannot surface after the block."""
        with self._lock:
            entry.finished = True
            if entry.fired:
                _raise_in(entry.thread.ident, None)
            entry.base = None  # the record may wait in the heap: keep no frame (and locals) alive
            if entry in entry.thread.watches:
                entry.thread.watches.remove(entry)
            return entry.fired

    def enter(self, state: ThreadState) -> None:
        """Begin a section in this thread; raise :class:`Expired` (and begin nothing) when
        one of its blocks has expired already."""
        expired = counted = False
        try:
            with self._lock:
                state.sections += 1
                counted = True
                if state.sections == 1 and any(w.expired for w in state.watches):
                    # One sent before the section began may still be on its way: withdraw
                    # it, and raise here instead, before the section's body starts.
                    _raise_in(state.ident, None)
                    expired = self._fire_due(state, all_expired=True)
                    state.sections -= 1
                    counted = False
        except BaseException:  # a timeout that arrived before the withdrawal
            if counted:
                with self._lock:
                    state.sections -= 1
            raise
        if expired:
            raise Expired

    def leave(self, state: ThreadState, paused_for: float | None) -> None:
        """End a section; with ``paused_for``, the thread's deadlines move that much later.
        Raise :class:`Expired` when a deadline passed inside the outermost section."""
        with self._lock:
            if paused_for is not None:
                for entry in state.watches:
                    if not entry.fired:
                        entry.deadline += paused_for
                        entry.due = False
                        self._schedule(entry, entry.deadline)
            state.sections -= 1
            expired = state.sections == 0 and self._fire_due(state, all_expired=False)
        if expired:
            raise Expired

    # --- under the lock ------------------------------------------------------------------
    def _schedule(self, entry: Watch, when: float) -> None:
        entry.wake = when
        heapq.heappush(self._heap, (when, next(self._order), entry))
        if self._heap[0][2] is entry:  # a new earliest deadline: wake the watcher
            self._wakeups.put(None)

    def _fire_due(self, state: ThreadState, *, all_expired: bool) -> bool:
        """Mark the thread's due (or, with ``all_expired``, expired) blocks as fired: the
        caller raises :class:`Expired` itself. Whether there was any."""
        found = False
        for entry in state.watches:
            if entry.due or (all_expired and entry.expired):
                entry.due, entry.fired, found = False, True, True
        return found

    def _next_wake(self) -> float | None:
        """Handle every record that is due; the seconds until the next (None: none left)."""
        heap = self._heap
        while heap:
            when, _, entry = heap[0]
            if entry.finished or entry.fired or when != entry.wake:
                heapq.heappop(heap)  # stale: released, raised, or rescheduled
                continue
            now = time.monotonic()
            if when > now:
                return when - now
            heapq.heappop(heap)
            entry.wake = math.inf
            if entry.thread.sections:
                entry.due = True  # raised when the section ends
            elif _importing(entry):
                self._schedule(entry, now + IMPORT_POLL)
            else:
                entry.fired = True
                _raise_in(entry.thread.ident, Expired)
        return None

    def _run(self) -> None:
        while True:
            with self._lock:
                delay = self._next_wake()
            try:
                self._wakeups.get(timeout=delay)
            except queue.Empty:
                pass


WATCHDOG = Watchdog()


@contextmanager
def uninterrupted() -> Iterator[None]:
    """The time limit does not interrupt the ``with`` block: a deadline that passes inside it
    raises when the block ends (one that passed before, when it would begin)."""
    state = thread_state()
    WATCHDOG.enter(state)
    try:
        yield
    finally:
        WATCHDOG.leave(state, None)


@contextmanager
def paused() -> Iterator[None]:
    """The ``with`` block's time does not count against this thread's time limits, and
    nothing interrupts it: for engine work done on behalf of template code."""
    state = thread_state()
    WATCHDOG.enter(state)
    started = time.monotonic()
    try:
        yield
    finally:
        WATCHDOG.leave(state, time.monotonic() - started)
