"""Failure classification (spec 5.7, with our sufficiency and parsing fixes), caveats, warnings."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_karenina.results import (
    CATEGORY_GROUPS,
    Failure,
    cap_warnings,
    classify_failure,
    collect_caveats,
)
from pytest_karenina.results.classify import template_error

EXHAUSTED = {"timeout": {"used": 3, "budget": 3}}

# (id, classify_failure kwargs, expected (category, stage, group) or None)
RULES: list[tuple[str, dict[str, Any], tuple[str, str, str] | None]] = [
    ("pass", {"template_verification_performed": True, "verify_result": True}, None),
    ("nothing ran", {}, None),
    (
        "recursion limit",
        {"failed_stage": "RecursionLimitAutoFail"},
        ("recursion_limit", "RecursionLimitAutoFail", "autofail"),
    ),
    (
        "trace validation",
        {"failed_stage": "TraceValidationAutoFail"},
        ("trace_validation", "TraceValidationAutoFail", "autofail"),
    ),
    (
        "deep judgment",
        {"failed_stage": "DeepJudgmentAutoFail"},
        ("deep_judgment", "DeepJudgmentAutoFail", "autofail"),
    ),
    (
        "deep judgment rubric",
        {"failed_stage": "DeepJudgmentRubricAutoFail"},
        ("deep_judgment_rubric", "DeepJudgmentRubricAutoFail", "autofail"),
    ),
    (
        "placeholder retry",
        {"failed_stage": "PlaceholderRetryAutoFail"},
        ("connection", "PlaceholderRetryAutoFail", "retry"),
    ),
    ("unknown failed stage", {"failed_stage": "MyCustomStage"}, None),
    (
        "content",
        {"template_verification_performed": True, "verify_result": False},
        ("content", "verify_template", "content"),
    ),
    ("false verdict without verification", {"verify_result": False}, None),
    (
        "retries exhausted",
        {
            "error": "read timed out",
            "error_stage": "GenerateAnswer",
            "error_category": "timeout",
            "retry_counts": EXHAUSTED,
        },
        ("timeout", "GenerateAnswer", "retry"),
    ),
    (
        "retries exhausted, stage from last stage",
        {"error_category": "rate_limit", "retry_counts": {"rate_limit": {"used": 5, "budget": 5}}}
        | {"last_stage": "ParseTemplate"},
        ("rate_limit", "ParseTemplate", "retry"),
    ),
    (
        "retries left means plain error",
        {
            "error": "boom",
            "error_stage": "GenerateAnswer",
            "error_category": "server_error",
            "retry_counts": {"server_error": {"used": 1, "budget": 2}},
        },
        ("unexpected_error", "GenerateAnswer", "system"),
    ),
    (
        "permanent errors are not retry failures",
        {"error": "bad key", "error_category": "permanent", "retry_counts": EXHAUSTED},
        ("unexpected_error", "unknown", "system"),
    ),
    (
        "abstention",
        {"abstention_detected": True, "abstention_reasoning": "  refused  "},
        ("abstention", "abstention_check", "abstained"),
    ),
    (
        "insufficient",
        {"sufficiency_detected": False},
        ("sufficiency", "sufficiency_check", "abstained"),
    ),
    (
        "sufficient is not a failure",
        {"sufficiency_detected": True, "template_verification_performed": True}
        | {"verify_result": True},
        None,
    ),
    ("sufficiency not checked", {"sufficiency_detected": None}, None),
    (
        "template validation",
        {"template_validation_error": "no verify()", "error": "Template validation failed"},
        ("template_validation", "validate_template", "system"),
    ),
    (
        "parse error, CamelCase stage",
        {"error": "Parsing failed: bad JSON", "error_stage": "ParseTemplate"},
        ("parsing", "ParseTemplate", "system"),
    ),
    (
        "parse error, snake_case stage",
        {"error": "Parsing failed", "error_stage": "parse_template"},
        ("parsing", "parse_template", "system"),
    ),
    (
        "agentic parse error",
        {"error": "agent gave up", "error_stage": "AgenticParseTemplate"},
        ("parsing", "AgenticParseTemplate", "system"),
    ),
    (
        "unexpected error",
        {"error": "Stage RubricEvaluation raised", "error_stage": "RubricEvaluation"},
        ("unexpected_error", "RubricEvaluation", "system"),
    ),
]


@pytest.mark.parametrize(("kwargs", "expected"), [r[1:] for r in RULES], ids=[r[0] for r in RULES])
def test_rule(kwargs: dict[str, Any], expected: tuple[str, str, str] | None) -> None:
    failure = classify_failure(**kwargs)
    if expected is None:
        assert failure is None
    else:
        assert failure is not None
        assert (failure.category, failure.stage, failure.group) == expected


PRECEDENCE: list[tuple[str, dict[str, Any], str]] = [
    (
        "autofail beats content",
        {"failed_stage": "RecursionLimitAutoFail", "template_verification_performed": True}
        | {"verify_result": False},
        "recursion_limit",
    ),
    (
        "content beats retry exhaustion",
        {"template_verification_performed": True, "verify_result": False}
        | {"error": "t", "error_category": "timeout", "retry_counts": EXHAUSTED},
        "content",
    ),
    (
        "retry exhaustion beats abstention",
        {"error": "t", "error_category": "timeout", "retry_counts": EXHAUSTED}
        | {"abstention_detected": True},
        "timeout",
    ),
    (
        "abstention beats insufficiency",
        {"abstention_detected": True, "sufficiency_detected": False},
        "abstention",
    ),
    (
        "insufficiency beats template validation",
        {"sufficiency_detected": False, "template_validation_error": "bad"},
        "sufficiency",
    ),
    (
        "template validation beats parsing",
        {"template_validation_error": "bad", "error": "e", "error_stage": "ParseTemplate"},
        "template_validation",
    ),
    (
        "parsing beats the catch-all",
        {"error": "e", "error_stage": "ParseTemplate", "last_stage": "FinalizeResult"},
        "parsing",
    ),
]


@pytest.mark.parametrize(
    ("kwargs", "category"), [p[1:] for p in PRECEDENCE], ids=[p[0] for p in PRECEDENCE]
)
def test_first_match_wins(kwargs: dict[str, Any], category: str) -> None:
    failure = classify_failure(**kwargs)
    assert failure is not None and failure.category == category


def test_reasons() -> None:
    def reason(**kwargs: Any) -> str:
        failure = classify_failure(**kwargs)
        assert failure is not None
        return failure.reason

    assert reason(failed_stage="DeepJudgmentAutoFail") == "auto-fail at stage DeepJudgmentAutoFail"
    assert reason(template_verification_performed=True, verify_result=False) == (
        "verify_template returned False"
    )
    assert reason(error="x", error_category="timeout", retry_counts=EXHAUSTED) == (
        "timeout retries exhausted"
    )
    assert reason(abstention_detected=True, abstention_reasoning=" no ") == "no"
    assert reason(abstention_detected=True) == "model abstained"
    assert reason(sufficiency_detected=False) == "insufficient response"
    assert reason(sufficiency_detected=False, sufficiency_reasoning="vague") == "vague"
    assert reason(error="x" * 600) == "x" * 500
    assert reason(template_validation_error="y" * 600) == "y" * 500


def test_details_keep_the_full_error_and_retry_counts() -> None:
    failure = classify_failure(error="slow", error_category="timeout", retry_counts=EXHAUSTED)
    assert failure is not None
    assert failure.details == {"error_message": "slow", "retry_counts": EXHAUSTED}

    long_error = "e" * 800
    failure = classify_failure(error=long_error, error_stage="RubricEvaluation")
    assert failure is not None and failure.error_message == long_error

    content = classify_failure(
        template_verification_performed=True, verify_result=False, error="rubric crashed"
    )
    assert content is not None and content.details == {"error_message": "rubric crashed"}
    assert classify_failure(template_verification_performed=True, verify_result=False) == Failure(
        category="content", stage="verify_template", reason="verify_template returned False"
    )

    invalid = classify_failure(template_validation_error="z" * 600)
    assert invalid is not None and invalid.details == {"template_validation_error": "z" * 600}


def test_every_category_has_a_group() -> None:
    assert set(CATEGORY_GROUPS.values()) == {"content", "autofail", "retry", "abstained", "system"}
    assert len(CATEGORY_GROUPS) == 14


def test_caveats_in_order() -> None:
    assert collect_caveats() == []
    assert collect_caveats(
        response_timeout_partial=True,
        embedding_override_applied=True,
        parse_decision_malformed=True,
        retry_counts={"timeout": {"used": 1, "budget": 3}},
    ) == ["partial_content", "embedding_override", "parse_decision_malformed", "retries_used"]
    assert collect_caveats(retry_counts={"timeout": {"used": 0, "budget": 3}}) == []


def test_warnings_are_capped() -> None:
    assert cap_warnings(["a", "b"]) == ["a", "b"]
    capped = cap_warnings(str(i) for i in range(53))
    assert len(capped) == 51
    assert capped[-1] == "... 3 more warnings truncated"
    assert cap_warnings(["a", "b", "c"], limit=2) == ["a", "b", "... 1 more warnings truncated"]


def test_the_stage_that_changed_the_verdict_and_its_reason_name_the_failure() -> None:
    """Rule 2 names the last stage that changed ``verify_result`` (a custom stage) with its
    reason; rule 1 takes the auto-fail stage's own reason; VerifyTemplate stays Karenina's."""
    content = {"template_verification_performed": True, "verify_result": False}
    reasons = {"ToxicityCheck": "score 0.93", "DeepJudgmentAutoFail": "deep judgment: x"}

    def named(**kwargs: Any) -> tuple[str, str]:
        failure = classify_failure(stage_reasons=reasons, **kwargs)
        assert failure is not None
        return failure.stage, failure.reason

    assert named(deciding_stage="ToxicityCheck", **content) == (
        "ToxicityCheck", "ToxicityCheck: score 0.93",
    )  # fmt: skip
    assert named(deciding_stage="LengthCheck", **content) == (
        "LengthCheck", "LengthCheck set verify_result to False",
    )  # fmt: skip
    assert named(deciding_stage="VerifyTemplate", **content) == (
        "verify_template", "verify_template returned False",
    )  # fmt: skip
    assert named(failed_stage="DeepJudgmentAutoFail", deciding_stage="ToxicityCheck") == (
        "DeepJudgmentAutoFail", "deep judgment: x",
    )  # fmt: skip


def test_a_template_error_comes_from_its_warning_or_from_field_verification_error() -> None:
    warned = "template error: verify() raised KeyError: 'x' (template line 7)"
    assert template_error(["other", warned, "template error: later"], "ignored") == warned
    # Karenina's results carry no warning: what verify() raised, without a line.
    assert template_error([], "Field verification failed: 'Answer' has no\n 'elemnt'") == (
        "template error: verify() raised 'Answer' has no 'elemnt'"
    )
    assert template_error(["deep judgment: no quote"], None) is None
