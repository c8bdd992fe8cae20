"""What the template time limit must not interrupt: imports and engine work (issue 23, item 2).

An asynchronous timeout that lands inside an import leaves a half-initialised module behind
for the rest of the process. Each test waits until the watchdog has reached its block past
the deadline (and held the timeout back), then checks that the work finished and that the
timeout came after it. No timing assertion: the waits end on the watchdog's own state.
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_karenina.templates.time_limit import (
    TemplateTimeout,
    paused,
    seconds_left,
    time_limit,
    uninterrupted,
)
from pytest_karenina.templates.watchdog import thread_state

HANG_GUARD = 120.0
"""Seconds a wait below gives up after (a broken watchdog must not hang the suite)."""


def spin_until(condition: Callable[[], bool]) -> None:
    """Run Python bytecode (what the timeout interrupts) until ``condition`` holds."""
    give_up = time.monotonic() + HANG_GUARD
    while not condition():
        if time.monotonic() > give_up:
            raise AssertionError("the watchdog never reached the block")


def watchdog_looked() -> bool:
    """The watchdog reached this thread's innermost block past its deadline and held the
    timeout back (for a section, or for an import it saw on the stack)."""
    watch = thread_state().watches[-1]
    return watch.due or watch.wake != watch.deadline


def write_module(directory: Path, name: str, body: str) -> Path:
    path = directory / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    return path


SLOW_IMPORT = """
from tests.templates.test_time_limit_sections import spin_until, watchdog_looked

spin_until(watchdog_looked)
COMPLETE = True
"""


def test_an_uninterrupted_section_finishes_and_the_timeout_follows() -> None:
    steps: list[str] = []
    with pytest.raises(TemplateTimeout, match=r"the block did not finish within 0.05s"):
        with time_limit(0.05, "the block"):
            with uninterrupted():
                spin_until(watchdog_looked)
                steps.append("section finished")
            steps.append("ran on after the section")
    assert steps == ["section finished"]


def test_a_paused_section_does_not_count_against_the_limit() -> None:
    with time_limit(1.0, "the block"):
        left = seconds_left()
        with paused():
            spin_until(watchdog_looked)  # past the original deadline
        after = seconds_left()
    assert left is not None and after is not None and after > 0


def test_an_import_statement_in_template_code_is_not_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_module(tmp_path, "karenina_slow_import", SLOW_IMPORT)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "karenina_slow_import", raising=False)
    with pytest.raises(TemplateTimeout):
        with time_limit(0.05, "importing"):
            import karenina_slow_import  # type: ignore[import-not-found]  # noqa: F401
    assert sys.modules["karenina_slow_import"].COMPLETE is True


def test_an_import_no_wrapper_sees_is_not_interrupted(tmp_path: Path) -> None:
    """``exec_module`` bypasses ``__import__`` and ``import_module``: the watchdog itself
    sees the import system on the thread's stack and waits for it."""
    path = write_module(tmp_path, "karenina_unwrapped_import", SLOW_IMPORT)
    spec = importlib.util.spec_from_file_location("karenina_unwrapped_import", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    steps: list[str] = []
    with pytest.raises(TemplateTimeout):
        with time_limit(0.05, "importing"):
            spec.loader.exec_module(module)
            steps.append("imported")
            while True:  # the timeout lands here, after the import
                pass
    assert steps == ["imported"] and module.COMPLETE is True


def test_a_block_run_by_module_code_being_imported_is_still_limited(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Imports older than the block (the import running the block) do not hold it back."""
    body = f"""
    import time
    from pytest_karenina.templates.time_limit import TemplateTimeout, time_limit

    try:
        with time_limit(0.05, "module code"):
            give_up = time.monotonic() + {HANG_GUARD}
            while time.monotonic() < give_up:
                pass
        OUTCOME = "ran to the end"
    except TemplateTimeout:
        OUTCOME = "stopped"
    """
    write_module(tmp_path, "karenina_limited_module", body)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "karenina_limited_module", raising=False)
    import karenina_limited_module  # type: ignore[import-not-found]

    assert karenina_limited_module.OUTCOME == "stopped"


SECTIONS_SEEN: list[int] = []
"""How deep in sections its importing thread was, as each import of the probe module saw it."""


def test_imports_are_sections_in_template_code_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = """
    from pytest_karenina.templates.watchdog import thread_state
    from tests.templates.test_time_limit_sections import SECTIONS_SEEN

    SECTIONS_SEEN.append(thread_state().sections)
    """
    write_module(tmp_path, "karenina_probe_sections", body)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys.modules[__name__], "SECTIONS_SEEN", [])
    for limited in (True, False):
        monkeypatch.delitem(sys.modules, "karenina_probe_sections", raising=False)
        if limited:
            with time_limit(30.0, "importing"):
                importlib.import_module("karenina_probe_sections")
        else:
            importlib.import_module("karenina_probe_sections")
    assert SECTIONS_SEEN == [1, 0]
