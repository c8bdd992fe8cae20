"""RetryingModel's per-attempt timeout and escalation, and the ConcurrencyLimiter."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import pytest

from pytest_karenina.config.model import (
    CategoryRetryConfig,
    RetryPolicy,
    TimeoutEscalationConfig,
)
from pytest_karenina.llm.limits import ConcurrencyLimiter
from pytest_karenina.llm.ports import ModelReply, ModelRequest
from pytest_karenina.llm.transport import (
    RetryEvent,
    RetryingModel,
    TransportError,
)
from tests.llm import fakes
from tests.llm.fakes import FakeClock, ScriptedModel, join_threads, req


def retrying(inner: Any, clock: FakeClock, **kw: Any) -> tuple[RetryingModel, list[RetryEvent]]:
    events: list[RetryEvent] = []
    model = RetryingModel(
        inner, kw.pop("policy", None), sleep=clock.sleep, clock=clock, on_retry=events.append, **kw
    )
    return model, events


class Blocking:
    """A RawModel whose calls block until ``release`` is set; counts calls in flight."""

    def __init__(self, reply: str = "ok") -> None:
        self.release = threading.Event()
        self.cond = threading.Condition()
        self.in_flight = self.max_in_flight = self.finished = 0
        self.reply = reply

    @property
    def replay_identity(self) -> dict[str, Any]:
        return {"adapter": "blocking", "model": "b"}

    def invoke(self, request: ModelRequest) -> ModelReply:
        with self.cond:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.cond.notify_all()
        assert self.release.wait(timeout=30), "test never released the call"  # deadlock guard
        with self.cond:
            self.in_flight -= 1
            self.finished += 1
            self.cond.notify_all()
        return ModelReply(self.reply)


def test_attempt_timeout_fails_as_timeout_and_is_retried() -> None:
    inner = Blocking()
    policy = RetryPolicy(timeout=CategoryRetryConfig(max_attempts=1, backoff_min=0, backoff_max=0))
    clock = FakeClock()
    model, events = retrying(inner, clock, policy=policy, timeout=0.05)
    try:
        with pytest.raises(TransportError) as caught:
            model.invoke(req())
    finally:
        inner.release.set()
        join_threads("karenina-llm-call")

    assert caught.value.error_class == "timeout" and caught.value.attempts == 2
    assert "request timeout" in str(caught.value)
    assert [e.error_class for e in events] == ["timeout", "timeout"]
    assert inner.finished == 2  # abandoned calls still ran to their end


def test_timed_attempt_returns_replies_and_raises_errors() -> None:
    clock = FakeClock()
    model, events = retrying(ScriptedModel(fakes.rate_limit("2"), "ok"), clock, timeout=30.0)

    assert model.invoke(req()).text == "ok"

    assert clock.sleeps == [2.0] and [e.error_class for e in events] == ["rate_limit"]
    join_threads("karenina-llm-call")


@pytest.mark.parametrize(
    ("escalation", "expected"),
    [
        (None, [10.0, 10.0, 10.0]),
        (TimeoutEscalationConfig(strategy="additive", increment=5), [10.0, 15.0, 20.0]),
        (TimeoutEscalationConfig(strategy="additive", increment=5, max_timeout=12), [10, 12, 12]),
        (TimeoutEscalationConfig(strategy="multiplicative", multiplier=2), [10.0, 20.0, 40.0]),
        (TimeoutEscalationConfig(strategy="linear", max_timeout=40), [10.0, 20.0, 30.0]),
    ],
)
def test_timeout_escalation(escalation: Any, expected: list[float]) -> None:
    policy = RetryPolicy(timeout_escalation=escalation)  # timeout budget 3
    model = RetryingModel(ScriptedModel("x"), policy, timeout=10.0)
    assert [model.attempt_timeout(n) for n in range(3)] == expected
    assert RetryingModel(ScriptedModel("x"), policy).attempt_timeout(2) is None


def run_threads(count: int, target: Any) -> list[threading.Thread]:
    threads = [threading.Thread(target=target, name=f"limiter-test-{i}") for i in range(count)]
    for thread in threads:
        thread.start()
    return threads


@pytest.mark.parametrize("timeout", [None, 30.0], ids=["direct", "timed"])
def test_limiter_caps_concurrency(timeout: float | None) -> None:
    inner = Blocking()
    limiter = ConcurrencyLimiter(2)
    model = RetryingModel(inner, limiter=limiter, limiter_key=f"k-{uuid.uuid4()}", timeout=timeout)
    replies: list[str] = []
    threads = run_threads(8, lambda: replies.append(model.invoke(req()).text))
    try:
        with inner.cond:  # two calls get in, the other six wait for a slot
            assert inner.cond.wait_for(lambda: inner.in_flight == 2, timeout=30)
    finally:
        inner.release.set()
        join_threads("limiter-test-", threads)
        join_threads("karenina-llm-call")

    assert inner.max_in_flight == 2
    assert replies == ["ok"] * 8


def test_limiter_registry_is_shared_per_key_and_limit() -> None:
    key = f"k-{uuid.uuid4()}"
    a, b = ConcurrencyLimiter(3), ConcurrencyLimiter(3)
    assert a.semaphore(key) is b.semaphore(key)
    assert a.semaphore(key) is not a.semaphore(key + "-other")
    assert ConcurrencyLimiter(None).semaphore(key) is None
    with ConcurrencyLimiter(None).acquire(key):
        pass
    with pytest.raises(ValueError, match="max_concurrent_requests"):
        ConcurrencyLimiter(0)


def test_limiter_acquire_holds_a_slot() -> None:
    key = f"k-{uuid.uuid4()}"
    limiter = ConcurrencyLimiter(1)
    semaphore = limiter.semaphore(key)
    assert semaphore is not None
    with limiter.acquire(key):
        assert not semaphore.acquire(blocking=False)
    assert semaphore.acquire(blocking=False)
    semaphore.release()


def test_retrying_model_rejects_a_bad_timeout() -> None:
    with pytest.raises(ValueError, match="timeout"):
        RetryingModel(ScriptedModel("x"), timeout=0)


class SelfTimed:
    """A RawModel that enforces ``request.timeout`` itself; records what it was given."""

    enforces_timeout = True

    def __init__(self, *outcomes: Exception | str) -> None:
        self.outcomes = list(outcomes)
        self.timeouts: list[float | None] = []
        self.threads: list[str] = []

    @property
    def replay_identity(self) -> dict[str, Any]:
        return {"adapter": "self-timed", "model": "s"}

    def invoke(self, request: ModelRequest) -> ModelReply:
        self.timeouts.append(request.timeout)
        self.threads.append(threading.current_thread().name)
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return ModelReply(outcome)


def test_adapter_enforcing_timeouts_gets_the_escalated_limit_in_the_calling_thread() -> None:
    inner = SelfTimed(TimeoutError("slow"), TimeoutError("slow"), "done")
    policy = RetryPolicy(
        timeout=CategoryRetryConfig(max_attempts=2, backoff_min=0, backoff_max=0),
        timeout_escalation=TimeoutEscalationConfig(strategy="additive", increment=5),
    )
    model, events = retrying(inner, FakeClock(), policy=policy, timeout=10.0)

    assert model.invoke(req()).text == "done"

    assert inner.timeouts == [10.0, 15.0, 20.0]
    assert set(inner.threads) == {threading.current_thread().name}  # no watchdog thread
    assert [e.error_class for e in events] == ["timeout", "timeout"]


def test_without_a_timeout_the_request_carries_none() -> None:
    inner = SelfTimed("done")
    model, _ = retrying(inner, FakeClock())
    assert model.invoke(req()).text == "done" and inner.timeouts == [None]


def test_prepare_runs_outside_the_attempt_timeout() -> None:
    class SlowToBuild(ScriptedModel):
        built = 0

        def prepare(self) -> None:
            if not self.built:
                threading.Event().wait(0.2)  # e.g. importing a provider SDK
            self.built += 1

    inner = SlowToBuild("ok")
    model, events = retrying(inner, FakeClock(), timeout=0.1)
    assert model.invoke(req()).text == "ok"
    assert events == [] and inner.built == 1
    join_threads("karenina-llm-call")
