"""A time limit on template code: compiling a template, its ground-truth hook, ``verify()``.

Template code is user code; a loop that never ends must cost its own item, not hang the run.
The code runs in the calling thread while a watchdog waits; past the limit the watchdog
raises :class:`TemplateTimeout` inside that thread (CPython's asynchronous exceptions, which
interrupt Python bytecode: a loop in Python stops, a call blocked inside C code stops only
when it returns).
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Iterator
from contextlib import contextmanager

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


@contextmanager
def time_limit(seconds: float | None, what: str) -> Iterator[None]:
    """Run the ``with`` block for at most ``seconds`` (None: no limit); past it raise
    :class:`TemplateTimeout` saying that ``what`` did not finish."""
    if seconds is None:
        yield
        return
    thread_id = threading.get_ident()
    lock = threading.Lock()
    finished = threading.Event()
    fired = False

    def watch() -> None:
        nonlocal fired
        if finished.wait(seconds):
            return
        with lock:
            if not finished.is_set():
                fired = True
                _raise_in(thread_id, _Expired)

    watchdog = threading.Thread(target=watch, name="karenina-template-watchdog", daemon=True)
    watchdog.start()
    try:
        yield
    except _Expired:
        raise TemplateTimeout(f"{what} did not finish within {seconds:g}s") from None
    finally:
        with lock:
            finished.set()
            if fired:  # an exception not yet raised must not surface outside the block
                _raise_in(thread_id, None)
        watchdog.join()
