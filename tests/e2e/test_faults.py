"""Transport faults over real HTTP: transient errors are retried within bounds and
counted in ``metadata.retry_counts``; other client errors fail their item at once."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_karenina.config.model import CategoryRetryConfig, RetryPolicy
from pytest_karenina.results import VerificationResult, VerificationResultSet
from tests.e2e.cases import CHECKPOINT_CASES, MQ, MULTI, checkpoint
from tests.e2e.scripting import API_KEY, CallLog, Case, make_config, run, script
from tests.support.openai_server import Fault, OpenAIServer

CASES = CHECKPOINT_CASES[MULTI]
BY_ID = {case.question_id: case for case in CASES}
PASSING = f"{MQ}1"
OTHER_PASSING = f"{MQ}3"

FAST = CategoryRetryConfig(max_attempts=2, backoff_min=0.0, backoff_max=0.01)
"""Retries without real back-off waits, so the suite stays fast."""
FAST_POLICY = RetryPolicy(connection=FAST, timeout=FAST, rate_limit=FAST, server_error=FAST)


def answer_fault(server: OpenAIServer, case: Case, *faults: Fault) -> None:
    """``faults`` answer the case's answering call, once each in order (add before its rule)."""
    server.script(*faults, last_contains=case.asks, structured=False)


def parse_fault(server: OpenAIServer, case: Case, *faults: Fault) -> None:
    """``faults`` answer the case's parsing call, once each in order (add before its rule)."""
    server.script(*faults, contains=case.answer, structured=True)


def verify(server: OpenAIServer, log: CallLog, **options: Any) -> VerificationResultSet:
    return run(checkpoint(MULTI), make_config(server, **options), log)


def by_id(results: VerificationResultSet) -> dict[str, VerificationResult]:
    return {r.metadata.question_id: r for r in results}


def assert_untouched(result: VerificationResult, log: CallLog) -> None:
    """A result no fault touched: the scripted verdict, no retries, two requests."""
    case = BY_ID[result.metadata.question_id]
    assert result.verify_result is case.passes
    assert result.metadata.completed_without_errors is True
    assert result.metadata.retry_counts is None
    assert "retries_used" not in result.metadata.caveats
    assert log.kinds(case.question_id) == {"answer_generation": 1, "parsing": 1}


def test_rate_limit_with_retry_after_then_success_passes(openai_server: OpenAIServer) -> None:
    """The default policy's 5 s back-off is replaced by the server's Retry-After of 0.01 s."""
    answer_fault(openai_server, BY_ID[PASSING], Fault.rate_limit(retry_after=0.01))
    script(openai_server, CASES)
    log = CallLog()

    results = by_id(verify(openai_server, log))

    retried = results.pop(PASSING)
    assert retried.verify_result is True
    assert retried.metadata.failure is None and retried.metadata.error is None
    assert retried.metadata.retry_counts == {"rate_limit": {"used": 1, "budget": 5}}
    assert retried.metadata.caveats == ["retries_used"]
    assert log.kinds(PASSING) == {"answer_generation": 2, "parsing": 1}
    assert [r.fault for r in openai_server.chat_requests].count("http_error") == 1
    for result in results.values():
        assert_untouched(result, log)
    assert openai_server.unused_rules() == []


@pytest.mark.parametrize("status", [500, 503])
def test_server_error_then_success_passes(openai_server: OpenAIServer, status: int) -> None:
    parse_fault(openai_server, BY_ID[PASSING], Fault.server_error(status))
    script(openai_server, CASES)
    log = CallLog()

    results = by_id(verify(openai_server, log, retry_policy=FAST_POLICY))

    retried = results.pop(PASSING)
    assert retried.verify_result is True and retried.metadata.failure is None
    assert retried.metadata.retry_counts == {"server_error": {"used": 1, "budget": 2}}
    assert retried.metadata.caveats == ["retries_used"]
    assert retried.template is not None
    assert retried.template.parsed_llm_response == BY_ID[PASSING].parsed
    assert log.kinds(PASSING) == {"answer_generation": 1, "parsing": 2}
    for result in results.values():
        assert_untouched(result, log)
    assert openai_server.unused_rules() == []


def test_timeout_then_success_passes(openai_server: OpenAIServer) -> None:
    """A request the server never answers times out on the client and is retried."""
    answer_fault(openai_server, BY_ID[PASSING], Fault.timeout(seconds=30))
    script(openai_server, CASES)
    log = CallLog()
    model_timeout = {"request_timeout": 0.25}

    results = by_id(verify(openai_server, log, retry_policy=FAST_POLICY, **model_timeout))

    retried = results.pop(PASSING)
    assert retried.verify_result is True and retried.metadata.failure is None
    assert retried.metadata.retry_counts == {"timeout": {"used": 1, "budget": 2}}
    assert log.kinds(PASSING) == {"answer_generation": 2, "parsing": 1}
    for result in results.values():
        assert_untouched(result, log)
    assert openai_server.unused_rules() == []


def test_retries_are_bounded_then_the_item_fails_as_retry_group(
    openai_server: OpenAIServer,
) -> None:
    case = BY_ID[PASSING]
    openai_server.add_rule(Fault.server_error(502), last_contains=case.asks, structured=False)
    script(openai_server, CASES)
    log = CallLog()

    results = by_id(verify(openai_server, log, retry_policy=FAST_POLICY))

    failed = results.pop(PASSING)
    assert failed.verify_result is None
    assert failed.metadata.completed_without_errors is False
    assert failed.metadata.failure is not None
    assert (failed.metadata.failure.category, failed.metadata.failure.group) == (
        "server_error",
        "retry",
    )
    assert failed.metadata.retry_counts == {"server_error": {"used": 2, "budget": 2}}
    assert log.kinds(PASSING) == {"answer_generation": 3}  # first call + 2 retries, no parse
    for result in results.values():
        assert_untouched(result, log)
    assert openai_server.unused_rules() == []


@pytest.mark.parametrize(
    ("status", "call", "category"),
    [
        (401, "answer_generation", "unexpected_error"),
        (403, "answer_generation", "unexpected_error"),
        (400, "parsing", "parsing"),
        (404, "parsing", "parsing"),
        (422, "answer_generation", "unexpected_error"),
    ],
)
def test_client_errors_fail_their_item_at_once(
    openai_server: OpenAIServer, status: int, call: str, category: str
) -> None:
    case = BY_ID[OTHER_PASSING]
    fault = Fault.http_error(status, f"injected {status}")
    if call == "answer_generation":
        openai_server.add_rule(fault, last_contains=case.asks, structured=False)
    else:
        openai_server.add_rule(fault, contains=case.answer, structured=True)
    script(openai_server, CASES)
    log = CallLog()

    results = by_id(verify(openai_server, log, retry_policy=FAST_POLICY))

    failed = results.pop(OTHER_PASSING)
    meta = failed.metadata
    assert failed.verify_result is None
    assert meta.completed_without_errors is False
    assert meta.error is not None and f"HTTP {status}" in meta.error
    assert "not retried" in meta.error and API_KEY not in meta.error
    assert meta.failure is not None and meta.failure.category == category
    assert meta.failure.group == "system"
    assert meta.retry_counts is None and meta.caveats == []
    assert log.kinds(OTHER_PASSING)[call] == 1  # one request, never retried
    assert sum(log.kinds(OTHER_PASSING).values()) == (1 if call == "answer_generation" else 2)
    assert [r.fault for r in openai_server.chat_requests].count("http_error") == 1
    for result in results.values():
        assert_untouched(result, log)
    assert openai_server.unused_rules() == []
