"""Tests that start processes say so with the ``xdist`` or ``subprocess`` marker.

``pytest -m "not xdist and not subprocess"`` is the fast local loop. A test that starts a
process without one of these marks would slow that loop down unseen, and a marked test that
starts none would be left out of it for nothing. This plugin (registered in
``tests/conftest.py``) fails both, at the test's teardown.

A process counts when ``subprocess.Popen`` starts it (execnet's xdist workers, pytester's
``runpytest_subprocess``, asyncio subprocesses all go through it), or ``os.system``,
``os.posix_spawn``, ``os.spawn*``, ``os.exec*`` or ``os.fork``: each of these raises an audit
event. :mod:`multiprocessing` spawns without one, so its spawning function is wrapped.
``git`` does not count: it ends in milliseconds, and tests of ``--karenina-changed-since``
build repositories with it. A process started past all of these (``_posixsubprocess``
called directly, ``ctypes``) goes unseen.

A process counts for every test running when it starts, so a test whose in-process
``pytester`` run starts one needs the mark too.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Generator, Iterator
from typing import Any

import pytest

MARKS = ("subprocess", "xdist")
NOT_COUNTED = frozenset({"git"})
PROGRAM_ARGUMENT = {
    "subprocess.Popen": 0, "os.system": 0, "os.posix_spawn": 0, "os.exec": 0, "os.spawn": 1,
    "os.fork": None,
}  # fmt: skip
"""The audit events that start a process, and which of their arguments names the program."""

_running: list[list[str]] = []
"""One record per test running now (more than one while a pytester run is inside a test)."""
_installed = False
_CALL_PASSED = pytest.StashKey[bool]()


def _program(event: str, args: tuple[Any, ...]) -> str:
    """The name of the program that ``event`` starts (never raises: an audit hook that raises
    would stop the process from starting)."""
    index = PROGRAM_ARGUMENT[event]
    if index is None:
        return "a fork"
    first = args[index]
    if event == "subprocess.Popen" and first is None:  # no executable=: the program is argv[0]
        first = args[1]
    if isinstance(first, (list, tuple)):
        first = first[0] if first else None
    try:
        words = os.fsdecode(first).split()  # a shell command line: its first word
    except TypeError:
        return "?"
    return os.path.basename(words[0]) if words else "?"


def _record(program: str) -> None:
    for record in _running:
        record.append(program)


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _running and event in PROGRAM_ARGUMENT:
        program = _program(event, args)
        if program not in NOT_COUNTED:
            _record(program)


def _install() -> None:
    """Once per interpreter: an audit hook cannot be removed, so one serves every run."""
    global _installed
    if _installed:
        return
    _installed = True
    sys.addaudithook(_audit)
    import multiprocessing.util

    spawn = multiprocessing.util.spawnv_passfds

    def recorded_spawn(path: bytes, args: Any, passfds: Any) -> int:
        if _running:
            _record(f"multiprocessing {os.path.basename(os.fsdecode(path))}")
        return spawn(path, args, passfds)

    multiprocessing.util.spawnv_passfds = recorded_spawn


def pytest_configure(config: pytest.Config) -> None:
    _install()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item,
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.when == "call":
        item.stash[_CALL_PASSED] = report.passed
    return report


@pytest.fixture(autouse=True)
def _processes_match_the_marks(request: pytest.FixtureRequest) -> Iterator[None]:
    """Set up before the test's other function-scoped fixtures and torn down after them, so
    a process that one of them starts counts for the test."""
    record: list[str] = []
    _running.append(record)
    try:
        yield
    finally:
        del _running[next(i for i, r in enumerate(_running) if r is record)]
    item = request.node
    marked = [name for name in MARKS if item.get_closest_marker(name) is not None]
    if record and not marked:
        pytest.fail(
            f"{item.nodeid} started {', '.join(sorted(set(record)))} but is not marked: mark it "
            "pytest.mark.subprocess, or run xdist through the dist fixture of "
            "tests/plugin/conftest.py, so that -m 'not xdist and not subprocess' leaves it out",
            pytrace=False,
        )
    if marked and not record and item.stash.get(_CALL_PASSED, False):
        pytest.fail(
            f"{item.nodeid} is marked {' and '.join(marked)} but started no process: drop the "
            "mark, so that -m 'not xdist and not subprocess' runs it",
            pytrace=False,
        )
