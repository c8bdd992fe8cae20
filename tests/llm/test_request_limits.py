"""Request-rate limits and the total time budget of one call (issue: rate limits and retries)."""

from __future__ import annotations

import threading

import pytest

from pytest_karenina.config.model import CategoryRetryConfig, RetryPolicy
from pytest_karenina.llm.limits import RateLimiter
from pytest_karenina.llm.ports import ModelReply, ModelRequest
from pytest_karenina.llm.transport import RetryingModel, TransportError
from tests.llm import fakes
from tests.llm.fakes import FakeClock, ScriptedModel, req


def unique_key(name: str) -> str:
    # The pace registry is process-wide: every test uses keys of its own.
    return f"{name}-{threading.get_ident()}-{id(object())}"


def test_starts_are_spaced_by_sixty_seconds_over_the_rate() -> None:
    clock = FakeClock()
    limiter = RateLimiter(30, clock=clock, sleep=clock.sleep)
    key = unique_key("spacing")
    waits = [limiter.wait_turn(key) for _ in range(4)]
    assert waits == [0.0, 2.0, 2.0, 2.0]  # 30 a minute: one every 2 s


def test_a_fractional_share_of_a_limit_is_honoured() -> None:
    clock = FakeClock()
    limiter = RateLimiter(7.5, clock=clock, sleep=clock.sleep)  # 30 a minute over 4 workers
    key = unique_key("fraction")
    limiter.wait_turn(key)
    assert limiter.wait_turn(key) == pytest.approx(8.0)


def test_idle_time_is_not_saved_up_for_a_burst() -> None:
    clock = FakeClock()
    limiter = RateLimiter(60, clock=clock, sleep=clock.sleep)
    key = unique_key("idle")
    limiter.wait_turn(key)
    clock.advance(30.0)
    assert [limiter.wait_turn(key) for _ in range(3)] == [0.0, 1.0, 1.0]


def test_limiters_with_the_same_key_and_rate_share_one_pace() -> None:
    clock = FakeClock()
    key = unique_key("shared")
    first = RateLimiter(60, clock=clock, sleep=clock.sleep)
    second = RateLimiter(60, clock=clock, sleep=clock.sleep)
    assert (first.wait_turn(key), second.wait_turn(key)) == (0.0, 1.0)
    assert RateLimiter(None).wait_turn(key) == 0.0
    with pytest.raises(ValueError, match="requests_per_minute"):
        RateLimiter(0)


def test_threads_never_start_closer_than_the_interval() -> None:
    clock_lock = threading.Lock()
    clock = FakeClock()

    def sleep(seconds: float) -> None:  # virtual time: record only
        with clock_lock:
            clock.sleeps.append(seconds)

    limiter = RateLimiter(120, clock=clock, sleep=sleep)
    key = unique_key("threads")
    threads = [threading.Thread(target=limiter.wait_turn, args=(key,)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(clock.sleeps) == [0.5 * n for n in range(1, 8)]


def test_every_attempt_waits_its_turn() -> None:
    clock = FakeClock()
    inner = ScriptedModel(fakes.server_error(), fakes.server_error(), "ok")
    policy = RetryPolicy(server_error=CategoryRetryConfig(max_attempts=3, backoff_min=0.0,
                                                          backoff_max=0.0))  # fmt: skip
    model = RetryingModel(
        inner, policy, rate_limiter=RateLimiter(6, clock=clock, sleep=clock.sleep),
        limiter_key=unique_key("attempts"), sleep=clock.sleep, clock=clock,
    )  # fmt: skip
    assert model.invoke(req()).text == "ok"
    assert [wait for wait in clock.sleeps if wait] == [10.0, 10.0]  # 6 a minute


def test_the_call_budget_cuts_an_attempt_short_and_stops_retrying() -> None:
    clock = FakeClock()
    seen: list[float | None] = []

    class Slow(ScriptedModel):
        enforces_timeout = True

        def invoke(self, request: ModelRequest) -> ModelReply:
            seen.append(request.timeout)
            clock.advance(request.timeout or 0)
            raise fakes.api_timeout()

    policy = RetryPolicy(timeout=CategoryRetryConfig(max_attempts=5, backoff_min=1.0,
                                                     backoff_max=1.0))  # fmt: skip
    model = RetryingModel(
        Slow(), policy, timeout=30.0, max_total_seconds=45.0, sleep=clock.sleep, clock=clock
    )
    with pytest.raises(TransportError, match="time budget of 45s") as caught:
        model.invoke(req())
    assert seen == [30.0, 14.0]  # the second attempt only gets what is left (45 - 30 - 1)
    assert caught.value.error_class == "timeout"
