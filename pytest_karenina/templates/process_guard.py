"""Template code cannot end the process, its sleeps obey the time limit, its imports do not.

Two calls in template code escape the thread-level time limit of :mod:`time_limit`:
``os._exit()`` ends the whole process at once (no result, no report, exit code of the
template's choosing), and ``time.sleep()`` blocks inside C, where the limit's asynchronous
exception is not delivered. A third must escape it: an import interrupted halfway leaves a
half-initialised module behind for the rest of the process. While template code runs
(:func:`guarded`), this thread's calls go through wrappers: ``os._exit`` raises
:class:`ProcessExitBlocked` (a ``SystemExit``, so it ends the template step like
``sys.exit()`` and the item records it), ``time.sleep`` sleeps in short slices, between
which the time limit can fire, and ``__import__`` and ``importlib.import_module`` run as
uninterrupted sections of :mod:`watchdog` (a timeout waits for the import to finish).

The wrappers are installed process-wide the first time template code runs and stay: other
threads, and this thread outside template code, call straight through to the originals.
Imports that no wrapper sees (from C, or through an ``import_module`` bound earlier) are
held back by the watchdog itself, which does not interrupt a thread inside the import system.
Not covered (the residual risk, see docs/reliability.md): ``os.kill`` of the own process,
``os.abort``, ``posix._exit`` called directly, and crashes inside C extensions.
"""

from __future__ import annotations

import builtins
import importlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import NoReturn, SupportsIndex, cast

from pytest_karenina.templates.watchdog import uninterrupted

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


def _guarded_import(
    name: str,
    globals: Mapping[str, object] | None = None,
    locals: Mapping[str, object] | None = None,
    fromlist: Sequence[str] | None = (),
    level: int = 0,
) -> ModuleType:
    real_import = cast("Callable[..., ModuleType]", _originals["__import__"])
    if not getattr(_state, "depth", 0):  # in_template_code(), inlined: every import passes here
        return real_import(name, globals, locals, fromlist, level)
    if _loaded(name, globals, fromlist, level):
        return real_import(name, globals, locals, fromlist, level)
    with uninterrupted():
        return real_import(name, globals, locals, fromlist, level)


def _loaded(
    name: str, globals: Mapping[str, object] | None, fromlist: Sequence[str] | None, level: int
) -> bool:
    """Whether the import finds everything it names loaded already, so that it takes no
    import lock and initialises nothing (an interrupt inside it leaves nothing half-done):
    the module in ``sys.modules`` and not being initialised, and each name of ``fromlist`` in
    its namespace. Pydantic's function-level imports while a template class is built
    (several per template) would otherwise each enter and leave an uninterrupted section."""
    if level:
        package = globals.get("__package__") if globals is not None else None
        if not isinstance(package, str) or not package:
            return False
        bits = package.rsplit(".", level - 1)
        if len(bits) < level:
            return False
        name = f"{bits[0]}.{name}" if name else bits[0]
    module = sys.modules.get(name)
    if module is None or getattr(getattr(module, "__spec__", None), "_initializing", False):
        return False
    namespace = vars(module)
    return all(item != "*" and item in namespace for item in fromlist or ())


def _guarded_import_module(name: str, package: str | None = None) -> ModuleType:
    real_import_module = cast("Callable[..., ModuleType]", _originals["import_module"])
    if not in_template_code():
        return real_import_module(name, package)
    with uninterrupted():
        return real_import_module(name, package)


def install() -> None:
    """Put the wrappers in place (once per process; later calls do nothing)."""
    if _originals:
        return
    with _install_lock:
        if _originals:
            return
        _originals["sleep"] = time.sleep
        _originals["_exit"] = os._exit
        _originals["__import__"] = builtins.__import__
        _originals["import_module"] = importlib.import_module
        time.sleep = _guarded_sleep
        os._exit = _guarded_exit
        builtins.__import__ = _guarded_import
        importlib.import_module = _guarded_import_module


@contextmanager
def guarded() -> Iterator[None]:
    """Mark the ``with`` block as template code for this thread (blocks may nest)."""
    install()
    _state.depth = getattr(_state, "depth", 0) + 1
    try:
        yield
    finally:
        _state.depth -= 1
