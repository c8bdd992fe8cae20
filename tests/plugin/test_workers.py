"""``--karenina-workers`` starts xdist workers for the user, and the summary says when a run
was CPU-bound."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pytest_karenina.plugin.report import cpu_meter
from tests.plugin.plugin_helpers import copy_checkpoint, endpoint_args, scripted
from tests.support.openai_server import OpenAIServer


@pytest.mark.xdist
def test_workers_option_starts_xdist_workers(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    scripted(openai_server)
    path = copy_checkpoint(pytester)

    result = pytester.runpytest(
        "--karenina", str(path), *endpoint_args(openai_server), "--karenina-workers", "2"
    )

    result.assert_outcomes(passed=2, failed=2, skipped=1)
    assert "2 workers [5 items]" in result.stdout.str()
    assert result.stdout.str().count("karenina summary") == 1


def test_n_on_the_command_line_decides_over_the_workers_option(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    scripted(openai_server)
    path = copy_checkpoint(pytester)
    pytester.makeini("[pytest]\nkarenina_workers = 2\n")

    result = pytester.runpytest("--karenina", str(path), *endpoint_args(openai_server), "-n", "0")

    result.assert_outcomes(passed=2, failed=2, skipped=1)
    assert " workers [" not in result.stdout.str()


def test_a_bad_workers_value_is_a_usage_error_naming_the_ini_key(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    path = copy_checkpoint(pytester)
    pytester.makeini("[pytest]\nkarenina_workers = lots\n")

    result = pytester.runpytest("--karenina", str(path), *endpoint_args(openai_server))

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*karenina_workers in tox.ini: expected a number, got 'lots'*"])


class Clock:
    """Stands in for the ``time`` module of :mod:`cpu_meter`: each clock returns its readings
    in turn (the run loop's start, then its end)."""

    def __init__(self, cpu: list[float], wall: list[float]) -> None:
        self._cpu: Iterator[float] = iter(cpu)
        self._wall: Iterator[float] = iter(wall)

    def process_time(self) -> float:
        return next(self._cpu)

    def perf_counter(self) -> float:
        return next(self._wall)


@pytest.mark.parametrize(
    ("cpu", "expected"),
    [(19.4, "CPU-bound: the run loop kept 97% of one core busy (19.4 s of CPU in 20.0 s); "
            "--karenina-workers 2 would use the 1 idle core"),
     (3.0, None)],
)  # fmt: skip
def test_the_summary_says_when_the_run_loop_was_cpu_bound(
    pytester: pytest.Pytester,
    openai_server: OpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    cpu: float,
    expected: str | None,
) -> None:
    scripted(openai_server)
    path = copy_checkpoint(pytester)
    monkeypatch.setattr(cpu_meter, "time", Clock([10.0, 10.0 + cpu], [100.0, 120.0]))
    monkeypatch.setattr(cpu_meter, "usable_cores", lambda: 2)

    result = pytester.runpytest("--karenina", str(path), *endpoint_args(openai_server))

    result.assert_outcomes(passed=2, failed=2, skipped=1)
    if expected is None:
        result.stdout.no_fnmatch_line("CPU-bound*")
    else:
        result.stdout.fnmatch_lines(["*karenina summary*", expected])


@pytest.mark.xdist
def test_the_xdist_controller_freezes_a_large_runs_reports_at_the_end(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    """The controller collects no items, but holds every report: it settles its heap after a
    large run too, so that pytest's collections at exit skip them (11 s at 50,000 items)."""
    from pytest_karenina.plugin.run.heap import SETTLE_FROM_ITEMS
    from tests.support import fault_matrix

    fault_matrix.script(openai_server, None)
    path = fault_matrix.write_checkpoint(pytester.path / "large.jsonld", SETTLE_FROM_ITEMS)
    results = pytester.path / "results.json"
    pytester.makeconftest(
        """
import gc

def pytest_sessionstart(session):
    if not hasattr(session.config, "workerinput"):
        print(f"frozen at start: {gc.get_freeze_count()}")

def pytest_unconfigure(config):
    if not hasattr(config, "workerinput"):
        print(f"frozen at the end: {gc.get_freeze_count()}")
"""
    )
    args = fault_matrix.pytest_args(openai_server, path, results)

    result = pytester.runpytest(*args, "--karenina-workers", "2", "-s")

    assert result.ret == pytest.ExitCode.TESTS_FAILED  # every tenth question is answered wrong
    text = result.stdout.str()
    start = int(text.split("frozen at start: ")[1].split()[0])
    end = int(text.split("frozen at the end: ")[1].split()[0])
    assert end > start + SETTLE_FROM_ITEMS
