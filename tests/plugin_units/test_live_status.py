"""The status line of long runs on a terminal."""

from __future__ import annotations

from typing import Any, cast

from pytest_karenina.plugin.run.live_status import INTERVAL, LiveStatus, PipelineCounts, status_line


class FakeReporter:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def write_line(self, line: str) -> None:
        self.lines.append(line)


class FakeConfig:
    def __init__(self, reporter: FakeReporter, verbosity: int = 0) -> None:
        self.reporter, self.verbosity = reporter, verbosity

    @property
    def pluginmanager(self) -> Any:
        return self

    def get_plugin(self, name: str) -> Any:
        return self.reporter if name == "terminalreporter" else None

    def get_verbosity(self) -> int:
        return self.verbosity


def counts(queued: int, running: int, done: int) -> PipelineCounts:
    found = PipelineCounts()
    found.queued, found.running, found.done = queued, running, done
    return found


def test_the_line_counts_pipelines_and_estimates_the_rest() -> None:
    line = status_line(counts(348, 32, 120), passed=97, reported=118, elapsed=60.0)

    # 380 left at 2 per second: 190 s.
    assert line == (
        "karenina: 120 done, 32 in flight, 348 queued; pass rate 82.2% of 118; ETA 0:03:10"
    )
    assert status_line(counts(5, 0, 0), 0, 0, 1.0) == "karenina: 0 done, 0 in flight, 5 queued"


def test_a_line_at_most_every_interval_and_only_on_a_terminal() -> None:
    now = [0.0]
    reporter = FakeReporter()
    config = cast(Any, FakeConfig(reporter))
    live = LiveStatus(config, counts(1, 1, 1), lambda: (1, 1), lambda: now[0], terminal=True)

    live.tick()
    now[0] = INTERVAL + 1
    live.tick()
    live.tick()

    assert len(reporter.lines) == 1 and reporter.lines[0].startswith("karenina: 1 done")
    quiet = LiveStatus(cast(Any, FakeConfig(reporter, -1)), counts(1, 1, 1), lambda: (0, 0),
                       lambda: now[0] * 10, terminal=True)  # fmt: skip
    piped = LiveStatus(config, counts(1, 1, 1), lambda: (0, 0), lambda: now[0] * 10,
                       terminal=False)  # fmt: skip
    now[0] = 100 * INTERVAL
    quiet.tick()
    piped.tick()
    assert len(reporter.lines) == 1
