"""Pipelines overlap: within one process, and within each xdist worker (peak in-flight calls)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from tests.e2e.cases import CHECKPOINT_CASES
from tests.e2e.scripting import Case
from tests.plugin.plugin_helpers import MULTI, copy_checkpoint, endpoint_args, scripted
from tests.support.openai_server import OpenAIServer


class InFlight:
    """Holds each answering call until ``gather`` calls are open at once (or ``patience``
    seconds pass) and remembers the most that were open together.

    Waiting for the others instead of sleeping a fixed time keeps the cross-process check
    independent of how far apart the xdist workers start on a loaded machine; a run whose
    pipelines do not overlap still ends, after ``patience`` per call, with a low peak. With
    ``quorum``, the ``patience`` clock starts only once ``quorum`` calls were open together
    (a call waits up to ``QUORUM_WAIT`` seconds for that): the peak then reaches ``quorum``
    however late a worker starts, and ``patience`` is the window in which more would show.
    """

    QUORUM_WAIT = 30.0

    def __init__(self, gather: int, patience: float, quorum: int | None = None) -> None:
        self.gather, self.patience, self.quorum = gather, patience, quorum
        self.opened = threading.Condition()
        self.now = self.peak = 0

    @classmethod
    def scripted(
        cls, server: OpenAIServer, gather: int, patience: float, quorum: int | None = None
    ) -> InFlight:
        """A tracker answering the multi-question cases on ``server`` (judge rules too)."""
        tracker = cls(gather, patience, quorum)
        for case in CHECKPOINT_CASES[MULTI]:
            server.add_rule(tracker.answer(case), last_contains=case.asks, structured=False)
        scripted(server)
        return tracker

    def answer(self, case: Case) -> Callable[[dict[str, Any]], str]:
        def reply(body: dict[str, Any]) -> str:
            with self.opened:
                self.now += 1
                self.peak = max(self.peak, self.now)
                self.opened.notify_all()
                if self.quorum is not None:
                    quorum = self.quorum
                    self.opened.wait_for(lambda: self.peak >= quorum, timeout=self.QUORUM_WAIT)
                self.opened.wait_for(lambda: self.peak >= self.gather, timeout=self.patience)
                self.now -= 1
            return case.answer

        return reply


def test_every_answer_is_in_flight_at_once(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    tracker = InFlight.scripted(openai_server, gather=4, patience=60.0)
    path = copy_checkpoint(pytester)
    result = pytester.runpytest("--karenina", str(path), *endpoint_args(openai_server), *dist)
    result.assert_outcomes(passed=2, failed=2, skipped=1)
    # 4 items: all 4 answers open together, also when 2 workers hold 2 items each.
    assert tracker.peak == 4


def test_concurrency_one_runs_pipelines_one_by_one(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    # Each answer waits up to 0.4 s for a second one that never comes when runs are serial.
    tracker = InFlight.scripted(openai_server, gather=2, patience=0.4)
    path = copy_checkpoint(pytester)
    args = endpoint_args(openai_server, "--karenina-concurrency", "1")
    pytester.runpytest("--karenina", str(path), *args).assert_outcomes(
        passed=2, failed=2, skipped=1
    )
    assert tracker.peak == 1


def test_max_concurrent_requests_caps_the_whole_run(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    # Answers wait until 2 are open together, then up to 1.5 s more for all 4, which a cap
    # of 2 never allows: with -n 2 each worker gets 1 of the 2 slots, so the provider never
    # sees more than 2, and sees 2 however far apart the workers start.
    tracker = InFlight.scripted(openai_server, gather=4, patience=1.5, quorum=2)
    path = copy_checkpoint(pytester)
    args = endpoint_args(openai_server, "--karenina-max-concurrent-requests", "2")
    result = pytester.runpytest("--karenina", str(path), *args, *dist)
    result.assert_outcomes(passed=2, failed=2, skipped=1)
    assert tracker.peak == 2
