"""The fixture checkpoints end to end in the rubric modes, over HTTP to the test server.

Every fixture trait kind the checkpoints hold is exercised: LLM score and boolean traits
(with_rubrics, one batch call), regex traits (with_rubrics, and with_results' empty pattern
that matches everything) and callable traits, none of which can load: multi_question's and
with_results' have no code, with_rubrics' hold base64 Python *source* instead of a pickle
(spec 1.8). Those must be recorded trait errors, never silently dropped.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_karenina.results import VerificationResult
from tests.e2e.cases import CHECKPOINT_CASES, EXPLICIT_IDS, MULTI, RQ, checkpoint
from tests.e2e.scripting import (
    ANSWER_USAGE,
    PARSE_USAGE,
    RUBRIC_USAGE,
    CallLog,
    Case,
    comparable,
    expected_usage,
    make_config,
    run,
    script,
    script_rubric,
)
from tests.support.openai_server import OpenAIServer

CHECKPOINTS = sorted(CHECKPOINT_CASES)
NO_CODE = "callable trait: the trait has no callable_code"
SOURCE = "callable trait: callable_code holds Python source text"
WITH_RUBRICS = "with_rubrics.jsonld"

# What the judge says about each with_rubrics answer (Clarity and Completeness are 1-5).
JUDGE_SCORES: dict[str, dict[str, Any]] = {
    f"{RQ}1": {"Clarity": 5, "Accuracy": True, "Completeness": 3},
    f"{RQ}2": {"Clarity": 9, "Accuracy": False, "Completeness": 2},  # 9 is clamped to 5
    f"{RQ}3": {"Clarity": 4, "Accuracy": False},  # Completeness missing from the reply
}
# The rubric sections we expect: llm scores, regex scores, trait errors (prefixes).
EXPECTED: dict[str, tuple[dict[str, Any] | None, dict[str, bool] | None, dict[str, str]]] = {
    "urn:karenina:test:mq001": (None, None, {"Completeness": NO_CODE}),
    "urn:karenina:test:mq002": (None, None, {"Completeness": NO_CODE}),
    "urn:karenina:test:mq003": (None, None, {"Completeness": NO_CODE}),
    "urn:karenina:test:mq004": (
        None, None, {"Completeness": NO_CODE, "Case Sensitivity": NO_CODE}
    ),
    "urn:karenina:test:q002": (None, {"Citations": True}, {"Conciseness": NO_CODE}),
    f"{RQ}1": (
        {"Clarity": 5, "Accuracy": True, "Completeness": 3},
        {"HasCitations": False, "HasNumbers": True},  # "BCL2" holds a digit
        {"ContainsCitations": SOURCE, "ResponseLength": SOURCE},
    ),
    f"{RQ}2": (
        {"Clarity": 5, "Accuracy": False, "Completeness": 2},
        {"HasCitations": False, "HasNumbers": True},
        {"ContainsCitations": SOURCE, "ResponseLength": SOURCE},
    ),
    f"{RQ}3": (
        {"Clarity": 4, "Accuracy": False},
        {"HasCitations": False, "HasNumbers": False},
        {
            "ContainsCitations": SOURCE,
            "ResponseLength": SOURCE,
            "Completeness": "missing from the judge's reply",
        },
    ),
}  # fmt: skip


def script_rubrics(server: OpenAIServer, cases: list[Case]) -> None:
    for case in cases:
        if case.question_id in JUDGE_SCORES:
            reply = {"scores": JUDGE_SCORES[case.question_id], "reasoning": {"Clarity": "Plain."}}
            script_rubric(server, reply, contains=case.answer, schema="TraitScoresReply")


def check_rubric(result: VerificationResult) -> None:
    rubric = result.rubric
    if result.metadata.question_id == "urn:karenina:test:q001":
        assert rubric is None  # minimal.jsonld has no rubric at all
        return
    llm, regex, errors = EXPECTED[result.metadata.question_id]
    assert rubric is not None
    assert rubric.llm_trait_scores == llm
    assert rubric.regex_trait_scores == regex
    assert rubric.callable_trait_scores is None
    assert set(rubric.trait_errors or {}) == set(errors)
    for name, prefix in errors.items():
        assert (rubric.trait_errors or {})[name].startswith(prefix), name
    assert rubric.rubric_evaluation_performed is True  # the stage ran (seed 001), values or not
    assert rubric.rubric_evaluation_strategy == "batch"
    assert set(rubric.trait_provenance or {}) == set(llm or {}) | set(regex or {}) | set(errors)
    assert set((rubric.trait_provenance or {}).values()) <= {"global", "question_specific"}
    warnings = result.metadata.warnings
    assert any("rubric traits without a value" in w for w in warnings)
    if llm is not None:
        assert rubric.llm_trait_reasoning == {"Clarity": "Plain."}
    if result.metadata.question_id == f"{RQ}2":
        assert any("score 9 is outside 1-5 and was clamped to 5" in w for w in warnings)


def rubric_usage(result: VerificationResult) -> dict[str, Any]:
    calls = RUBRIC_USAGE if result.metadata.question_id in JUDGE_SCORES else None
    return {"rubric_evaluation": calls} if calls else {}


@pytest.mark.parametrize("name", CHECKPOINTS)
def test_rubric_only_answers_and_grades_but_never_parses(
    openai_server: OpenAIServer, name: str
) -> None:
    cases = CHECKPOINT_CASES[name]
    script_rubrics(openai_server, cases)
    script(openai_server, cases)
    log = CallLog()

    results = run(
        checkpoint(name),
        make_config(openai_server, evaluation_mode="rubric_only"),
        log,
        question_ids=EXPLICIT_IDS.get(name),
    )

    assert [r.metadata.question_id for r in results] == [c.question_id for c in cases]
    for case, result in zip(cases, results, strict=True):
        template = result.template
        assert template is not None and result.verify_result is None
        assert template.template_verification_performed is False
        assert template.parsed_llm_response is None
        assert result.metadata.failure is None and result.metadata.completed_without_errors
        check_rubric(result)
        assert template.usage_metadata == expected_usage(
            answer_generation=ANSWER_USAGE, **rubric_usage(result)
        )
        rubric_calls = {"rubric_evaluation": 1} if case.question_id in JUDGE_SCORES else {}
        assert log.kinds(case.question_id) == {"answer_generation": 1, **rubric_calls}


def test_template_and_rubric_adds_the_rubric_and_changes_no_template_field(
    openai_server: OpenAIServer,
) -> None:
    """Rubric scores never change the template verdict (spec 4.10): a template_and_rubric
    run equals the template_only run except for the mode, the rubric section, its
    warnings and its token usage."""
    cases = CHECKPOINT_CASES[WITH_RUBRICS] + CHECKPOINT_CASES[MULTI]
    script_rubrics(openai_server, cases)
    script(openai_server, cases)
    for name in (WITH_RUBRICS, MULTI):
        only = run(checkpoint(name), make_config(openai_server), CallLog())
        both = run(
            checkpoint(name),
            make_config(openai_server, evaluation_mode="template_and_rubric"),
            CallLog(),
        )
        for left, right in zip(only, both, strict=True):
            check_rubric(right)
            plain, graded = comparable(left), comparable(right)
            assert plain["metadata"].pop("evaluation_mode") == "template_only"
            assert graded["metadata"].pop("evaluation_mode") == "template_and_rubric"
            assert plain["metadata"].pop("warnings") == []
            assert graded["metadata"].pop("warnings") == right.metadata.warnings != []
            assert plain.pop("rubric") is None and graded.pop("rubric") is not None
            usage = expected_usage(answer_generation=ANSWER_USAGE, parsing=PARSE_USAGE)
            assert plain["template"].pop("usage_metadata") == usage
            assert graded["template"].pop("usage_metadata") == expected_usage(
                answer_generation=ANSWER_USAGE, parsing=PARSE_USAGE, **rubric_usage(right)
            )
            assert plain == graded
