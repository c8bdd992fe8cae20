"""The result models carry every field of seed 001 and spec 5.6 and round-trip through JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from pytest_karenina.results import (
    Failure,
    ModelIdentity,
    VerificationResult,
    VerificationResultDeepJudgment,
    VerificationResultDeepJudgmentRubric,
    VerificationResultRubric,
    VerificationResultTemplate,
)
from tests.results.builders import GPT4O, metadata, result

# Seed 001 field -> (type, default); REQUIRED marks fields without a default.
REQUIRED = object()

SEED_METADATA: dict[str, tuple[Any, Any]] = {
    "question_id": (str, REQUIRED),
    "template_id": (str, REQUIRED),
    "result_id": (str, REQUIRED),
    "question_text": (str, REQUIRED),
    "raw_answer": (str | None, None),
    "keywords": (list[str] | None, None),
    "run_name": (str | None, None),
    "replicate": (int | None, None),
    "answering": (ModelIdentity, REQUIRED),
    "parsing": (ModelIdentity, REQUIRED),
    "answering_system_prompt": (str | None, None),
    "parsing_system_prompt": (str | None, None),
    "completed_without_errors": (bool, True),
    "error": (str | None, None),
    "execution_time": (float, REQUIRED),
    "timestamp": (str, REQUIRED),
    "scenario_id": (str | None, None),
    "scenario_node": (str | None, None),
    "scenario_turn": (int | None, None),
    "scenario_path": (list[str] | None, None),
}

SEED_TEMPLATE: dict[str, tuple[Any, Any]] = {
    "raw_llm_response": (str, ""),
    "trace_messages": (list[dict[str, Any]], []),
    "parsed_llm_response": (dict[str, Any] | None, None),
    "parsed_gt_response": (dict[str, Any] | None, None),
    "template_verification_performed": (bool, False),
    "verify_result": (bool | None, None),
    "verify_granular_result": (Any | None, None),
    "embedding_check_performed": (bool, False),
    "embedding_similarity_score": (float | None, None),
    "embedding_override_applied": (bool, False),
    "embedding_model_used": (str | None, None),
    "regex_validations_performed": (bool, False),
    "regex_validation_results": (dict[str, bool] | None, None),
    "regex_validation_details": (dict[str, dict[str, Any]] | None, None),
    "regex_overall_success": (bool | None, None),
    "regex_extraction_results": (dict[str, Any] | None, None),
    "abstention_check_performed": (bool, False),
    "abstention_detected": (bool | None, None),
    "abstention_override_applied": (bool, False),
    "abstention_reasoning": (str | None, None),
    "sufficiency_check_performed": (bool, False),
    "sufficiency_detected": (bool | None, None),
    "sufficiency_override_applied": (bool, False),
    "sufficiency_reasoning": (str | None, None),
    "recursion_limit_reached": (bool, False),
    "answering_mcp_servers": (list[str] | None, None),
    "agent_metrics": (dict[str, Any] | None, None),
    "usage_metadata": (dict[str, dict[str, Any]] | None, None),
    # Seed "13 Stages in Detail", ValidateTemplate.
    "template_validation_error": (str | None, None),
}

# Types widened to current Karenina's (a superset of the seed's): see docs/results.md.
SEED_RUBRIC: dict[str, tuple[Any, Any]] = {
    "rubric_evaluation_performed": (bool, False),
    "rubric_evaluation_strategy": (str | None, None),
    "llm_trait_scores": (None, None),
    "llm_trait_labels": (dict[str, str] | None, None),
    "regex_trait_scores": (dict[str, bool] | None, None),
    "callable_trait_scores": (None, None),
    "metric_trait_scores": (dict[str, dict[str, float]] | None, None),
    "metric_trait_confusion_lists": (dict[str, dict[str, list[str]]] | None, None),
    "agentic_trait_scores": (None, None),
    "agentic_trait_investigation_traces": (dict[str, str] | None, None),
}

SEED_DEEP_JUDGMENT: dict[str, tuple[Any, Any]] = {
    "deep_judgment_enabled": (bool, False),
    "deep_judgment_performed": (bool, False),
    "deep_judgment_stages_completed": (list[str] | None, None),
    "deep_judgment_model_calls": (int, 0),
    "deep_judgment_excerpt_retry_count": (int, 0),
    "attributes_without_excerpts": (list[str] | None, None),
    "extracted_excerpts": (dict[str, list[dict[str, Any]]] | None, None),
    "attribute_reasoning": (dict[str, str] | None, None),
    "deep_judgment_search_enabled": (bool, False),
    "hallucination_risk_assessment": (dict[str, str] | None, None),
}

SEED_DEEP_JUDGMENT_RUBRIC: dict[str, tuple[Any, Any]] = {
    "deep_judgment_rubric_performed": (bool, False),
    "extracted_rubric_excerpts": (dict[str, list[dict[str, Any]]] | None, None),
    "rubric_trait_reasoning": (dict[str, str] | None, None),
    "deep_judgment_rubric_scores": (dict[str, int | bool] | None, None),
    "standard_rubric_scores": (dict[str, int | bool] | None, None),
    "trait_metadata": (dict[str, dict[str, Any]] | None, None),
    "traits_without_valid_excerpts": (list[str] | None, None),
    "rubric_hallucination_risk_assessment": (dict[str, dict[str, Any]] | None, None),
    "total_deep_judgment_model_calls": (int, 0),
    "total_traits_evaluated": (int, 0),
    "total_excerpt_retries": (int, 0),
}

SEED_ROOT: dict[str, tuple[Any, Any]] = {
    "evaluation_input": (str | None, None),
    "used_full_trace": (bool, True),
    "trace_extraction_error": (str | None, None),
}

SEED_SECTIONS: list[tuple[str, BaseModel, dict[str, tuple[Any, Any]]]] = [
    ("metadata", metadata(), SEED_METADATA),
    ("template", VerificationResultTemplate(), SEED_TEMPLATE),
    ("rubric", VerificationResultRubric(), SEED_RUBRIC),
    ("deep_judgment", VerificationResultDeepJudgment(), SEED_DEEP_JUDGMENT),
    ("deep_judgment_rubric", VerificationResultDeepJudgmentRubric(), SEED_DEEP_JUDGMENT_RUBRIC),
    ("root", VerificationResult(metadata=metadata()), SEED_ROOT),
]


@pytest.mark.parametrize(
    ("instance", "fields"),
    [(instance, fields) for _, instance, fields in SEED_SECTIONS],
    ids=[name for name, _, _ in SEED_SECTIONS],
)
def test_seed_001_fields_types_and_defaults(
    instance: BaseModel, fields: dict[str, tuple[Any, Any]]
) -> None:
    model_fields = type(instance).model_fields
    for name, (annotation, default) in fields.items():
        assert name in model_fields, name
        if annotation is not None:
            assert model_fields[name].annotation == annotation, name
        if default is REQUIRED:
            assert model_fields[name].is_required(), name
        else:
            assert getattr(instance, name) == default, name


def test_sections_of_a_minimal_result_are_absent() -> None:
    minimal = VerificationResult(metadata=metadata())
    assert (minimal.template, minimal.rubric) == (None, None)
    assert (minimal.deep_judgment, minimal.deep_judgment_rubric) == (None, None)
    assert minimal.verify_result is None


def test_current_karenina_metadata_fields() -> None:
    meta = metadata()
    assert (meta.failure, meta.caveats, meta.warnings) == (None, [], [])
    assert (meta.partial_content, meta.retry_counts, meta.evaluation_mode) == (None, None, None)
    assert (meta.few_shot_enabled, meta.few_shot_example_count) == (False, 0)


def test_spec_5_6_template_keys_are_all_present() -> None:
    keys = set(VerificationResultTemplate().model_dump())
    extra = {"conversation_context", "field_verification_error", "field_results", "field_scores"}
    extra |= {"composition_strategy", "response_timeout_partial", "usage_unavailable"}
    extra |= {"investigation_trace", "agentic_parsing_performed", "agentic_extraction_recovery"}
    extra |= {"agentic_extraction_error", "dynamic_parsing_performed", "dynamic_parse_decision"}
    extra |= {"dynamic_decision_reasoning"}
    assert extra | set(SEED_TEMPLATE) == keys


def test_spec_5_6_rubric_and_deep_judgment_keys() -> None:
    rubric_keys = set(VerificationResultRubric().model_dump())
    assert rubric_keys - set(SEED_RUBRIC) == {
        "agentic_trait_extraction_metadata",
        "dynamic_rubric_skipped_traits",
        "dynamic_rubric_promoted_traits",
        "trait_provenance",
        "llm_trait_reasoning",  # ours: the judge's reasoning per LLM trait
        "trait_errors",  # ours: why a trait has no value
    }
    dj_keys = set(VerificationResultDeepJudgment().model_dump())
    assert dj_keys - set(SEED_DEEP_JUDGMENT) == {"deep_judgment_mode"}


def test_model_name_properties_are_display_strings() -> None:
    tooled = ModelIdentity.of("langchain", "claude-haiku-4-5", tools=["search"])
    meta = metadata(answering=tooled)
    assert meta.answering_model == "langchain:claude-haiku-4-5 +[search]"
    assert meta.parsing_model == "langchain:gpt-4o"


def test_full_dump_round_trips_through_json() -> None:
    original = VerificationResult(
        metadata=metadata(
            error="Stage ParseTemplate raised exception: ValueError: bad",
            completed_without_errors=False,
            failure=Failure(category="parsing", stage="ParseTemplate", reason="bad"),
            caveats=["retries_used"],
            retry_counts={"timeout": {"used": 1, "budget": 3}},
            keywords=["math"],
            replicate=2,
            scenario_path=["a", "b"],
        ),
        template=VerificationResultTemplate(
            template_validation_error=None,
            trace_messages=[{"role": "assistant", "content": "4", "block_index": 0}],
            field_results={"answer": True, "unit": None},
            field_scores={"answer": 1.0, "unit": None},
            verify_granular_result=0.5,
        ),
        rubric=VerificationResultRubric(
            rubric_evaluation_performed=True,
            llm_trait_scores={"clear": True, "depth": 4, "tpl.names": ["a"]},
            callable_trait_scores={"short": True, "ratio": 0.75},
        ),
        deep_judgment=VerificationResultDeepJudgment(deep_judgment_mode="full"),
        deep_judgment_rubric=VerificationResultDeepJudgmentRubric(
            deep_judgment_rubric_scores={"clear": True, "depth": 3}
        ),
        used_full_trace=False,
    )
    data = json.loads(json.dumps(original.model_dump(mode="json")))
    again = VerificationResult.model_validate(data)
    assert again == original
    assert again.rubric is not None and again.rubric.llm_trait_scores is not None
    assert again.rubric.llm_trait_scores["clear"] is True
    assert again.deep_judgment is not None and again.deep_judgment.deep_judgment_enabled


def test_unknown_keys_from_newer_exports_are_ignored() -> None:
    data = result().model_dump(mode="json")
    data["brand_new_section"] = {"x": 1}
    data["metadata"]["brand_new_field"] = 1
    data["template"]["another"] = [1]
    assert VerificationResult.model_validate(data) == result()


def test_seed_fields_are_rebuilt_from_a_karenina_failure() -> None:
    data = result(meta={"template_id": "abc"}).export_dict()
    data["metadata"]["failure"] = {
        "category": "template_validation",
        "stage": "validate_template",
        "reason": "no verify method",
        "details": None,
        "group": "system",
    }
    loaded = VerificationResult.model_validate(data)
    assert loaded.metadata.error == "no verify method"
    assert loaded.metadata.completed_without_errors is False
    assert loaded.template is not None
    assert loaded.template.template_validation_error == "no verify method"


def test_content_failures_imply_no_error() -> None:
    data = result(False).export_dict()
    data["metadata"]["failure"] = {"category": "content", "stage": "verify_template", "reason": "x"}
    loaded = VerificationResult.model_validate(data)
    assert (loaded.metadata.error, loaded.metadata.completed_without_errors) == (None, True)


def test_legacy_rows_get_identities_from_display_strings() -> None:
    data = result().export_dict()
    meta = data["metadata"]
    del meta["answering"], meta["parsing"]
    meta["answering_model"] = "openai_endpoint:llama (local) +[fs, web]"
    meta["parsing_model"] = "langchain:gpt-4o"
    loaded = VerificationResult.model_validate(data)
    assert loaded.metadata.answering == ModelIdentity(
        interface="openai_endpoint", model_name="llama", tools=["fs", "web"], config_id="local"
    )
    assert loaded.metadata.parsing == GPT4O


def test_failure_group_is_computed_and_input_group_ignored() -> None:
    failure = Failure.model_validate(
        {"category": "timeout", "stage": "GenerateAnswer", "reason": "slow", "group": "content"}
    )
    assert failure.group == "retry"
    assert failure.model_dump() == {
        "category": "timeout",
        "stage": "GenerateAnswer",
        "reason": "slow",
        "details": None,
        "group": "retry",
    }


def test_failure_reason_is_limited_to_500_characters() -> None:
    with pytest.raises(ValidationError):
        Failure(category="content", stage="verify_template", reason="x" * 501)
