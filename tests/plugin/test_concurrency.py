"""Pipelines overlap: within one process, and within each xdist worker (peak in-flight calls)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.e2e.cases import CHECKPOINT_CASES
from tests.e2e.scripting import Case
from tests.plugin.plugin_helpers import MULTI, copy_checkpoint, endpoint_args, scripted, use_key
from tests.support.openai_server import OpenAIServer


class InFlight:
    """Answers slowly and remembers the most answering calls open at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = self.peak = 0

    def answer(self, case: Case) -> Callable[[dict[str, Any]], str]:
        def reply(body: dict[str, Any]) -> str:
            with self.lock:
                self.now += 1
                self.peak = max(self.peak, self.now)
            time.sleep(0.4)  # long enough for the other pipelines to get here too
            with self.lock:
                self.now -= 1
            return case.answer

        return reply


@pytest.mark.parametrize(("dist", "expected"), [([], 4), (["-n", "2"], 4)], ids=["one", "xdist"])
def test_every_answer_is_in_flight_at_once(
    pytester: pytest.Pytester, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch,
    dist: list[str], expected: int,
) -> None:  # fmt: skip
    use_key(monkeypatch)
    tracker = InFlight()
    for case in CHECKPOINT_CASES[MULTI]:
        openai_server.add_rule(tracker.answer(case), last_contains=case.asks, structured=False)
    scripted(openai_server)
    path = copy_checkpoint(pytester)
    result = pytester.runpytest_subprocess("--karenina", str(path), *endpoint_args(openai_server),
                                           *dist)  # fmt: skip
    result.assert_outcomes(passed=2, failed=2, skipped=1)
    # 4 items: all 4 answers open together, also when 2 workers hold 2 items each.
    assert tracker.peak == expected


def test_concurrency_one_runs_pipelines_one_by_one(
    pytester: pytest.Pytester, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_key(monkeypatch)
    tracker = InFlight()
    for case in CHECKPOINT_CASES[MULTI]:
        openai_server.add_rule(tracker.answer(case), last_contains=case.asks, structured=False)
    scripted(openai_server)
    path = copy_checkpoint(pytester)
    args = endpoint_args(openai_server, "--karenina-concurrency", "1")
    pytester.runpytest_subprocess("--karenina", str(path), *args).assert_outcomes(
        passed=2, failed=2, skipped=1
    )
    assert tracker.peak == 1
