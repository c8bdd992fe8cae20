"""The CPU-bound line's decision (CPU against wall time of each run loop) and the value of
``--karenina-workers``."""

from __future__ import annotations

import pytest

from pytest_karenina.plugin.options.workers import WORKERS, worker_count
from pytest_karenina.plugin.report.cpu_bound import (
    BUSY_SHARE,
    MIN_LOOP_SECONDS,
    LoopUse,
    cpu_bound_line,
)


def test_one_busy_process_on_two_cores_names_the_idle_core() -> None:
    line = cpu_bound_line([LoopUse(cpu_seconds=41.2, wall_seconds=42.5)], cores=2)

    assert line == (
        "CPU-bound: the run loop kept 97% of one core busy (41.2 s of CPU in 42.5 s); "
        "--karenina-workers 2 would use the 1 idle core"
    )


def test_idle_cores_are_counted_in_the_plural() -> None:
    line = cpu_bound_line([LoopUse(30.0, 30.0)], cores=8)

    assert line is not None and line.endswith("--karenina-workers 8 would use the 7 idle cores")


def test_a_run_waiting_on_the_network_is_not_cpu_bound() -> None:
    assert cpu_bound_line([LoopUse(cpu_seconds=12.0, wall_seconds=60.0)], cores=2) is None


def test_the_share_threshold_is_inclusive() -> None:
    wall = 50.0
    assert cpu_bound_line([LoopUse(BUSY_SHARE * wall, wall)], cores=2) is not None
    assert cpu_bound_line([LoopUse(BUSY_SHARE * wall - 0.5, wall)], cores=2) is None


def test_a_short_run_says_nothing() -> None:
    short = MIN_LOOP_SECONDS - 0.1
    assert cpu_bound_line([LoopUse(short, short)], cores=4) is None


def test_xdist_workers_are_averaged_and_the_rest_of_the_cores_named() -> None:
    loops = [LoopUse(19.0, 20.0), LoopUse(17.0, 20.0)]

    line = cpu_bound_line(loops, cores=4)

    assert line == (
        "CPU-bound: each of 2 workers kept 90% of one core busy (36.0 s of CPU in 20.0 s); "
        "--karenina-workers 4 would use the 2 idle cores"
    )


def test_with_every_core_busy_the_line_suggests_nothing_more() -> None:
    line = cpu_bound_line([LoopUse(19.0, 20.0), LoopUse(19.0, 20.0)], cores=2)

    assert line is not None and line.endswith("; every usable core ran a process (2)")
    assert "--karenina-workers" not in line


def test_no_measured_loop_says_nothing() -> None:
    assert cpu_bound_line([], cores=2) is None
    assert cpu_bound_line([LoopUse(0.0, 0.0)], cores=2) is None


@pytest.mark.parametrize(
    ("value", "cores", "expected"),
    [("auto", 4, 4), ("AUTO ", 2, 2), ("auto", 1, 0), ("3", 2, 3), (" 2", 8, 2), ("1", 8, 0),
     ("0", 8, 0)],
)  # fmt: skip
def test_worker_counts(value: str, cores: int, expected: int) -> None:
    assert worker_count(WORKERS, value, cores) == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [("many", "expected a number, got 'many'"), ("-1", "must be >= 0, got '-1'"),
     ("1.5", "expected a number, got '1.5'")],
)  # fmt: skip
def test_bad_worker_counts_name_the_option(value: str, message: str) -> None:
    with pytest.raises(pytest.UsageError, match=f"^--karenina-workers: {message}"):
        worker_count(WORKERS, value, 2)
