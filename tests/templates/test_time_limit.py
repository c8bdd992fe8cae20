"""Template code that never ends costs its own step, not the run (per-template time limit)."""

from __future__ import annotations

import os
import threading
import time

import pytest

from pytest_karenina.templates import TemplateError, compile_template, process_guard
from pytest_karenina.templates.compiler import _compiled
from pytest_karenina.templates.process_guard import ProcessExitBlocked
from pytest_karenina.templates.time_limit import TemplateTimeout, seconds_left, time_limit

LOOP_IN_GROUND_TRUTH = """
class Answer(BaseAnswer):
    value: int = Field(description="A number")

    def ground_truth(self):
        while True:  # and it swallows ordinary exceptions on the way
            try:
                self.correct = {"value": 1}
            except Exception:
                pass

    def verify(self) -> bool:
        return True
"""


def test_a_quick_block_is_untouched_and_returns() -> None:
    with time_limit(5.0, "quick work"):
        total = sum(range(1000))
    assert total == 499500


def test_a_python_loop_is_stopped_with_a_named_timeout() -> None:
    with pytest.raises(TemplateTimeout, match=r"spinning did not finish within 0.2s"):
        with time_limit(0.2, "spinning"):
            while True:
                pass


def test_the_template_cannot_swallow_the_timeout() -> None:
    with pytest.raises(TemplateTimeout):
        with time_limit(0.2, "a stubborn loop"):
            while True:
                try:
                    time.sleep(0.01)
                except Exception:
                    pass


def test_nothing_fires_after_the_block_and_threads_do_not_interfere() -> None:
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(50):
                with time_limit(0.05, "tiny"):
                    sum(range(100))
            time.sleep(0.2)  # a late watchdog would raise here
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert errors == []
    watchdogs = [t for t in threading.enumerate() if t.name == "karenina-template-watchdog"]
    assert len(watchdogs) <= 1  # one shared watcher, not one per block


def test_an_earlier_deadline_wakes_the_watcher_from_a_later_one() -> None:
    started = threading.Event()

    def long_block() -> None:
        with time_limit(60.0, "patient"):
            started.set()
            time.sleep(0.5)

    waiting = threading.Thread(target=long_block)
    waiting.start()
    started.wait(timeout=30)
    try:
        with pytest.raises(TemplateTimeout, match="hasty"):
            with time_limit(0.1, "hasty"):
                while True:
                    pass
    finally:
        waiting.join(timeout=30)


def test_a_looping_template_is_a_template_error_once_and_then_cached() -> None:
    with pytest.raises(TemplateError, match=r"question q-loop: .* did not finish within 0\.3s"):
        compile_template(LOOP_IN_GROUND_TRUTH, "q-loop", seconds=0.3)
    hits = _compiled.cache_info().hits
    with pytest.raises(TemplateError, match="did not finish"):
        compile_template(LOOP_IN_GROUND_TRUTH, seconds=0.3)
    assert _compiled.cache_info().hits == hits + 1  # the cached error, not another loop


def test_module_level_code_is_limited_too() -> None:
    with pytest.raises(TemplateError, match=r"did not finish within 0\.2s"):
        compile_template("counter = 0\nwhile True:\n    counter += 1\n", seconds=0.2)


# --- what escapes a thread-level limit: process exit and sleeping in C -------------------


def test_os_exit_in_template_code_raises_instead_of_ending_the_process() -> None:
    with pytest.raises(ProcessExitBlocked, match=r"template code called os._exit\(0\)") as caught:
        with time_limit(None, "verify()"):
            os._exit(0)
    assert isinstance(caught.value, SystemExit)


def test_outside_template_code_os_exit_and_sleep_are_the_originals(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with time_limit(None, "installs the guard"):
        pass
    calls: list[tuple[str, object]] = []
    monkeypatch.setitem(
        process_guard._originals, "_exit", lambda status: calls.append(("exit", status))
    )
    monkeypatch.setitem(process_guard._originals, "sleep", lambda s: calls.append(("sleep", s)))
    assert not process_guard.in_template_code()
    with pytest.raises(AssertionError):  # the stand-in returns; the real one never does
        os._exit(7)
    time.sleep(0.2)
    assert calls == [("exit", 7), ("sleep", 0.2)]
    calls.clear()
    with time_limit(None, "template code"):
        time.sleep(0.2)
    assert len(calls) > 1 and all(s <= process_guard.SLEEP_SLICE for _, s in calls)


def test_a_long_sleep_in_template_code_stops_at_the_limit() -> None:
    started = time.monotonic()
    with pytest.raises(TemplateTimeout, match=r"sleeping did not finish within 0\.3s"):
        with time_limit(0.3, "sleeping"):
            time.sleep(600)
    assert time.monotonic() - started < 60  # not the ten minutes asked for


def test_seconds_left_follows_the_innermost_deadline() -> None:
    assert seconds_left() is None
    with time_limit(5.0, "outer"):
        outer = seconds_left()
        with time_limit(0.5, "inner"):
            inner = seconds_left()
        assert outer is not None and inner is not None and inner < 0.5 < outer <= 5.0
    assert seconds_left() is None
