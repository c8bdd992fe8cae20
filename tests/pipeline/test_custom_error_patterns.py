"""``custom_error_patterns``: the user's rules classify a failed call before the built-in ones,
so a provider error that would fail at once can be retried (and the other way round)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_karenina.checkpoint import Benchmark, Question
from pytest_karenina.config.model import ErrorPatternConfig
from pytest_karenina.config.verification import VerificationConfig
from pytest_karenina.llm.errors import classify_error
from pytest_karenina.pipeline.run import run_verification
from pytest_karenina.results import VerificationResult
from tests.pipeline.pipeline_helpers import ANSWER, CLASSIC
from tests.support.openai_server import Fault, OpenAIServer

QUESTION = Question(id="q1", text="What is the capital of France?", raw_answer="Paris",
                    template_code=CLASSIC, finished=True)  # fmt: skip
FAST = {"max_attempts": 2, "backoff_min": 0.01, "backoff_max": 0.02}


def run(server: OpenAIServer, **options: Any) -> VerificationResult:
    base = {"interface": "openai_endpoint", "endpoint_base_url": server.base_url}
    config = VerificationConfig(
        answering_models=[{**base, "id": "answerer", "model_name": "answer-model"}],
        parsing_models=[{**base, "id": "judge", "model_name": "judge-model"}],
        retry_policy={"rate_limit": FAST, "server_error": FAST},
        **options,
    )
    (result,) = run_verification(Benchmark(name="b", questions=[QUESTION]), config).results
    return result


def script(server: OpenAIServer) -> None:
    """The answering model's first reply is an HTTP 400 saying its queue is full."""
    server.script(Fault.http_error(400, "model queue is full, try later"), model="answer-model")
    server.add_rule(ANSWER, model="answer-model")
    server.add_rule({"capital": "Paris"}, model="judge-model")


def answer_calls(server: OpenAIServer) -> int:
    return sum(1 for request in server.chat_requests if request.model == "answer-model")


def test_a_message_pattern_makes_a_client_error_retried(openai_server: OpenAIServer) -> None:
    script(openai_server)

    result = run(openai_server, custom_error_patterns=[
        {"pattern": "Queue Is Full", "category": "rate_limit"}
    ])  # fmt: skip

    assert result.metadata.error is None
    assert result.verify_result is True
    assert answer_calls(openai_server) == 2
    assert (result.metadata.retry_counts or {})["rate_limit"]["used"] == 1


def test_without_a_pattern_the_same_error_is_not_retried(openai_server: OpenAIServer) -> None:
    script(openai_server)

    result = run(openai_server)

    assert "client_error error, not retried" in (result.metadata.error or "")
    assert answer_calls(openai_server) == 1


def test_a_type_name_pattern_picks_the_category(openai_server: OpenAIServer) -> None:
    script(openai_server)

    result = run(openai_server, custom_error_patterns=[
        {"pattern": "EndpointHTTPError", "category": "server_error", "match_type": "type_name"}
    ])  # fmt: skip

    assert result.verify_result is True
    assert (result.metadata.retry_counts or {})["server_error"]["used"] == 1


class QueueFull(ConnectionError):
    pass


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (ErrorPatternConfig(pattern="queue full", category="permanent"), "permanent"),
        (
            ErrorPatternConfig(pattern="QueueFull", category="timeout", match_type="type_name"),
            "timeout",
        ),
        # Type names match exactly, not along the class hierarchy (as in Karenina).
        (
            ErrorPatternConfig(
                pattern="ConnectionError", category="permanent", match_type="type_name"
            ),
            "connection",
        ),
    ],
)
def test_user_rules_come_before_the_built_in_ones(
    pattern: ErrorPatternConfig, expected: str
) -> None:
    assert classify_error(QueueFull("Queue Full"), [pattern]) == expected
