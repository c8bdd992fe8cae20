"""ParseTemplate and VerifyTemplate per template mode (seed stages 7 and 8; spec 2.6, 5.5):
which modes call the judge, what the regex checks see, and the verification fields.
"""

from __future__ import annotations

import pytest

from tests.pipeline.pipeline_helpers import (
    ANSWER,
    CLASSIC,
    CLASSIC_WITH_REGEX,
    REGEX_ONLY,
    TRACE_ONLY,
    VERIFIED_ANY_OF,
)
from tests.support.fake_llm import FakeLLM, fake_config, question, request_text, run_one

PENICILLIN = "Penicillin was discovered in 1928 by Alexander Fleming."
PARIS = {"capital": "Paris"}


# --- templates that need no judge ----------------------------------------------------


def test_regex_only_template_makes_no_judge_call() -> None:
    config = fake_config()
    fake = FakeLLM().answer(PENICILLIN)
    result = run_one(question(REGEX_ONLY), config, fake)
    assert fake.kinds() == ["answer_generation"]
    fake.assert_all_scripted()
    template = result.template
    assert template is not None
    assert template.verify_result is True
    assert template.template_verification_performed is True
    assert template.regex_validations_performed is True
    # The header check passes only because regex runs on the raw trace (spec 2.6).
    assert template.regex_validation_results == {"ai_header": True, "year": True}
    assert template.regex_overall_success is True
    assert template.regex_extraction_results == {
        "ai_header": ["--- AI Message ---"],
        "year": ["1928"],
    }
    assert template.usage_metadata is not None
    assert "parsing" not in template.usage_metadata
    assert result.metadata.failure is None


def test_regex_only_template_fails_on_a_non_matching_trace() -> None:
    config = fake_config()
    fake = FakeLLM().answer("Penicillin was discovered in 1929.")
    result = run_one(question(REGEX_ONLY), config, fake)
    assert fake.kinds() == ["answer_generation"]
    template = result.template
    assert template is not None
    assert template.verify_result is False
    assert template.regex_validation_results == {"ai_header": True, "year": False}
    assert template.regex_validation_details is not None
    assert template.regex_validation_details["year"]["failure_reason"]
    assert result.metadata.failure is not None
    assert result.metadata.failure.category == "content"


def test_manual_trace_has_no_ai_header() -> None:
    # A manual string trace is used as-is, without the "--- AI Message ---" header.
    config = fake_config("manual")
    fake = FakeLLM().answer(PENICILLIN)
    result = run_one(question(REGEX_ONLY), config, fake)
    assert result.template is not None
    assert result.template.raw_llm_response == PENICILLIN
    assert result.template.regex_validation_results == {"ai_header": False, "year": True}
    assert result.verify_result is False


@pytest.mark.parametrize(
    ("answer", "verdict", "year"),
    [(PENICILLIN, True, True), ("Fleming found it in the late twenties.", False, False)],
)
def test_trace_only_template_makes_no_judge_call(answer: str, verdict: bool, year: bool) -> None:
    config = fake_config()
    fake = FakeLLM().answer(answer)
    result = run_one(question(TRACE_ONLY), config, fake)
    assert fake.kinds() == ["answer_generation"]
    fake.assert_all_scripted()
    template = result.template
    assert template is not None
    assert template.verify_result is verdict
    assert template.field_results == {"has_header": True, "mentions_year": year}
    assert template.field_scores == {"has_header": 1.0, "mentions_year": float(year)}
    assert template.verify_granular_result == (1.0 if year else 0.5)


# --- VerifiedField templates ---------------------------------------------------------


def test_verified_field_template_fields_strategy_and_granular_score() -> None:
    config = fake_config()
    fake = FakeLLM().answer("Lyon, on the Seine.").parse_as({"capital": "Lyon", "river": "Seine"})
    result = run_one(question(VERIFIED_ANY_OF), config, fake)
    assert fake.kinds() == ["answer_generation", "parsing"]
    template = result.template
    assert template is not None
    # AnyOf: the river alone passes the item.
    assert template.verify_result is True
    assert template.field_results == {"capital": False, "river": True}
    assert template.field_scores == {"capital": 0.0, "river": 1.0}
    assert template.composition_strategy == "any_of"
    # AnyOf granular: max contribution / total weight = 1 / (3 + 1).
    assert template.verify_granular_result == pytest.approx(0.25)
    assert template.parsed_gt_response == {"capital": "Paris", "river": "Seine"}
    assert template.parsed_llm_response == {"capital": "Lyon", "river": "Seine"}


def test_verified_field_null_from_the_judge_counts_as_unanswered() -> None:
    config = fake_config()
    fake = FakeLLM().answer("Lyon.").parse_as({"capital": "Lyon", "river": None})
    result = run_one(question(VERIFIED_ANY_OF), config, fake)
    template = result.template
    assert template is not None
    assert template.field_results == {"capital": False, "river": None}
    assert template.verify_result is False
    assert template.verify_granular_result == 0.0


# --- classic templates ---------------------------------------------------------------


def test_classic_template_without_regex() -> None:
    config = fake_config()
    fake = FakeLLM().answer(ANSWER).parse_as(PARIS)
    result = run_one(question(CLASSIC), config, fake)
    template = result.template
    assert template is not None
    assert template.verify_result is True
    assert template.template_verification_performed is True
    assert template.regex_validations_performed is False
    assert template.regex_validation_results == {}
    assert template.regex_validation_details == {}
    assert template.regex_overall_success is True
    assert template.regex_extraction_results == {}
    # No VerifiedFields and no verify_granular(): no per-field data, no granular score.
    assert template.field_results is None
    assert template.composition_strategy is None
    assert template.verify_granular_result is None
    assert template.field_verification_error is None
    assert template.parsed_gt_response == PARIS
    assert template.parsed_llm_response == PARIS


@pytest.mark.parametrize(
    ("answer", "parsed", "verdict", "regex_ok"),
    [
        (ANSWER, "Paris", True, True),
        (ANSWER, "Lyon", False, True),  # fields fail
        ("The capital of France is Lyon.", "Paris", False, False),  # regex fails
    ],
    ids=["both-pass", "field-fails", "regex-fails"],
)
def test_classic_verdict_is_field_and_regex(
    answer: str, parsed: str, verdict: bool, regex_ok: bool
) -> None:
    config = fake_config()
    fake = FakeLLM().answer(answer).parse_as({"capital": parsed})
    result = run_one(question(CLASSIC_WITH_REGEX), config, fake)
    template = result.template
    assert template is not None
    assert template.verify_result is verdict
    assert template.regex_validations_performed is True
    assert template.regex_overall_success is regex_ok
    assert template.regex_validation_results == {"names_paris": regex_ok}


# --- what the judge reads ------------------------------------------------------------


def test_judge_reads_the_final_ai_message_by_default() -> None:
    config = fake_config()
    fake = FakeLLM().answer(ANSWER).parse_as(PARIS)
    result = run_one(question(CLASSIC), config, fake)
    (request,) = fake.calls("parsing")
    text = request_text(request)
    assert ANSWER in text
    assert "--- AI Message ---" not in text
    assert result.used_full_trace is False
    assert result.evaluation_input is None


def test_judge_reads_the_full_trace_when_configured() -> None:
    config = fake_config(use_full_trace_for_template=True)
    fake = FakeLLM().answer(ANSWER).parse_as(PARIS)
    result = run_one(question(CLASSIC), config, fake)
    (request,) = fake.calls("parsing")
    assert f"--- AI Message ---\n{ANSWER}" in request_text(request)
    assert result.used_full_trace is True
    assert result.evaluation_input == f"--- AI Message ---\n{ANSWER}"
