"""Relaxed extraction class, strict rebuild and the parsed views (spec 2.8)."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from pytest_karenina.templates import compile_template, evaluate_fields
from pytest_karenina.templates.extraction import (
    parsed_gt_response,
    parsed_llm_response,
    relaxed_class,
    strict_rebuild,
)

QID = "urn:karenina:test:q007"

VERIFIED = '''
class Answer(BaseAnswer):
    """Facts about the gene."""
    gene: str = VerifiedField(description="The gene symbol", ground_truth="BCL2",
        verify_with=ExactMatch(normalize=["lowercase"]))
    count: int = VerifiedField(description="Chromosome pairs", ground_truth=23,
        verify_with=NumericExact(), ge=0)
    note: str | None = Field(default=None, description="Anything else")
'''

CLASSIC = """
class Answer(BaseAnswer):
    value: str = Field(description="The value stated")
    unit: str | None = None

    def ground_truth(self):
        self.correct = {"value": "42"}
        self.regex = {"num": {"pattern": "42", "expected": "42"}}

    def verify(self) -> bool:
        return self.value.strip() == self.correct["value"]
"""

TRACE_MIXED = """
class Answer(BaseAnswer):
    year: int = VerifiedField(description="Year", ground_truth=1928, verify_with=NumericExact())
    cites: bool = VerifiedField(description="Cites Fleming", ground_truth=True,
        verify_with=TraceRegex(pattern="Fleming"))
"""

CONDITIONAL = """
class Answer(BaseAnswer):
    level: str = VerifiedField(description="Severity",
        ground_truth=ConditionalGroundTruth(source="node_results.triage.parsed.kind",
            cases={"adult": GroundTruthCase(value="high")},
            default=GroundTruthCase(value="low")),
        verify_with=ExactMatch())
"""


def test_relaxed_class_shape() -> None:
    answer_class = compile_template(VERIFIED)
    relaxed = relaxed_class(answer_class)
    assert relaxed.__name__ == "Answer__Relaxed"
    assert relaxed_class(answer_class) is relaxed
    assert list(relaxed.model_fields) == ["id", "gene", "count", "note"]
    schema = relaxed.model_json_schema()
    assert schema.get("required") is None
    assert schema["description"] == "Facts about the gene."
    assert "description" not in schema["properties"]["gene"]
    assert schema["properties"]["note"]["description"] == "Anything else"
    assert "BCL2" not in json.dumps(schema)
    assert relaxed.model_validate({}).model_dump() == {
        "id": None,
        "gene": None,
        "count": None,
        "note": None,
    }
    assert relaxed.verified_fields() == {}


def test_relaxed_class_keeps_trace_fields() -> None:
    relaxed = relaxed_class(compile_template(TRACE_MIXED))
    assert relaxed.model_fields["cites"].default is None
    assert relaxed.model_validate({"cites": True, "year": 1928}).model_dump()["cites"] is True


def test_classic_required_field_null_fails_validation() -> None:
    relaxed = relaxed_class(compile_template(CLASSIC))
    with pytest.raises(ValidationError):
        relaxed.model_validate({"value": None})
    assert relaxed.model_validate({"value": "42"}).model_dump()["unit"] is None


def test_null_verified_field_gives_none_and_fails_verify() -> None:
    answer_class = compile_template(VERIFIED, QID)
    reply = relaxed_class(answer_class).model_validate({"gene": "bcl2", "count": None})
    answer = strict_rebuild(answer_class, reply.model_dump())
    assert isinstance(answer, answer_class)
    assert answer._null_fields == frozenset({"count"})
    outcomes = evaluate_fields(answer)
    assert outcomes["gene"].result is True
    assert outcomes["count"].result is None
    assert answer.verify() is False  # type: ignore[attr-defined]


def test_full_reply_verifies_and_id_is_injected() -> None:
    answer_class = compile_template(VERIFIED, QID)
    data = {"id": "judge-made-this-up", "gene": "BCL2", "count": 23, "note": None}
    answer = strict_rebuild(answer_class, data)
    assert answer.id == QID
    assert answer._null_fields == frozenset()
    assert answer.verify() is True  # type: ignore[attr-defined]
    assert getattr(answer, "correct") == {"gene": "BCL2", "count": 23}  # noqa: B009


def test_unanswered_fields_are_null_even_with_a_value() -> None:
    answer_class = compile_template(VERIFIED, QID)
    data = {"gene": "BCL2", "count": 23, "note": "n", "_unanswered_fields": ["gene", "note", 3]}
    answer = strict_rebuild(answer_class, data)
    assert answer._null_fields == frozenset({"gene"})
    assert answer.note == "n"  # type: ignore[attr-defined]
    assert "_unanswered_fields" not in answer.model_dump()
    assert evaluate_fields(answer)["gene"].result is None


def test_extra_keys_are_kept() -> None:
    answer_class = compile_template(VERIFIED, QID)
    reply = relaxed_class(answer_class).model_validate(
        {"gene": "BCL2", "count": 23, "confidence": "high"}
    )
    answer = strict_rebuild(answer_class, reply.model_dump())
    assert answer.model_dump()["confidence"] == "high"
    assert parsed_llm_response(answer) == {
        "gene": "BCL2",
        "count": 23,
        "note": None,
        "confidence": "high",
    }


def test_classic_template_rebuild_runs_its_hooks() -> None:
    answer_class = compile_template(CLASSIC, QID)
    reply = relaxed_class(answer_class).model_validate({"value": " 42 ", "unit": None})
    answer = strict_rebuild(answer_class, reply.model_dump())
    assert answer.id == QID
    assert answer._null_fields == frozenset()
    assert answer.verify() is True  # type: ignore[attr-defined]
    assert parsed_llm_response(answer) == {"value": " 42 ", "unit": None}
    assert parsed_gt_response(answer) == {"value": "42"}


def test_trace_field_omitted_by_the_judge_is_null_in_a_mixed_template() -> None:
    # Karenina's documented surprise: the judge never sees the trace field.
    answer_class = compile_template(TRACE_MIXED, QID)
    answer = strict_rebuild(answer_class, {"year": 1928}, raw_trace="Fleming, 1928")
    assert answer._raw_trace == "Fleming, 1928"
    assert answer._null_fields == frozenset({"cites"})
    assert answer.verify() is False  # type: ignore[attr-defined]


def test_parsed_gt_response_resolves_conditional_ground_truth() -> None:
    answer_class = compile_template(CONDITIONAL, QID)
    answer = strict_rebuild(answer_class, {"level": "low"})
    assert parsed_gt_response(answer) == {"level": "low"}
    answer._scenario_context = {"node_results": {"triage": {"parsed": {"kind": "adult"}}}}
    assert parsed_gt_response(answer) == {"level": "high"}


def test_parsed_gt_response_without_ground_truth_is_none() -> None:
    code = "class Answer(BaseAnswer):\n    x: int\n    def verify(self):\n        return True\n"
    answer = strict_rebuild(compile_template(code, QID), {"x": 1})
    assert parsed_gt_response(answer) is None
    assert parsed_llm_response(answer) == {"x": 1}
