"""A failing answering call records its exception's type, message and traceback (seed 000,
stage 2 GenerateAnswer: "Captures exception details"), in ``metadata.failure.details``,
with the model's secrets redacted."""

from __future__ import annotations

from pydantic import SecretStr

from pytest_karenina.pipeline.context import VerificationContext
from tests.pipeline.pipeline_helpers import CLASSIC
from tests.support.fake_llm import FakeLLM, answering_model, fake_config, question, run_one

CANARY = "sk-canary-answer-5d1e2f3a4b"
PARIS = {"capital": "Paris"}


def test_the_failure_details_hold_type_message_and_traceback() -> None:
    config = fake_config()
    fake = FakeLLM().fail("answer_generation", RuntimeError("model exploded")).parse_as(PARIS)

    result = run_one(question(CLASSIC), config, fake)

    failure = result.metadata.failure
    assert failure is not None and failure.stage == "GenerateAnswer"
    details = failure.details or {}
    assert details["exception_type"] == "TransportError"
    assert "RuntimeError: model exploded" in details["exception_message"]
    trace = details["traceback"]
    assert trace.startswith("Traceback (most recent call last):")
    assert "generate_answer.py" in trace
    assert trace.rstrip().endswith(f"TransportError: {details['exception_message']}")
    # The seed's own error field is unchanged; the details survive an export.
    assert details["error_message"] == result.metadata.error


class LeakyPort:
    """An answering port whose error quotes the model's API key (no transport redacts it)."""

    def chat(self, messages: object, *, call_kind: str) -> object:
        raise ValueError(f"the provider rejected key {CANARY}")


def test_secrets_never_reach_the_error_or_its_details() -> None:
    config = fake_config(answering_models=[answering_model(endpoint_api_key=SecretStr(CANARY))])

    def leaky(context: VerificationContext) -> None:
        context.answering_llm = LeakyPort()  # type: ignore[assignment]

    result = run_one(question(CLASSIC), config, FakeLLM(), prepare=leaky)

    failure = result.metadata.failure
    assert failure is not None
    details = failure.details or {}
    assert details["exception_type"] == "ValueError"
    assert "rejected key ***" in details["exception_message"]
    assert "ValueError: the provider rejected key ***" in details["traceback"]
    assert CANARY not in result.model_dump_json()
