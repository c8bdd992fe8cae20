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

import sys
import time
from types import TracebackType

from pytest_karenina.templates.process_guard import guarded
from pytest_karenina.templates.watchdog import (
    WATCHDOG,
    Expired,
    Watch,
    paused,
    thread_state,
    uninterrupted,
)

__all__ = [
    "DEFAULT_TEMPLATE_TIME_LIMIT",
    "TemplateTimeout",
    "paused",
    "seconds_left",
    "time_limit",
    "uninterrupted",
]

DEFAULT_TEMPLATE_TIME_LIMIT = 10.0
"""Seconds template code may run for one step (compile, build, verify)."""


class TemplateTimeout(Exception):
    """Template code ran past its time limit."""


def seconds_left() -> float | None:
    """Seconds until this thread's innermost limited block expires (None: not limited)."""
    watches = thread_state().watches
    if not watches:
        return None
    return max(min(w.deadline for w in watches) - time.monotonic(), 0.0)


class time_limit:  # lower case: used like the function it replaced, `with time_limit(...)`
    """Run the ``with`` block for at most ``seconds`` (None: no limit); past it raise
    :class:`TemplateTimeout` saying that ``what`` did not finish.

    Imports and the sections of :mod:`watchdog` are never interrupted: a deadline that passes
    inside one raises when it ends.
    """

    __slots__ = ("_entry", "_guard", "seconds", "what")

    def __init__(self, seconds: float | None, what: str) -> None:
        self.seconds = seconds
        self.what = what
        self._entry: Watch | None = None
        self._guard = guarded()

    def __enter__(self) -> None:
        self._guard.__enter__()
        if self.seconds is None:
            return
        # The frame running the ``with`` statement: imports that began before it (this
        # block run by module code being imported) do not hold the limit back.
        entry = Watch(thread_state(), time.monotonic() + self.seconds, sys._getframe(1))
        self._entry = entry
        try:
            WATCHDOG.watch(entry)
        except BaseException:  # an enclosing block's timeout, arriving right now
            self._end()
            raise

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._end()
        if kind is not None and issubclass(kind, Expired):
            raise TemplateTimeout(f"{self.what} did not finish within {self.seconds:g}s") from None

    def _end(self) -> None:
        entry, self._entry = self._entry, None
        try:
            while entry is not None:
                try:
                    WATCHDOG.release(entry)
                    entry = None
                except Expired:  # sent as the block finished: the block's outcome stands
                    pass
        finally:
            self._guard.__exit__(None, None, None)
