"""RetryingModel (retries, back-off, budgets, timeout, redaction) and ConcurrencyLimiter."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from pytest_karenina.config.model import (
    CategoryRetryConfig,
    RetryPolicy,
)
from pytest_karenina.llm.ports import LLMCallError, RawModel
from pytest_karenina.llm.transport import (
    RetryEvent,
    RetryingModel,
    TransportError,
    backoff_seconds,
)
from tests.llm import fakes
from tests.llm.fakes import BoundsRng, FakeClock, ScriptedModel, req


def retrying(inner: Any, clock: FakeClock, **kw: Any) -> tuple[RetryingModel, list[RetryEvent]]:
    events: list[RetryEvent] = []
    model = RetryingModel(
        inner, kw.pop("policy", None), sleep=clock.sleep, clock=clock, on_retry=events.append, **kw
    )
    return model, events


def test_success_needs_no_retry() -> None:
    clock = FakeClock()
    model, events = retrying(ScriptedModel("4"), clock)

    assert model.invoke(req()).text == "4"
    assert clock.sleeps == [] and events == []


def test_rate_limit_honours_retry_after() -> None:
    clock = FakeClock()
    inner = ScriptedModel(fakes.rate_limit("7"), "4")
    model, events = retrying(inner, clock)

    assert model.invoke(req(question_id="q1")).text == "4"

    assert clock.sleeps == [7.0]
    assert len(inner.calls) == 2
    [event] = events
    assert (event.error_class, event.used, event.budget, event.attempt) == ("rate_limit", 1, 5, 1)
    assert event.will_retry and event.question_id == "q1"


def test_retry_after_is_capped_by_the_max_wait() -> None:
    clock = FakeClock()
    model, _ = retrying(ScriptedModel(fakes.rate_limit("3600"), "ok"), clock)

    model.invoke(req())

    assert clock.sleeps == [30.0]  # rate_limit backoff_max


def test_server_errors_back_off_exponentially_with_jitter() -> None:
    clock, rng = FakeClock(), BoundsRng()
    policy = RetryPolicy(
        server_error=CategoryRetryConfig(max_attempts=4, backoff_min=2, backoff_max=15)
    )
    model, _ = retrying(
        ScriptedModel(*[fakes.server_error(503)] * 4, "ok"), clock, policy=policy, rng=rng
    )

    assert model.invoke(req()).text == "ok"

    assert rng.bounds == [(2, 4), (2, 8), (2, 15), (2, 15)]
    for (low, high), slept in zip(rng.bounds, clock.sleeps, strict=True):
        assert low <= slept <= high


def test_timeouts_back_off_within_bounds() -> None:
    clock, rng = FakeClock(), BoundsRng()
    model, events = retrying(
        ScriptedModel(fakes.api_timeout(), fakes.api_timeout(), "ok"), clock, rng=rng
    )

    assert model.invoke(req()).text == "ok"

    assert rng.bounds == [(5, 10), (5, 20)]
    assert all(5 <= s <= 20 for s in clock.sleeps) and len(clock.sleeps) == 2
    assert [e.used for e in events] == [1, 2]


def test_backoff_seconds_never_leaves_its_bounds() -> None:
    config = CategoryRetryConfig(
        max_attempts=9, backoff_min=1, backoff_max=10, backoff_multiplier=3
    )
    rng = BoundsRng()
    waits = [backoff_seconds(config, retry, rng) for retry in range(1, 9)]
    assert all(1 <= w <= 10 for w in waits)
    assert rng.bounds[:3] == [(1, 3), (1, 9), (1, 10)]


def test_categories_have_separate_budgets() -> None:
    clock = FakeClock()
    inner = ScriptedModel(
        fakes.connection_error(), fakes.rate_limit("1"), fakes.connection_error(), "ok"
    )
    model, events = retrying(inner, clock)

    assert model.invoke(req()).text == "ok"

    assert [(e.error_class, e.used) for e in events] == [
        ("connection", 1),
        ("rate_limit", 1),
        ("connection", 2),
    ]


def test_budget_exhaustion_raises_with_counts() -> None:
    clock = FakeClock()
    inner = ScriptedModel(fakes.server_error(502))
    model, events = retrying(inner, clock)

    with pytest.raises(TransportError) as caught:
        model.invoke(req(call_kind="parsing"))

    err = caught.value
    assert len(inner.calls) == 3  # 1 call + 2 retries (server_error budget)
    assert err.call_kind == "parsing" and err.error_class == "server_error" and err.attempts == 3
    assert err.retry_counts == {
        "connection": {"used": 0, "budget": 3},
        "timeout": {"used": 0, "budget": 3},
        "rate_limit": {"used": 0, "budget": 5},
        "server_error": {"used": 2, "budget": 2},
    }
    assert "server_error error, gave up after 3 attempts" in str(err)
    assert "retry budget of 2 exhausted" in str(err) and "InternalServerError" in str(err)
    assert [e.will_retry for e in events] == [True, True, False]
    assert isinstance(err, LLMCallError)


def test_never_retries_forever() -> None:
    clock = FakeClock()
    inner = ScriptedModel(fakes.rate_limit())
    model, _ = retrying(inner, clock)

    with pytest.raises(TransportError):
        model.invoke(req())

    assert len(inner.calls) == 6  # 1 + rate_limit budget of 5


def test_zero_budget_means_no_retry() -> None:
    clock = FakeClock()
    policy = RetryPolicy(rate_limit=CategoryRetryConfig(max_attempts=0))
    inner = ScriptedModel(fakes.rate_limit("1"), "ok")
    model, _ = retrying(inner, clock, policy=policy)

    with pytest.raises(TransportError) as caught:
        model.invoke(req())

    assert len(inner.calls) == 1
    assert caught.value.retry_counts["rate_limit"] == {"used": 0, "budget": 0}


def test_total_time_budget_stops_retrying() -> None:
    clock = FakeClock()
    inner = ScriptedModel(fakes.rate_limit("20"), on_call=lambda: clock.advance(4.0))
    model, _ = retrying(inner, clock, max_total_seconds=40.0)

    with pytest.raises(TransportError) as caught:
        model.invoke(req())

    # t=4 fail, 4 + 20 <= 40: wait -> t=28 fail, 28 + 20 > 40: give up
    assert clock.sleeps == [20.0] and len(inner.calls) == 2
    assert "time budget of 40s exhausted" in str(caught.value)
    assert caught.value.retry_counts["rate_limit"]["used"] == 1


@pytest.mark.parametrize(
    "exc",
    [
        fakes.status_error(
            openai.AuthenticationError, 401, f"Incorrect API key provided: {fakes.CANARY}"
        ),
        fakes.status_error(openai.PermissionDeniedError, 403, f"key {fakes.CANARY} lacks access"),
    ],
    ids=["401", "403"],
)
def test_auth_errors_fail_at_once_and_are_redacted(exc: Exception) -> None:
    clock = FakeClock()
    inner = ScriptedModel(exc, "never")
    model, events = retrying(inner, clock, secrets=[fakes.CANARY])

    with pytest.raises(TransportError) as caught:
        model.invoke(req())

    err = caught.value
    assert len(inner.calls) == 1 and clock.sleeps == [] and events == []
    assert err.error_class == "auth" and "auth error, not retried" in str(err)
    assert fakes.CANARY not in str(err) and fakes.CANARY not in err.reason
    assert "***" in str(err)
    assert err.__cause__ is None and err.__suppress_context__  # the raw exception is not chained


def test_canary_in_environment_is_redacted_without_being_passed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secret = "plain-env-secret-4242"  # no credential shape: only the env lookup can catch it
    monkeypatch.setenv("SOME_PROVIDER_API_KEY", secret)
    model, _ = retrying(ScriptedModel(fakes.server_error(500)), FakeClock())
    model.inner.script = [RuntimeError(f"HTTP 500 for key {secret}")]  # type: ignore[attr-defined]

    with pytest.raises(TransportError) as caught:
        model.invoke(req())

    assert secret not in str(caught.value)


@pytest.mark.parametrize(
    "exc",
    [
        fakes.status_error(openai.BadRequestError, 400),
        fakes.status_error(openai.NotFoundError, 404),
        ValueError("not retryable"),
    ],
    ids=["400", "404", "permanent"],
)
def test_client_and_permanent_errors_fail_at_once(exc: Exception) -> None:
    clock = FakeClock()
    inner = ScriptedModel(exc, "never")
    model, _ = retrying(inner, clock)

    with pytest.raises(TransportError) as caught:
        model.invoke(req())

    assert len(inner.calls) == 1 and clock.sleeps == []
    assert caught.value.attempts == 1
    assert all(v["used"] == 0 for v in caught.value.retry_counts.values())


def test_llm_call_errors_from_inner_propagate_unchanged() -> None:
    original = LLMCallError("answer_generation", "manual answers missing")
    model, _ = retrying(ScriptedModel(original), FakeClock())

    with pytest.raises(LLMCallError) as caught:
        model.invoke(req())

    assert caught.value is original


def test_identity_is_the_inner_identity() -> None:
    inner = ScriptedModel("x", identity={"adapter": "a", "model": "m", "temperature": 0.5})
    model: RawModel = RetryingModel(inner)  # mypy checks the protocol here
    assert isinstance(model, RetryingModel)
    assert model.replay_identity == inner.replay_identity
    assert model.limiter_key == "a::m:"
