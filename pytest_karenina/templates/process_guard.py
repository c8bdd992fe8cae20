"""Template code cannot end the process, and its sleeps obey the time limit.

Two calls in template code escape the thread-level time limit of :mod:`time_limit`:
``os._exit()`` ends the whole process at once (no result, no report, exit code of the
template's choosing), and ``time.sleep()`` blocks inside C, where the limit's asynchronous
exception is not delivered. While template code runs (:func:`guarded`), this thread's calls
to both go through wrappers: ``os._exit`` raises :class:`ProcessExitBlocked` (a
``SystemExit``, so it ends the template step like ``sys.exit()`` and the item records it),
and ``time.sleep`` sleeps in short slices, between which the time limit can fire.

The wrappers are installed process-wide the first time template code runs and stay: other
threads, and this thread outside template code, call straight through to the originals.
Not covered (the residual risk, see docs/reliability.md): ``os.kill`` of the own process,
``os.abort``, ``posix._exit`` called directly, and crashes inside C extensions.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NoReturn, SupportsIndex

SLEEP_SLICE = 0.05
"""Longest stretch template code sleeps without the time limit getting a chance to fire."""

_state = threading.local()
_install_lock = threading.Lock()
_originals: dict[str, Callable[..., object]] = {}


class ProcessExitBlocked(SystemExit):
    """Template code called ``os._exit()``; the process goes on, the template step ends."""


def in_template_code() -> bool:
    """Whether this thread is running template code right now."""
    return bool(getattr(_state, "depth", 0))


def _guarded_exit(status: int) -> NoReturn:
    if in_template_code():
        raise ProcessExitBlocked(f"template code called os._exit({status!r})")
    _originals["_exit"](status)
    raise AssertionError("os._exit returned")  # pragma: no cover


def _guarded_sleep(seconds: float | SupportsIndex) -> None:
    real_sleep = _originals["sleep"]
    if not in_template_code() or float(seconds) <= SLEEP_SLICE:
        real_sleep(seconds)
        return
    end = time.monotonic() + float(seconds)
    while (left := end - time.monotonic()) > 0:
        real_sleep(min(left, SLEEP_SLICE))


def install() -> None:
    """Put the wrappers in place (once per process; later calls do nothing)."""
    if _originals:
        return
    with _install_lock:
        if _originals:
            return
        _originals["sleep"] = time.sleep
        _originals["_exit"] = os._exit
        time.sleep = _guarded_sleep
        os._exit = _guarded_exit


@contextmanager
def guarded() -> Iterator[None]:
    """Mark the ``with`` block as template code for this thread (blocks may nest)."""
    install()
    _state.depth = getattr(_state, "depth", 0) + 1
    try:
        yield
    finally:
        _state.depth -= 1
