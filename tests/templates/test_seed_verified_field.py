"""Seed page "Answer Templates", sections 1-3: VerifiedField and field types.

The walkthrough, VerifiedField and its parameters, class requirements, field types.

Section numbers in the test names and comments refer to the seed page. The
templates are re-typed here with short descriptions; the values fed to them are
the ones the page uses.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest
from pydantic import ValidationError

from pytest_karenina.templates import (
    BaseAnswer,
    BooleanMatch,
    ExactMatch,
    LiteralMatch,
    NumericExact,
    TemplateError,
    VerifiedField,
    compile_template,
    judge_schema,
)
from tests.templates.seed_helpers import (
    SEED_IMPORTS,
    PairCountAnswer,
)

# ---------------------------------------------------------------------------
# 1.3 Walkthrough: pair_count with NumericExact
# ---------------------------------------------------------------------------


# PairCountAnswer, the walkthrough template, is in seed_helpers: other sections reuse it.


@pytest.mark.parametrize(
    ("pair_count", "verified", "granular"),
    [
        pytest.param(23, True, 1.0, id="23-pairs-passes"),
        pytest.param(46, False, 0.0, id="46-total-chromosomes-fails"),
    ],
)
def test_walkthrough_pair_count(pair_count: int, verified: bool, granular: float) -> None:
    parsed = PairCountAnswer(pair_count=pair_count)
    assert parsed.verify() is verified
    assert parsed.verify_granular() == granular


def test_walkthrough_judge_sees_type_and_description_but_not_ground_truth() -> None:
    schema = judge_schema(PairCountAnswer)
    prop = schema["properties"]["pair_count"]
    assert prop["type"] == "integer"
    assert prop["description"] == "Number of chromosome pairs in a normal human somatic cell"
    dumped = json.dumps(schema)
    assert "__verification__" not in dumped
    assert "NumericExact" not in dumped
    assert "ground_truth" not in dumped


# ---------------------------------------------------------------------------
# 2. VerifiedField: target / is_approved
# ---------------------------------------------------------------------------


class TargetApprovalAnswer(BaseAnswer):
    target: str = VerifiedField(
        description="The direct pharmacological target protein named in the response",
        ground_truth="BCL2",
        verify_with=ExactMatch(normalize=["lowercase", "strip", "remove_punctuation"]),
    )
    is_approved: bool = VerifiedField(
        description="True if the response says the drug is FDA approved",
        ground_truth=True,
        verify_with=BooleanMatch(),
    )


def test_target_approval_bcl_2_with_hyphen_passes() -> None:
    # "Bcl-2" -> lowercase "bcl-2" -> strip -> remove_punctuation "bcl2" == "bcl2".
    parsed = TargetApprovalAnswer(target="Bcl-2", is_approved=True)
    assert parsed.target == "Bcl-2"
    assert parsed.verify() is True
    assert f"{parsed.verify_granular():.2f}" == "1.00"


@pytest.mark.parametrize(
    ("target", "is_approved", "verified", "granular"),
    [
        pytest.param("BCL2", True, True, 1.0, id="canonical-symbol"),
        pytest.param("  bcl.2 ", True, True, 1.0, id="spaces-and-punctuation"),
        pytest.param("Bcl-2", False, False, 0.5, id="not-approved-fails-all-of"),
        pytest.param("BCL-XL", True, False, 0.5, id="wrong-target"),
        pytest.param("MCL1", False, False, 0.0, id="both-wrong"),
    ],
)
def test_target_approval_all_fields_must_pass(
    target: str, is_approved: bool, verified: bool, granular: float
) -> None:
    parsed = TargetApprovalAnswer(target=target, is_approved=is_approved)
    assert parsed.verify() is verified
    assert parsed.verify_granular() == pytest.approx(granular)


def test_target_approval_metadata_is_stored_under_verification_key() -> None:
    # 2.2: metadata lives in json_schema_extra["__verification__"].
    extra = TargetApprovalAnswer.model_fields["target"].json_schema_extra
    assert isinstance(extra, dict)
    meta = extra["__verification__"]
    assert meta["ground_truth"] == "BCL2"
    assert meta["verify_with"] == {
        "normalize": ["lowercase", "strip", "remove_punctuation"],
        "type": "ExactMatch",
    }
    assert meta["weight"] == 1.0
    assert meta["extraction_hint"] is None


@pytest.mark.parametrize(
    "make_schema",
    [
        pytest.param(TargetApprovalAnswer.model_json_schema, id="model_json_schema"),
        pytest.param(lambda: judge_schema(TargetApprovalAnswer), id="judge_schema"),
    ],
)
def test_target_approval_schema_hides_ground_truth(make_schema: Any) -> None:
    # 2.2: the judge only sees field name, type and description.
    schema = make_schema()
    dumped = json.dumps(schema)
    assert "__verification__" not in dumped
    assert "BCL2" not in dumped
    assert "ExactMatch" not in dumped
    assert schema["properties"]["target"]["type"] == "string"
    assert schema["properties"]["target"]["description"].startswith("The direct pharmacological")
    assert schema["properties"]["is_approved"]["type"] == "boolean"


def test_verified_field_auto_fills_correct_from_ground_truth() -> None:
    parsed = TargetApprovalAnswer(target="Bcl-2", is_approved=True)
    assert parsed.correct == {"target": "BCL2", "is_approved": True}


def test_verified_field_is_required() -> None:
    # A VerifiedField has no default: the filled template must provide every field.
    with pytest.raises(ValidationError):
        TargetApprovalAnswer(target="BCL2")


# ---------------------------------------------------------------------------
# 2.1 VerifiedField parameters
# ---------------------------------------------------------------------------


def test_extraction_hint_and_weight_are_kept_in_the_metadata() -> None:
    class Answer(BaseAnswer):
        value: str = VerifiedField(
            description="The value",
            ground_truth="x",
            verify_with=ExactMatch(),
            extraction_hint="Look for x",
            weight=2.0,
        )

    meta = Answer.verified_fields()["value"]
    assert meta.extraction_hint == "Look for x"
    assert meta.weight == 2.0
    assert "Look for x" not in json.dumps(Answer.model_json_schema())


# ---------------------------------------------------------------------------
# 2.3 Class requirements: any class name, exactly one leaf BaseAnswer subclass
# ---------------------------------------------------------------------------

ANSWER_SOURCE = """
class Answer(BaseAnswer):
    value: str = VerifiedField(
        description="The answer value",
        ground_truth="42",
        verify_with=ExactMatch(),
    )
"""

VENETOCLAX_SOURCE = """
class VenetoclaxAnswer(BaseAnswer):
    target: str = VerifiedField(
        description="Drug target protein",
        ground_truth="BCL2",
        verify_with=ExactMatch(normalize=["lowercase", "strip"]),
    )
"""


@pytest.mark.parametrize(
    ("source", "name", "values"),
    [
        pytest.param(ANSWER_SOURCE, "Answer", {"value": " 42 "}, id="Answer"),
        pytest.param(VENETOCLAX_SOURCE, "VenetoclaxAnswer", {"target": "bcl2"}, id="Venetoclax"),
    ],
)
def test_any_class_name_is_discovered(source: str, name: str, values: dict[str, Any]) -> None:
    answer_class = compile_template(SEED_IMPORTS + source)
    assert answer_class.__name__ == name
    assert answer_class(**values).verify() is True


def test_two_leaf_answer_classes_in_one_template_are_an_error() -> None:
    with pytest.raises(TemplateError):
        compile_template(SEED_IMPORTS + ANSWER_SOURCE + VENETOCLAX_SOURCE)


def test_extra_attributes_are_allowed_and_not_in_schema() -> None:
    parsed = PairCountAnswer(pair_count=23)
    parsed.tolerance = 0.5
    assert parsed.tolerance == 0.5
    properties = PairCountAnswer.model_json_schema()["properties"]
    assert set(properties) == {"id", "pair_count"}


# ---------------------------------------------------------------------------
# 3. Field types: element / atomic_number, Literal mutation_type
# ---------------------------------------------------------------------------


class ElementAnswer(BaseAnswer):
    element: str = VerifiedField(
        description="The chemical element named in the response",
        ground_truth="oxygen",
        verify_with=ExactMatch(normalize=["lowercase", "strip"]),
    )
    atomic_number: int = VerifiedField(
        description="The atomic number given in the response",
        ground_truth=8,
        verify_with=NumericExact(),
    )


@pytest.mark.parametrize(
    ("element", "atomic_number", "verified", "granular"),
    [
        pytest.param("Oxygen", 8, True, 1.0, id="page-example"),
        pytest.param("Oxygen", 16, False, 0.5, id="wrong-number"),
        pytest.param("Sulfur", 16, False, 0.0, id="both-wrong"),
    ],
)
def test_element_atomic_number(
    element: str, atomic_number: int, verified: bool, granular: float
) -> None:
    parsed = ElementAnswer(element=element, atomic_number=atomic_number)
    assert parsed.verify() is verified
    assert parsed.verify_granular() == pytest.approx(granular)


MUTATION_TYPES = ["missense", "nonsense", "frameshift", "silent"]


class MutationAnswer(BaseAnswer):
    mutation_type: Literal["missense", "nonsense", "frameshift", "silent"] = VerifiedField(
        description="The kind of point mutation described",
        ground_truth="missense",
        verify_with=LiteralMatch(),
    )


@pytest.mark.parametrize(
    ("mutation_type", "verified"),
    [pytest.param(value, value == "missense", id=value) for value in MUTATION_TYPES],
)
def test_literal_mutation_type(mutation_type: str, verified: bool) -> None:
    assert MutationAnswer(mutation_type=mutation_type).verify() is verified


def test_literal_field_is_an_enum_in_the_schema() -> None:
    prop = judge_schema(MutationAnswer)["properties"]["mutation_type"]
    assert prop["enum"] == MUTATION_TYPES


def test_literal_field_rejects_values_outside_the_enum() -> None:
    with pytest.raises(ValidationError):
        MutationAnswer(mutation_type="deletion")
