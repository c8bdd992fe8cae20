"""The fixture checkpoints end to end in template_only mode (rubric modes:
test_rubric_checkpoints.py)."""

from __future__ import annotations

import pytest

from pytest_karenina.results import VerificationResult, VerificationResultSet
from tests.e2e.cases import CHECKPOINT_CASES, EXPLICIT_IDS, MQ, MULTI, checkpoint
from tests.e2e.scripting import (
    AI_HEADER,
    ANSWER_USAGE,
    CHECK_USAGE,
    MODEL_NAME,
    PARSE_USAGE,
    CallLog,
    Case,
    expected_usage,
    make_config,
    run,
    script,
    script_abstention,
)
from tests.support.openai_server import OpenAIServer

CHECKPOINTS = sorted(CHECKPOINT_CASES)


def check_template_result(case: Case, result: VerificationResult, mode: str) -> None:
    """The verdict, parse, failure, usage and bookkeeping of one scripted template run."""
    meta, template = result.metadata, result.template
    assert template is not None
    assert result.verify_result is case.passes
    assert template.template_verification_performed is True
    assert template.parsed_llm_response == case.parsed
    assert template.raw_llm_response == AI_HEADER + case.answer
    assert meta.completed_without_errors is True and meta.error is None
    if case.passes:
        assert meta.failure is None
    else:
        assert meta.failure is not None
        failure = (meta.failure.category, meta.failure.stage, meta.failure.group)
        assert failure == ("content", "verify_template", "content")
    assert meta.evaluation_mode == mode
    assert meta.retry_counts is None and meta.caveats == []
    assert meta.warnings == []
    assert template.usage_metadata == expected_usage(
        answer_generation=ANSWER_USAGE, parsing=PARSE_USAGE
    )
    assert (meta.answering.interface, meta.answering.model_name) == ("openai_endpoint", MODEL_NAME)
    assert result.rubric is None


@pytest.mark.parametrize("name", CHECKPOINTS)
def test_template_only_gives_the_scripted_verdicts(openai_server: OpenAIServer, name: str) -> None:
    mode = "template_only"
    cases = CHECKPOINT_CASES[name]
    script(openai_server, cases)
    log = CallLog()

    results = run(
        checkpoint(name),
        make_config(openai_server, evaluation_mode=mode),
        log,
        question_ids=EXPLICIT_IDS.get(name),
    )

    assert [r.metadata.question_id for r in results] == [c.question_id for c in cases]
    for case, result in zip(cases, results, strict=True):
        check_template_result(case, result, mode)
        assert log.kinds(case.question_id) == {"answer_generation": 1, "parsing": 1}
    requests = openai_server.chat_requests
    assert len(requests) == len(log) == 2 * len(cases)
    assert sum(r.structured for r in requests) == len(cases)
    assert {r.model for r in requests} == {MODEL_NAME}
    assert {r.headers.get("authorization") for r in requests} == {"Bearer <redacted>"}


def test_unfinished_questions_are_not_run_by_default(openai_server: OpenAIServer) -> None:
    log = CallLog()
    results = run(checkpoint("minimal.jsonld"), make_config(openai_server), log)

    assert len(results) == 0
    assert len(log) == 0 and openai_server.requests == []


REFUSAL = Case(f"{MQ}2", "three primary colors", "I cannot answer that question.", {}, False)


def run_with_abstention(
    server: OpenAIServer, log: CallLog
) -> tuple[list[Case], VerificationResultSet]:
    """The multi-question checkpoint with abstention on, mq002's answer being a refusal."""
    cases = [
        REFUSAL if c.question_id == REFUSAL.question_id else c for c in CHECKPOINT_CASES[MULTI]
    ]
    for case in cases:
        script_abstention(server, case.answer, detected=case is REFUSAL)
    script(server, cases)
    return cases, run(checkpoint(MULTI), make_config(server, abstention_enabled=True), log)


def test_abstention_check_fails_the_refusal_and_skips_its_parse(
    openai_server: OpenAIServer,
) -> None:
    log = CallLog()
    cases, results = run_with_abstention(openai_server, log)

    for case, result in zip(cases, results, strict=True):
        template, failure = result.template, result.metadata.failure
        assert template is not None and template.abstention_check_performed is True
        if case is REFUSAL:
            assert result.verify_result is False
            assert template.abstention_detected is True
            assert template.abstention_override_applied is True
            assert template.parsed_llm_response is None
            assert failure is not None
            assert (failure.category, failure.group) == ("abstention", "abstained")
            assert log.kinds(case.question_id) == {"answer_generation": 1, "abstention_check": 1}
            usage = expected_usage(answer_generation=ANSWER_USAGE, abstention_check=CHECK_USAGE)
        else:
            assert result.verify_result is case.passes
            assert template.abstention_detected is False
            assert template.abstention_override_applied is False
            assert template.parsed_llm_response == case.parsed
            kinds = ("answer_generation", "abstention_check", "parsing")
            assert log.kinds(case.question_id) == dict.fromkeys(kinds, 1)
            usage = expected_usage(
                answer_generation=ANSWER_USAGE, abstention_check=CHECK_USAGE, parsing=PARSE_USAGE
            )
        assert template.usage_metadata == usage  # every stage entry names the judge
    assert len(openai_server.chat_requests) == len(log) == 3 * len(cases) - 1
