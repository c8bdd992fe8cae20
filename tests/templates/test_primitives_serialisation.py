"""Primitive serialisation round trip.

Every primitive survives its dict form (as stored in checkpoints) and VerifiedField
metadata.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import create_model

from pytest_karenina.templates import (
    BaseAnswer,
    BooleanMatch,
    ContainsAll,
    ContainsAny,
    DateMatch,
    DateRange,
    DateTolerance,
    ExactMatch,
    LiteralMatch,
    NumericExact,
    NumericGraded,
    NumericMaximum,
    NumericMinimum,
    NumericRange,
    NumericRangeGraded,
    NumericThresholdGraded,
    NumericTolerance,
    OrderedMatch,
    RegexMatch,
    SemanticMatch,
    SetContainment,
    SynonymMap,
    TraceContains,
    TraceLength,
    TraceRegex,
    VerificationPrimitive,
    VerifiedField,
)
from pytest_karenina.templates.primitives import (
    COMPARISON_PRIMITIVES,
    TRACE_PRIMITIVES,
    primitive_from_dict,
    serialize_primitive,
)

# ---------------------------------------------------------------------------
# Serialisation round trip
# ---------------------------------------------------------------------------

EXAMPLES: dict[type[VerificationPrimitive], VerificationPrimitive] = {
    BooleanMatch: BooleanMatch(),
    ExactMatch: ExactMatch(
        normalize=[
            "lowercase",
            "strip",
            "remove_punctuation",
            "collapse_whitespace",
            SynonymMap(mapping={"o positive": "o+"}),
        ]
    ),
    ContainsAny: ContainsAny(substrings=["mrna", "messenger rna"], normalize=["lowercase"]),
    ContainsAll: ContainsAll(substrings=["egfr", "kras"], normalize=["lowercase", "strip"]),
    RegexMatch: RegexMatch(pattern=r"\bBCL-?2\b", flags=["IGNORECASE", "MULTILINE"]),
    SemanticMatch: SemanticMatch(threshold=0.7),
    NumericExact: NumericExact(),
    NumericTolerance: NumericTolerance(tolerance=0.5, mode="absolute"),
    NumericGraded: NumericGraded(cutoff=0.2, full_credit=0.05, mode="absolute", decay="quadratic"),
    NumericRangeGraded: NumericRangeGraded(
        min=1.5,
        max=4.0,
        margin=0.25,
        mode="relative",
        decay="quadratic",
        exclusive_min=True,
        exclusive_max=True,
    ),
    NumericThresholdGraded: NumericThresholdGraded(
        direction="min", margin=3.0, mode="absolute", decay="quadratic", exclusive=True
    ),
    NumericMinimum: NumericMinimum(exclusive=True),
    NumericMaximum: NumericMaximum(exclusive=True),
    NumericRange: NumericRange(min=-1.0, max=2.5, exclusive_min=True, exclusive_max=False),
    SetContainment: SetContainment(mode="overlap", min_overlap=2),
    OrderedMatch: OrderedMatch(normalize=["collapse_whitespace"]),
    LiteralMatch: LiteralMatch(),
    DateMatch: DateMatch(format="%d/%m/%Y"),
    DateTolerance: DateTolerance(tolerance=6, unit="hours"),
    DateRange: DateRange(min="2024-01-01", max="2024-12-31"),
    TraceRegex: TraceRegex(pattern=r"\[\d+\]", count_min=3),
    TraceContains: TraceContains(substring="inhibits"),
    TraceLength: TraceLength(min=10, max=500, unit="words"),
}


def test_round_trip_examples_cover_every_primitive() -> None:
    assert set(EXAMPLES) == set(COMPARISON_PRIMITIVES) | set(TRACE_PRIMITIVES)
    assert all(type(example) is cls for cls, example in EXAMPLES.items())


@pytest.mark.parametrize(
    "primitive", [pytest.param(example, id=cls.__name__) for cls, example in EXAMPLES.items()]
)
def test_serialize_round_trip(primitive: VerificationPrimitive) -> None:
    data = serialize_primitive(primitive)
    assert data["type"] == type(primitive).__name__
    # Karenina's layout: the JSON dump plus "type", stored inside JSON checkpoints.
    data = json.loads(json.dumps(data))
    rebuilt = primitive_from_dict(data)
    assert type(rebuilt) is type(primitive)
    assert rebuilt == primitive
    assert serialize_primitive(rebuilt) == serialize_primitive(primitive)


@pytest.mark.parametrize(
    "primitive", [pytest.param(example, id=cls.__name__) for cls, example in EXAMPLES.items()]
)
def test_round_trip_through_verified_field_metadata(primitive: VerificationPrimitive) -> None:
    annotation = bool if isinstance(primitive, tuple(TRACE_PRIMITIVES)) else Any
    answer_class = create_model(
        "Answer",
        __base__=BaseAnswer,
        value=(annotation, VerifiedField(description="v", ground_truth=1, verify_with=primitive)),
    )
    assert answer_class.verified_fields()["value"].verify_with == primitive


@pytest.mark.parametrize(
    "data",
    [
        pytest.param({"type": "NoSuchPrimitive"}, id="unknown-type"),
        pytest.param({"tolerance": 0.5}, id="missing-type"),
        pytest.param({"type": 7}, id="type-not-a-string"),
        pytest.param({"type": "NumericTolerance"}, id="missing-required-param"),
        pytest.param({"type": "ExactMatch", "surprise": 1}, id="unknown-param"),
    ],
)
def test_primitive_from_dict_rejects_bad_data(data: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        primitive_from_dict(data)
