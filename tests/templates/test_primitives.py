"""Table-driven tests of every verification primitive (spec sections 3.2-3.6).

Each table row is ``(primitive, extracted, expected, check result[, score])``.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import create_model

from pytest_karenina.templates import (
    AllOf,
    AnyOf,
    AtLeastN,
    BaseAnswer,
    BooleanMatch,
    ConditionalGroundTruth,
    ContainsAll,
    ContainsAny,
    DateMatch,
    DateRange,
    DateTolerance,
    ExactMatch,
    FieldCheck,
    GroundTruthCase,
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
    TemplateWarning,
    TraceContains,
    TraceLength,
    TraceRegex,
    VerificationPrimitive,
    VerifiedField,
    evaluate_fields,
    evaluate_strategy,
    strategy_label,
)
from pytest_karenina.templates.primitives import (
    COMPARISON_PRIMITIVES,
    TRACE_PRIMITIVES,
    SemanticMatchUnavailable,
    primitive_from_dict,
    serialize_primitive,
    set_similarity_function,
)


def _rows(rows: list[tuple[Any, ...]]) -> list[Any]:
    """Table rows ``(id, *values)`` as ``pytest.param(*values, id=id)``."""
    return [pytest.param(*row[1:], id=row[0]) for row in rows]


# ---------------------------------------------------------------------------
# BooleanMatch
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extracted", "expected", "result"),
    [
        pytest.param(True, True, True, id="true-true"),
        pytest.param(False, False, True, id="false-false"),
        pytest.param(True, False, False, id="true-false"),
        pytest.param(False, True, False, id="false-true"),
        pytest.param(None, None, True, id="none-none"),
        pytest.param(None, False, False, id="none-vs-false"),
        pytest.param(False, None, False, id="false-vs-none"),
        pytest.param(None, True, False, id="none-vs-true"),
        pytest.param("false", True, True, id="string-false-is-truthy"),
        pytest.param("false", False, False, id="string-false-not-false"),
        pytest.param("", False, True, id="empty-string-falsy"),
        pytest.param(0, False, True, id="zero-falsy"),
        pytest.param(1, True, True, id="one-truthy"),
        pytest.param([], False, True, id="empty-list-falsy"),
    ],
)
def test_boolean_match(extracted: Any, expected: Any, result: bool) -> None:
    assert BooleanMatch().check(extracted, expected) is result
    assert BooleanMatch().score(extracted, expected) == (1.0 if result else 0.0)


# ---------------------------------------------------------------------------
# ExactMatch, ContainsAny, ContainsAll
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("primitive", "extracted", "expected", "result"),
    _rows(
        [
            ("default-case", ExactMatch(), "bcl2", "BCL2", True),
            ("default-strip", ExactMatch(), "  BCL2\n", "BCL2", True),
            ("default-keeps-punctuation", ExactMatch(), "Bcl-2", "BCL2", False),
            ("default-keeps-inner-space", ExactMatch(), "O  +", "O +", False),
            ("default-str-of-int", ExactMatch(), 42, "42", True),
            ("default-str-of-float", ExactMatch(), 42.0, "42", False),
            ("no-normalize-case-sensitive", ExactMatch(normalize=[]), "bcl2", "BCL2", False),
            ("no-normalize-equal", ExactMatch(normalize=[]), "BCL2", "BCL2", True),
            (
                "remove-punctuation",
                ExactMatch(normalize=["lowercase", "remove_punctuation"]),
                "Bcl-2",
                "BCL2",
                True,
            ),
            (
                "collapse-whitespace",
                ExactMatch(normalize=["collapse_whitespace"]),
                " spike \t  protein ",
                "spike protein",
                True,
            ),
            (
                "synonym-after-lowercase",
                ExactMatch(normalize=["lowercase", SynonymMap(mapping={"o positive": "o+"})]),
                "O Positive",
                "o+",
                True,
            ),
            (
                "synonym-before-lowercase-misses",
                ExactMatch(normalize=[SynonymMap(mapping={"o positive": "o+"}), "lowercase"]),
                "O Positive",
                "o+",
                False,
            ),
            (
                "synonym-whole-string-only",
                ExactMatch(normalize=[SynonymMap(mapping={"positive": "+"})]),
                "O positive",
                "O+",
                False,
            ),
        ]
    ),
)
def test_exact_match(primitive: ExactMatch, extracted: Any, expected: Any, result: bool) -> None:
    assert primitive.check(extracted, expected) is result


def test_exact_match_default_normalizers() -> None:
    assert ExactMatch().normalize == ["lowercase", "strip"]


@pytest.mark.parametrize(
    ("primitive", "extracted", "result"),
    [
        pytest.param(
            ContainsAny(substrings=["mrna", "messenger rna"]),
            "uses mrna",
            True,
            id="any-one-present",
        ),
        pytest.param(
            ContainsAny(substrings=["mrna", "messenger rna"]),
            "uses mRNA",
            False,
            id="any-case-sensitive-by-default",
        ),
        pytest.param(
            ContainsAny(substrings=["mrna"], normalize=["lowercase"]),
            "uses mRNA",
            True,
            id="any-lowercase",
        ),
        pytest.param(
            ContainsAny(substrings=["MRNA"], normalize=["lowercase"]),
            "uses mRNA",
            True,
            id="any-substrings-normalized-too",
        ),
        pytest.param(ContainsAny(substrings=["spike"]), "nucleocapsid", False, id="any-none"),
        pytest.param(ContainsAny(substrings=[]), "anything", False, id="any-empty-list"),
        pytest.param(ContainsAny(substrings=["4"]), 42, True, id="any-str-of-int"),
        pytest.param(
            ContainsAny(substrings=["bcl2"], normalize=["remove_punctuation"]),
            "the bcl-2 protein",
            True,
            id="any-remove-punctuation",
        ),
        pytest.param(
            ContainsAll(substrings=["egfr", "kras"]), "egfr then kras", True, id="all-both"
        ),
        pytest.param(
            ContainsAll(substrings=["egfr", "kras"]), "egfr only", False, id="all-missing-one"
        ),
        pytest.param(
            ContainsAll(substrings=["egfr", "kras"], normalize=["lowercase"]),
            "EGFR and KRAS",
            True,
            id="all-lowercase",
        ),
        pytest.param(
            ContainsAll(substrings=["egfr", "kras"]),
            "EGFR and KRAS",
            False,
            id="all-case-sensitive-by-default",
        ),
        pytest.param(ContainsAll(substrings=[]), "anything", True, id="all-empty-list"),
    ],
)
def test_contains(primitive: VerificationPrimitive, extracted: Any, result: bool) -> None:
    # The ground truth is ignored: pass an unrelated value.
    assert primitive.check(extracted, "ignored ground truth") is result


# ---------------------------------------------------------------------------
# RegexMatch
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("primitive", "extracted", "result"),
    [
        pytest.param(RegexMatch(pattern=r"BCL-?2"), "the BCL2 protein", True, id="search-anywhere"),
        pytest.param(RegexMatch(pattern=r"^BCL-?2$"), "the BCL2 protein", False, id="anchored"),
        pytest.param(RegexMatch(pattern=r"bcl-?2"), "BCL-2", False, id="case-sensitive"),
        pytest.param(
            RegexMatch(pattern=r"bcl-?2", flags=["IGNORECASE"]), "BCL-2", True, id="ignorecase"
        ),
        pytest.param(RegexMatch(pattern=r"^b", flags=["MULTILINE"]), "a\nb", True, id="multiline"),
        pytest.param(RegexMatch(pattern=r"^b"), "a\nb", False, id="no-multiline"),
        pytest.param(RegexMatch(pattern=r"a.b", flags=["DOTALL"]), "a\nb", True, id="dotall"),
        pytest.param(
            RegexMatch(pattern=r"a.b", flags=["DOTALL", "IGNORECASE"]), "A\nB", True, id="two-flags"
        ),
        pytest.param(RegexMatch(pattern=r"^\d+$"), 1928, True, id="str-of-int"),
    ],
)
def test_regex_match(primitive: RegexMatch, extracted: Any, result: bool) -> None:
    assert primitive.check(extracted, "ignored") is result


def test_regex_match_unknown_flag_warns_and_is_ignored() -> None:
    with pytest.warns(TemplateWarning, match="NOT_A_FLAG"):
        primitive = RegexMatch(pattern="abc", flags=["NOT_A_FLAG"])
        lower = primitive.check("xabcx", None)
        upper = primitive.check("ABC", None)
    assert lower is True
    assert upper is False


def test_regex_match_unknown_flag_next_to_known_one() -> None:
    with pytest.warns(TemplateWarning):
        primitive = RegexMatch(pattern="abc", flags=["IGNORECASE", "BOGUS"])
        result = primitive.check("ABC", None)
    assert result is True


@pytest.mark.parametrize(
    "pattern", [pytest.param("(", id="open-group"), pytest.param("[a-", id="class")]
)
def test_regex_match_invalid_pattern_is_a_value_error_at_construction(pattern: str) -> None:
    with pytest.raises(ValueError):
        RegexMatch(pattern=pattern)


# ---------------------------------------------------------------------------
# Pass/fail numeric primitives
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("primitive", "extracted", "expected", "result"),
    _rows(
        [
            ("exact-int", NumericExact(), 23, 23, True),
            ("exact-int-float", NumericExact(), 23, 23.0, True),
            ("exact-str", NumericExact(), "23", 23, True),
            ("exact-differs", NumericExact(), 46, 23, False),
            ("tol-abs-inside", NumericTolerance(tolerance=0.5, mode="absolute"), 36.8, 37.0, True),
            (
                "tol-abs-boundary",
                NumericTolerance(tolerance=0.5, mode="absolute"),
                37.5,
                37.0,
                True,
            ),
            (
                "tol-abs-outside",
                NumericTolerance(tolerance=0.5, mode="absolute"),
                38.0,
                37.0,
                False,
            ),
            ("tol-abs-below", NumericTolerance(tolerance=0.5, mode="absolute"), 36.0, 37.0, False),
            ("tol-abs-gt0", NumericTolerance(tolerance=0.5, mode="absolute"), -0.5, 0, True),
            ("tol-rel-inside", NumericTolerance(tolerance=0.1), 105, 100, True),
            ("tol-rel-boundary", NumericTolerance(tolerance=0.1), 90, 100, True),
            ("tol-rel-outside", NumericTolerance(tolerance=0.1), 111, 100, False),
            ("tol-rel-negative-gt", NumericTolerance(tolerance=0.1), -105, -100, True),
            ("tol-rel-sign-flip", NumericTolerance(tolerance=0.1), 100, -100, False),
            ("tol-rel-gt0-exact", NumericTolerance(tolerance=0.5), 0, 0, True),
            ("tol-rel-gt0-any-diff-fails", NumericTolerance(tolerance=0.5), 1e-12, 0, False),
            ("tol-rel-huge-tolerance-gt0", NumericTolerance(tolerance=1e9), 1, 0, False),
            ("tol-zero", NumericTolerance(tolerance=0, mode="absolute"), 1.0, 1, True),
            ("min-above", NumericMinimum(), 5, 3, True),
            ("min-equal", NumericMinimum(), 3, 3, True),
            ("min-below", NumericMinimum(), 2, 3, False),
            ("min-exclusive-equal", NumericMinimum(exclusive=True), 3, 3, False),
            ("min-exclusive-above", NumericMinimum(exclusive=True), 3.001, 3, True),
            ("max-below", NumericMaximum(), 2, 3, True),
            ("max-equal", NumericMaximum(), 3, 3, True),
            ("max-above", NumericMaximum(), 4, 3, False),
            ("max-exclusive-equal", NumericMaximum(exclusive=True), 3, 3, False),
            ("max-exclusive-below", NumericMaximum(exclusive=True), 2.999, 3, True),
        ]
    ),
)
def test_numeric(
    primitive: VerificationPrimitive, extracted: Any, expected: Any, result: bool
) -> None:
    assert primitive.check(extracted, expected) is result
    assert primitive.score(extracted, expected) == (1.0 if result else 0.0)


@pytest.mark.parametrize(
    ("primitive", "extracted", "result"),
    [
        pytest.param(NumericRange(min=0, max=10), 0, True, id="inclusive-min"),
        pytest.param(NumericRange(min=0, max=10), 10, True, id="inclusive-max"),
        pytest.param(NumericRange(min=0, max=10), 5, True, id="inside"),
        pytest.param(NumericRange(min=0, max=10), -0.1, False, id="below"),
        pytest.param(NumericRange(min=0, max=10), 10.1, False, id="above"),
        pytest.param(NumericRange(min=0, max=10, exclusive_min=True), 0, False, id="exclusive-min"),
        pytest.param(
            NumericRange(min=0, max=10, exclusive_min=True),
            1e-9,
            True,
            id="exclusive-min-just-inside",
        ),
        pytest.param(
            NumericRange(min=0, max=10, exclusive_min=True),
            10,
            True,
            id="exclusive-min-keeps-inclusive-max",
        ),
        pytest.param(
            NumericRange(min=0, max=10, exclusive_max=True), 10, False, id="exclusive-max"
        ),
        pytest.param(
            NumericRange(min=0, max=10, exclusive_max=True),
            0,
            True,
            id="exclusive-max-keeps-inclusive-min",
        ),
        pytest.param(NumericRange(min=0), 1e12, True, id="min-only"),
        pytest.param(NumericRange(min=0), -1, False, id="min-only-below"),
        pytest.param(NumericRange(max=0), -1e12, True, id="max-only"),
        pytest.param(NumericRange(max=0), 1, False, id="max-only-above"),
        pytest.param(NumericRange(), -1e300, True, id="no-bounds"),
        pytest.param(NumericRange(min=5, max=5), 5, True, id="degenerate-range"),
        pytest.param(NumericRange(min=0, max=10), "7", True, id="str-coerced"),
    ],
)
def test_numeric_range(primitive: NumericRange, extracted: Any, result: bool) -> None:
    # Ground truth unused.
    assert primitive.check(extracted, 1e9) is result


@pytest.mark.parametrize(
    ("primitive", "extracted", "expected"),
    [
        pytest.param(NumericExact(), "forty-six", 46, id="exact-text"),
        pytest.param(NumericTolerance(tolerance=1), None, 46, id="tolerance-none"),
        pytest.param(NumericMinimum(), "many", 1, id="minimum-text"),
        pytest.param(NumericRange(min=0), "lots", None, id="range-text"),
        pytest.param(NumericGraded(cutoff=0.1), "n/a", 1, id="graded-text"),
    ],
)
def test_numeric_type_errors_propagate(
    primitive: VerificationPrimitive, extracted: Any, expected: Any
) -> None:
    # Spec 3.2: not caught by the primitive; they become a field verification error.
    with pytest.raises((TypeError, ValueError)):
        primitive.check(extracted, expected)


# ---------------------------------------------------------------------------
# Graded numeric primitives: (primitive, extracted, expected, check, score)
# ---------------------------------------------------------------------------


NUMERIC_GRADED_ROWS = [
    ("rel-linear-exact", NumericGraded(cutoff=0.1), 100, 100, True, 1.0),
    ("rel-linear-half", NumericGraded(cutoff=0.1), 105, 100, True, 0.5),
    ("rel-linear-below", NumericGraded(cutoff=0.1), 95, 100, True, 0.5),
    ("rel-linear-quarter", NumericGraded(cutoff=0.2), 105, 100, True, 0.75),
    ("rel-linear-at-cutoff-passes-scores-0", NumericGraded(cutoff=0.1), 110, 100, True, 0.0),
    ("rel-linear-beyond", NumericGraded(cutoff=0.1), 120, 100, False, 0.0),
    ("rel-quadratic-half", NumericGraded(cutoff=0.1, decay="quadratic"), 105, 100, True, 0.75),
    ("rel-quadratic-quarter", NumericGraded(cutoff=0.2, decay="quadratic"), 105, 100, True, 0.9375),
    ("rel-negative-gt", NumericGraded(cutoff=0.1), -105, -100, True, 0.5),
    ("rel-full-credit-inside", NumericGraded(cutoff=0.2, full_credit=0.1), 105, 100, True, 1.0),
    ("rel-full-credit-edge", NumericGraded(cutoff=0.2, full_credit=0.1), 110, 100, True, 1.0),
    ("rel-full-credit-shoulder", NumericGraded(cutoff=0.2, full_credit=0.1), 115, 100, False, 0.5),
    (
        "rel-full-credit-shoulder-quadratic",
        NumericGraded(cutoff=0.2, full_credit=0.1, decay="quadratic"),
        115,
        100,
        False,
        0.75,
    ),
    ("rel-full-credit-beyond", NumericGraded(cutoff=0.2, full_credit=0.1), 130, 100, False, 0.0),
    ("rel-full-credit-zero", NumericGraded(cutoff=0.2, full_credit=0), 110, 100, False, 0.5),
    ("rel-full-credit-zero-exact", NumericGraded(cutoff=0.2, full_credit=0), 100, 100, True, 1.0),
    ("rel-gt0-equal", NumericGraded(cutoff=0.1), 0, 0, True, 1.0),
    ("rel-gt0-undefined", NumericGraded(cutoff=0.1), 1, 0, False, 0.0),
    ("rel-gt0-undefined-tiny", NumericGraded(cutoff=1e9), 1e-12, 0, False, 0.0),
    ("abs-linear-half", NumericGraded(cutoff=2, mode="absolute"), 11, 10, True, 0.5),
    ("abs-linear-gt0", NumericGraded(cutoff=2, mode="absolute"), 1, 0, True, 0.5),
    ("abs-linear-beyond", NumericGraded(cutoff=2, mode="absolute"), 13, 10, False, 0.0),
    (
        "abs-quadratic",
        NumericGraded(cutoff=2, mode="absolute", decay="quadratic"),
        9,
        10,
        True,
        0.75,
    ),
    (
        "abs-full-credit",
        NumericGraded(cutoff=4, full_credit=2, mode="absolute"),
        13,
        10,
        False,
        0.5,
    ),
]


@pytest.mark.parametrize(
    ("primitive", "extracted", "expected", "check", "score"), _rows(NUMERIC_GRADED_ROWS)
)
def test_numeric_graded(
    primitive: NumericGraded, extracted: Any, expected: Any, check: bool, score: float
) -> None:
    assert primitive.check(extracted, expected) is check
    assert primitive.score(extracted, expected) == pytest.approx(score, abs=1e-12)


@pytest.mark.parametrize(
    "params",
    [
        pytest.param({"cutoff": 0}, id="cutoff-zero"),
        pytest.param({"cutoff": -0.1}, id="cutoff-negative"),
        pytest.param({"cutoff": 0.1, "full_credit": 0.1}, id="full-credit-equals-cutoff"),
        pytest.param({"cutoff": 0.1, "full_credit": 0.2}, id="full-credit-above-cutoff"),
        pytest.param({"cutoff": 0.1, "full_credit": -0.01}, id="full-credit-negative"),
        pytest.param({"cutoff": 0.1, "decay": "cubic"}, id="unknown-decay"),
        pytest.param({"cutoff": 0.1, "mode": "percent"}, id="unknown-mode"),
    ],
)
def test_numeric_graded_invalid_params(params: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        NumericGraded(**params)


def test_numeric_graded_defaults() -> None:
    primitive = NumericGraded(cutoff=0.1)
    assert (primitive.full_credit, primitive.mode, primitive.decay) == (None, "relative", "linear")


RANGE_GRADED_ROWS = [
    ("inside", NumericRangeGraded(min=10, max=20, margin=5), 15, True, 1.0),
    ("at-min", NumericRangeGraded(min=10, max=20, margin=5), 10, True, 1.0),
    ("at-max", NumericRangeGraded(min=10, max=20, margin=5), 20, True, 1.0),
    ("abs-shoulder-above", NumericRangeGraded(min=10, max=20, margin=5), 22.5, False, 0.5),
    ("abs-shoulder-below", NumericRangeGraded(min=10, max=20, margin=5), 7.5, False, 0.5),
    ("abs-shoulder-end", NumericRangeGraded(min=10, max=20, margin=5), 25, False, 0.0),
    ("abs-beyond", NumericRangeGraded(min=10, max=20, margin=5), 30, False, 0.0),
    (
        "abs-quadratic",
        NumericRangeGraded(min=10, max=20, margin=5, decay="quadratic"),
        22.5,
        False,
        0.75,
    ),
    # relative: shoulder = margin * (max - min) = 0.5 * 10 = 5
    (
        "rel-shoulder",
        NumericRangeGraded(min=10, max=20, margin=0.5, mode="relative"),
        22.5,
        False,
        0.5,
    ),
    (
        "rel-shoulder-below",
        NumericRangeGraded(min=10, max=20, margin=0.5, mode="relative"),
        6,
        False,
        0.2,
    ),
    ("rel-beyond", NumericRangeGraded(min=10, max=20, margin=0.5, mode="relative"), 25, False, 0.0),
    # exclusive bounds: the boundary fails the check but keeps the full score
    (
        "exclusive-min-boundary",
        NumericRangeGraded(min=10, max=20, margin=5, exclusive_min=True),
        10,
        False,
        1.0,
    ),
    (
        "exclusive-max-boundary",
        NumericRangeGraded(min=10, max=20, margin=5, exclusive_max=True),
        20,
        False,
        1.0,
    ),
    (
        "exclusive-min-inside",
        NumericRangeGraded(min=10, max=20, margin=5, exclusive_min=True),
        10.5,
        True,
        1.0,
    ),
    (
        "exclusive-max-other-end",
        NumericRangeGraded(min=10, max=20, margin=5, exclusive_max=True),
        10,
        True,
        1.0,
    ),
]


@pytest.mark.parametrize(("primitive", "extracted", "check", "score"), _rows(RANGE_GRADED_ROWS))
def test_numeric_range_graded(
    primitive: NumericRangeGraded, extracted: Any, check: bool, score: float
) -> None:
    # Ground truth unused.
    assert primitive.check(extracted, None) is check
    assert primitive.score(extracted, None) == pytest.approx(score, abs=1e-12)


@pytest.mark.parametrize(
    "params",
    [
        pytest.param({"min": 10, "max": 10, "margin": 1}, id="min-equals-max"),
        pytest.param({"min": 20, "max": 10, "margin": 1}, id="min-above-max"),
        pytest.param({"min": 0, "max": 10, "margin": 0}, id="margin-zero"),
        pytest.param({"min": 0, "max": 10, "margin": -1}, id="margin-negative"),
    ],
)
def test_numeric_range_graded_invalid_params(params: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        NumericRangeGraded(**params)


THRESHOLD_ROWS = [
    ("max-below", NumericThresholdGraded(direction="max", margin=0.1), 90, 100, True, 1.0),
    ("max-equal", NumericThresholdGraded(direction="max", margin=0.1), 100, 100, True, 1.0),
    ("max-rel-shoulder", NumericThresholdGraded(direction="max", margin=0.1), 105, 100, False, 0.5),
    ("max-rel-end", NumericThresholdGraded(direction="max", margin=0.1), 110, 100, False, 0.0),
    ("max-rel-beyond", NumericThresholdGraded(direction="max", margin=0.1), 150, 100, False, 0.0),
    (
        "max-rel-negative-gt",
        NumericThresholdGraded(direction="max", margin=0.1),
        -95,
        -100,
        False,
        0.5,
    ),
    ("min-above", NumericThresholdGraded(direction="min", margin=0.1), 120, 100, True, 1.0),
    ("min-equal", NumericThresholdGraded(direction="min", margin=0.1), 100, 100, True, 1.0),
    ("min-rel-shoulder", NumericThresholdGraded(direction="min", margin=0.1), 95, 100, False, 0.5),
    ("min-rel-beyond", NumericThresholdGraded(direction="min", margin=0.1), 80, 100, False, 0.0),
    (
        "max-abs-shoulder",
        NumericThresholdGraded(direction="max", margin=2, mode="absolute"),
        11,
        10,
        False,
        0.5,
    ),
    (
        "min-abs-shoulder",
        NumericThresholdGraded(direction="min", margin=2, mode="absolute"),
        9.5,
        10,
        False,
        0.75,
    ),
    (
        "max-quadratic",
        NumericThresholdGraded(direction="max", margin=0.1, decay="quadratic"),
        105,
        100,
        False,
        0.75,
    ),
    (
        "max-exclusive-equal",
        NumericThresholdGraded(direction="max", margin=0.1, exclusive=True),
        100,
        100,
        False,
        1.0,
    ),
    (
        "min-exclusive-equal",
        NumericThresholdGraded(direction="min", margin=0.1, exclusive=True),
        100,
        100,
        False,
        1.0,
    ),
    (
        "min-exclusive-above",
        NumericThresholdGraded(direction="min", margin=0.1, exclusive=True),
        101,
        100,
        True,
        1.0,
    ),
    ("rel-gt0-max-outside", NumericThresholdGraded(direction="max", margin=0.5), 1, 0, False, 0.0),
    ("rel-gt0-max-inside", NumericThresholdGraded(direction="max", margin=0.5), -1, 0, True, 1.0),
    (
        "rel-gt0-min-outside",
        NumericThresholdGraded(direction="min", margin=100),
        -1e-9,
        0,
        False,
        0.0,
    ),
    (
        "abs-gt0-shoulder",
        NumericThresholdGraded(direction="max", margin=2, mode="absolute"),
        1,
        0,
        False,
        0.5,
    ),
]


@pytest.mark.parametrize(
    ("primitive", "extracted", "expected", "check", "score"), _rows(THRESHOLD_ROWS)
)
def test_numeric_threshold_graded(
    primitive: NumericThresholdGraded, extracted: Any, expected: Any, check: bool, score: float
) -> None:
    assert primitive.check(extracted, expected) is check
    assert primitive.score(extracted, expected) == pytest.approx(score, abs=1e-12)


@pytest.mark.parametrize(
    "params",
    [
        pytest.param({"direction": "max", "margin": 0}, id="margin-zero"),
        pytest.param({"direction": "up", "margin": 1}, id="unknown-direction"),
        pytest.param({"margin": 1}, id="missing-direction"),
    ],
)
def test_numeric_threshold_graded_invalid_params(params: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        NumericThresholdGraded(**params)


# ---------------------------------------------------------------------------
# SetContainment, OrderedMatch, LiteralMatch
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("primitive", "extracted", "expected", "result"),
    _rows(
        [
            ("exact-same", SetContainment(), ["a", "b"], ["b", "a"], True),
            ("exact-duplicates", SetContainment(), ["a", "a", "b"], ["a", "b"], True),
            ("exact-missing", SetContainment(), ["a"], ["a", "b"], False),
            ("exact-extra", SetContainment(), ["a", "b", "c"], ["a", "b"], False),
            ("exact-no-normalization", SetContainment(), ["A", "b"], ["a", "b"], False),
            ("exact-empty", SetContainment(), [], [], True),
            ("subset-proper", SetContainment(mode="subset"), ["a"], ["a", "b"], True),
            ("subset-equal", SetContainment(mode="subset"), ["a", "b"], ["a", "b"], True),
            ("subset-empty", SetContainment(mode="subset"), [], ["a"], True),
            ("subset-extra-fails", SetContainment(mode="subset"), ["a", "c"], ["a", "b"], False),
            ("superset-proper", SetContainment(mode="superset"), ["a", "b", "c"], ["a", "b"], True),
            ("superset-equal", SetContainment(mode="superset"), ["a", "b"], ["a", "b"], True),
            ("superset-missing-fails", SetContainment(mode="superset"), ["a"], ["a", "b"], False),
            ("overlap-one", SetContainment(mode="overlap"), ["a", "x"], ["a", "b"], True),
            ("overlap-none", SetContainment(mode="overlap"), ["x", "y"], ["a", "b"], False),
            ("overlap-empty", SetContainment(mode="overlap"), [], ["a"], False),
            (
                "overlap-min2-met",
                SetContainment(mode="overlap", min_overlap=2),
                ["a", "b", "x"],
                ["a", "b", "c"],
                True,
            ),
            (
                "overlap-min2-short",
                SetContainment(mode="overlap", min_overlap=2),
                ["a", "x"],
                ["a", "b", "c"],
                False,
            ),
            (
                "overlap-min2-dupes",
                SetContainment(mode="overlap", min_overlap=2),
                ["a", "a"],
                ["a", "b"],
                False,
            ),
            (
                "overlap-min0-means-1",
                SetContainment(mode="overlap", min_overlap=0),
                ["x"],
                ["a"],
                False,
            ),
            ("tuple-input", SetContainment(), ("a", "b"), ["a", "b"], True),
        ]
    ),
)
def test_set_containment(
    primitive: SetContainment, extracted: Any, expected: Any, result: bool
) -> None:
    assert primitive.check(extracted, expected) is result


def test_set_containment_unknown_mode_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        SetContainment(mode="intersection").check(["a"], ["a"])  # type: ignore[arg-type]


def test_set_containment_defaults() -> None:
    assert (SetContainment().mode, SetContainment().min_overlap) == ("exact", None)


@pytest.mark.parametrize(
    ("primitive", "extracted", "expected", "result"),
    _rows(
        [
            ("same", OrderedMatch(), ["EGFR", "KRAS"], ["EGFR", "KRAS"], True),
            ("default-normalization", OrderedMatch(), [" egfr", "Kras "], ["EGFR", "KRAS"], True),
            ("order-matters", OrderedMatch(), ["KRAS", "EGFR"], ["EGFR", "KRAS"], False),
            ("shorter", OrderedMatch(), ["EGFR"], ["EGFR", "KRAS"], False),
            ("longer", OrderedMatch(), ["EGFR", "KRAS", "BRAF"], ["EGFR", "KRAS"], False),
            ("empty", OrderedMatch(), [], [], True),
            ("str-of-items", OrderedMatch(), [1, 2], ["1", "2"], True),
            ("no-normalize", OrderedMatch(normalize=[]), ["egfr"], ["EGFR"], False),
            (
                "punctuation",
                OrderedMatch(normalize=["remove_punctuation"]),
                ["K-RAS"],
                ["KRAS"],
                True,
            ),
        ]
    ),
)
def test_ordered_match(
    primitive: OrderedMatch, extracted: Any, expected: Any, result: bool
) -> None:
    assert primitive.check(extracted, expected) is result


@pytest.mark.parametrize(
    ("extracted", "expected", "result"),
    [
        pytest.param("missense", "missense", True, id="same"),
        pytest.param("Missense", "missense", False, id="case-sensitive"),
        pytest.param(" missense", "missense", False, id="no-strip"),
        pytest.param(1, 1.0, True, id="python-equality-int-float"),
        pytest.param(True, 1, True, id="python-equality-bool-int"),
        pytest.param("1", 1, False, id="str-vs-int"),
        pytest.param(None, None, True, id="none"),
    ],
)
def test_literal_match(extracted: Any, expected: Any, result: bool) -> None:
    assert LiteralMatch().check(extracted, expected) is result


# ---------------------------------------------------------------------------
# Dates
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("primitive", "extracted", "expected", "result"),
    _rows(
        [
            ("flexible-long-form", DateMatch(), "March 5, 2024", "2024-03-05", True),
            ("flexible-day-first-text", DateMatch(), "5 March 2024", "2024-03-05", True),
            ("flexible-abbrev", DateMatch(), "Mar 5 2024", "2024-03-05", True),
            ("time-ignored", DateMatch(), "2024-03-05T23:59:00", "2024-03-05", True),
            ("other-day", DateMatch(), "March 6, 2024", "2024-03-05", False),
            ("date-object", DateMatch(), dt.date(2024, 3, 5), "2024-03-05", True),
            ("datetime-object", DateMatch(), dt.datetime(2024, 3, 5, 8), dt.date(2024, 3, 5), True),
            ("slash-default-month-first", DateMatch(), "05/03/2024", "2024-05-03", True),
            ("explicit-format", DateMatch(format="%d/%m/%Y"), "05/03/2024", "05/03/2024", True),
            (
                "explicit-format-day-first",
                DateMatch(format="%d/%m/%Y"),
                "05/03/2024",
                dt.date(2024, 3, 5),
                True,
            ),
            (
                "explicit-format-mismatch",
                DateMatch(format="%d/%m/%Y"),
                "2024-03-05",
                "05/03/2024",
                False,
            ),
            ("unparseable-extracted", DateMatch(), "not a date", "2024-03-05", False),
            ("unparseable-expected", DateMatch(), "2024-03-05", "sometime", False),
            ("empty", DateMatch(), "", "2024-03-05", False),
            ("none", DateMatch(), None, "2024-03-05", False),
        ]
    ),
)
def test_date_match(primitive: DateMatch, extracted: Any, expected: Any, result: bool) -> None:
    assert primitive.check(extracted, expected) is result


@pytest.mark.parametrize(
    ("primitive", "extracted", "expected", "result"),
    _rows(
        [
            ("days-inside", DateTolerance(tolerance=2), "2024-03-07", "2024-03-05", True),
            ("days-before", DateTolerance(tolerance=2), "2024-03-03", "2024-03-05", True),
            ("days-outside", DateTolerance(tolerance=2), "2024-03-08", "2024-03-05", False),
            ("days-zero", DateTolerance(tolerance=0), "March 5, 2024", "2024-03-05", True),
            ("days-default-unit", DateTolerance(tolerance=1), "2024-03-06", "2024-03-05", True),
            (
                "hours-inside",
                DateTolerance(tolerance=3, unit="hours"),
                "2024-03-05 13:00",
                "2024-03-05 10:00",
                True,
            ),
            (
                "hours-outside",
                DateTolerance(tolerance=3, unit="hours"),
                "2024-03-05 13:01",
                "2024-03-05 10:00",
                False,
            ),
            (
                "hours-across-days",
                DateTolerance(tolerance=3, unit="hours"),
                "2024-03-06 01:00",
                "2024-03-05 23:00",
                True,
            ),
            (
                "minutes-inside",
                DateTolerance(tolerance=30, unit="minutes"),
                "2024-03-05 10:30",
                "2024-03-05 10:00",
                True,
            ),
            (
                "minutes-outside",
                DateTolerance(tolerance=30, unit="minutes"),
                "2024-03-05 10:31",
                "2024-03-05 10:00",
                False,
            ),
            ("unparseable", DateTolerance(tolerance=100), "whenever", "2024-03-05", False),
            (
                "date-objects",
                DateTolerance(tolerance=1),
                dt.date(2024, 3, 6),
                dt.date(2024, 3, 5),
                True,
            ),
        ]
    ),
)
def test_date_tolerance(
    primitive: DateTolerance, extracted: Any, expected: Any, result: bool
) -> None:
    assert primitive.check(extracted, expected) is result


@pytest.mark.parametrize(
    ("primitive", "extracted", "result"),
    [
        pytest.param(
            DateRange(min="2024-01-01", max="2024-12-31"), "2024-06-15", True, id="inside"
        ),
        pytest.param(
            DateRange(min="2024-01-01", max="2024-12-31"), "2024-01-01", True, id="at-min"
        ),
        pytest.param(
            DateRange(min="2024-01-01", max="2024-12-31"), "2024-12-31", True, id="at-max"
        ),
        pytest.param(
            DateRange(min="2024-01-01", max="2024-12-31"), "2023-12-31", False, id="before"
        ),
        pytest.param(
            DateRange(min="2024-01-01", max="2024-12-31"), "2025-01-01", False, id="after"
        ),
        pytest.param(
            DateRange(min="2024-01-01", max="2024-12-31"),
            "June 15, 2024",
            True,
            id="flexible-format",
        ),
        pytest.param(DateRange(min="2024-01-01"), "2999-01-01", True, id="min-only"),
        pytest.param(DateRange(min="2024-01-01"), "1999-01-01", False, id="min-only-before"),
        pytest.param(DateRange(max="2024-01-01"), "1999-01-01", True, id="max-only"),
        pytest.param(DateRange(), "1999-01-01", True, id="no-bounds"),
        pytest.param(
            DateRange(min="2024-01-01", max="2024-12-31"), "soon", False, id="unparseable"
        ),
        pytest.param(
            DateRange(min="2024-01-01", max="2024-12-31"),
            dt.date(2024, 2, 29),
            True,
            id="date-object",
        ),
    ],
)
def test_date_range(primitive: DateRange, extracted: Any, result: bool) -> None:
    # Ground truth unused.
    assert primitive.check(extracted, "1900-01-01") is result


# ---------------------------------------------------------------------------
# Trace primitives
# ---------------------------------------------------------------------------

CITATIONS = "--- AI Message ---\nThe drug inhibits the target [1] [2] [3]"


@pytest.mark.parametrize(
    ("primitive", "trace", "result"),
    [
        pytest.param(TraceRegex(pattern=r"\[\d+\]"), CITATIONS, True, id="regex-default-once"),
        pytest.param(TraceRegex(pattern=r"\[\d+\]"), "no citations", False, id="regex-no-match"),
        pytest.param(
            TraceRegex(pattern=r"\[\d+\]", count_min=3), CITATIONS, True, id="regex-count-min-met"
        ),
        pytest.param(
            TraceRegex(pattern=r"\[\d+\]", count_min=4),
            CITATIONS,
            False,
            id="regex-count-min-short",
        ),
        pytest.param(
            TraceRegex(pattern=r"\[\d+\]", count_min=0), "nothing", True, id="regex-count-min-zero"
        ),
        pytest.param(
            TraceRegex(pattern=r"AI Message"), CITATIONS, True, id="regex-sees-the-header"
        ),
        pytest.param(TraceContains(substring="inhibits"), CITATIONS, True, id="contains"),
        pytest.param(
            TraceContains(substring="Inhibits"), CITATIONS, False, id="contains-case-sensitive"
        ),
        pytest.param(TraceContains(substring="[1]"), CITATIONS, True, id="contains-literal"),
        pytest.param(TraceLength(min=5, max=10), "12345", True, id="chars-at-min"),
        pytest.param(TraceLength(min=5, max=10), "1234567890", True, id="chars-at-max"),
        pytest.param(TraceLength(min=5, max=10), "1234", False, id="chars-below"),
        pytest.param(TraceLength(min=5, max=10), "12345678901", False, id="chars-above"),
        pytest.param(
            TraceLength(min=4, unit="words"), " one  two\nthree\tfour ", True, id="words-at-min"
        ),
        pytest.param(
            TraceLength(min=5, unit="words"), " one  two\nthree\tfour ", False, id="words-below"
        ),
        pytest.param(
            TraceLength(max=3, unit="words"), "one two\tthree\nfour", False, id="words-above"
        ),
        pytest.param(TraceLength(max=14, unit="chars"), "one two three", True, id="chars-max-only"),
        pytest.param(TraceLength(), "", True, id="no-bounds"),
    ],
)
def test_trace_primitives(primitive: Any, trace: str, result: bool) -> None:
    assert primitive.check_trace(trace) is result


@pytest.mark.parametrize(
    ("ground_truth", "trace", "result"),
    [
        pytest.param(True, CITATIONS, True, id="gt-true-matches"),
        pytest.param(True, "plain", False, id="gt-true-no-match"),
        pytest.param(False, CITATIONS, False, id="gt-false-matches"),
        pytest.param(False, "plain", True, id="gt-false-no-match"),
    ],
)
def test_trace_field_passes_when_check_equals_ground_truth(
    ground_truth: bool, trace: str, result: bool
) -> None:
    class Answer(BaseAnswer):
        cited: bool = VerifiedField(
            description="Citations present",
            ground_truth=ground_truth,
            verify_with=TraceRegex(pattern=r"\[\d+\]", count_min=3),
        )

    answer = Answer.model_construct()
    answer._raw_trace = trace
    assert evaluate_fields(answer)["cited"].result is result
    assert answer.verify() is result


# ---------------------------------------------------------------------------
# SemanticMatch
# ---------------------------------------------------------------------------


def _word_overlap(a: str, b: str) -> float:
    left, right = set(a.lower().split()), set(b.lower().split())
    return len(left & right) / len(left | right) if left | right else 1.0


@pytest.fixture
def no_similarity() -> Iterator[None]:
    set_similarity_function(None)
    yield
    set_similarity_function(None)


@pytest.fixture
def word_similarity() -> Iterator[None]:
    set_similarity_function(_word_overlap)
    try:
        yield
    finally:
        set_similarity_function(None)


@pytest.mark.usefixtures("no_similarity")
def test_semantic_match_unavailable_without_a_similarity_function() -> None:
    with pytest.raises(SemanticMatchUnavailable):
        SemanticMatch().check("spike protein", "the spike protein")


@pytest.mark.usefixtures("no_similarity")
def test_semantic_match_unavailable_propagates_out_of_verify() -> None:
    class Answer(BaseAnswer):
        protein: str = VerifiedField(
            description="Protein", ground_truth="spike protein", verify_with=SemanticMatch()
        )

    with pytest.raises(SemanticMatchUnavailable):
        Answer(protein="spike").verify()


@pytest.mark.usefixtures("word_similarity")
@pytest.mark.parametrize(
    ("primitive", "extracted", "expected", "result"),
    [
        pytest.param(SemanticMatch(), "Spike Protein", "spike protein", True, id="identical-words"),
        pytest.param(SemanticMatch(), "spike", "spike protein", False, id="below-default-0.85"),
        pytest.param(
            SemanticMatch(threshold=0.5), "spike", "spike protein", True, id="at-threshold-passes"
        ),
        pytest.param(
            SemanticMatch(threshold=0.51), "spike", "spike protein", False, id="below-threshold"
        ),
        pytest.param(SemanticMatch(threshold=0), "x", "y", True, id="threshold-zero"),
        pytest.param(SemanticMatch(), 42, "42", True, id="str-of-value"),
    ],
)
def test_semantic_match_with_similarity_function(
    primitive: SemanticMatch, extracted: Any, expected: Any, result: bool
) -> None:
    assert primitive.check(extracted, expected) is result


def test_semantic_match_default_threshold() -> None:
    assert SemanticMatch().threshold == 0.85


@pytest.mark.parametrize(
    "threshold", [pytest.param(-0.1, id="negative"), pytest.param(1.1, id="above-one")]
)
def test_semantic_match_threshold_bounds(threshold: float) -> None:
    with pytest.raises(ValueError):
        SemanticMatch(threshold=threshold)


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


# ---------------------------------------------------------------------------
# evaluate_fields: scores, clamping, null fields
# ---------------------------------------------------------------------------


class ScoreProbe(VerificationPrimitive):
    """Test primitive: passes when extracted == expected; ``score`` returns ``raw``."""

    raw: float | None = None

    def check(self, extracted: Any, expected: Any) -> bool:
        return bool(extracted == expected)

    def score(self, extracted: Any, expected: Any) -> float:
        if self.raw is None:
            raise RuntimeError("score exploded")
        return self.raw


def _probe_answer(primitive: VerificationPrimitive, value: Any) -> Any:
    class Answer(BaseAnswer):
        x: Any = VerifiedField(description="x", ground_truth="ok", verify_with=primitive)

    return Answer(x=value)


@pytest.mark.parametrize(
    ("raw", "value", "result", "score"),
    [
        pytest.param(None, "ok", True, 1.0, id="score-raises-passing-degrades-to-1"),
        pytest.param(None, "no", False, 0.0, id="score-raises-failing-degrades-to-0"),
        pytest.param(1.7, "ok", True, 1.0, id="clamped-above"),
        pytest.param(-0.3, "no", False, 0.0, id="clamped-below"),
        pytest.param(0.4, "no", False, 0.4, id="partial-credit-on-failure-kept"),
        pytest.param(0.4, "ok", True, 0.4, id="score-independent-of-check"),
        pytest.param(1e9, "no", False, 1.0, id="huge-clamped"),
    ],
)
def test_evaluate_fields_scores(raw: float | None, value: Any, result: bool, score: float) -> None:
    answer = _probe_answer(ScoreProbe(raw=raw), value)
    outcome = evaluate_fields(answer)["x"]
    assert outcome.result is result
    assert outcome.score == score
    assert answer.verify() is result
    assert answer.verify_granular() == score


def test_graded_score_feeds_verify_granular() -> None:
    class Answer(BaseAnswer):
        value: float = VerifiedField(
            description="v", ground_truth=100, verify_with=NumericGraded(cutoff=0.1)
        )
        flag: bool = VerifiedField(description="f", ground_truth=True, verify_with=BooleanMatch())

    answer = Answer(value=105, flag=True)
    outcomes = evaluate_fields(answer)
    assert outcomes["value"].result is True
    assert outcomes["value"].score == pytest.approx(0.5)
    assert answer.verify_granular() == pytest.approx(0.75)


class NullableAnswer(BaseAnswer):
    x: str | None = VerifiedField(description="x", ground_truth="a", verify_with=ExactMatch())
    y: str = VerifiedField(description="y", ground_truth="b", verify_with=ExactMatch(), weight=3.0)


def test_null_field_result_is_none_and_fails() -> None:
    answer = NullableAnswer.model_construct(y="b")
    answer._null_fields = frozenset({"x"})
    outcomes = evaluate_fields(answer)
    assert outcomes["x"].result is None
    assert outcomes["x"].score is None
    assert outcomes["y"].result is True
    assert answer.verify() is False
    # W includes the null field's weight: 3 / (1 + 3)
    assert answer.verify_granular() == pytest.approx(3 / 4)


def test_null_field_is_not_checked_even_if_a_value_is_present() -> None:
    answer = NullableAnswer(x="a", y="b")
    answer._null_fields = frozenset({"x"})
    assert evaluate_fields(answer)["x"].result is None
    assert answer.verify() is False


def test_null_field_fails_field_check_under_any_of() -> None:
    class Answer(BaseAnswer):
        x: str | None = VerifiedField(description="x", ground_truth="a", verify_with=ExactMatch())
        y: str | None = VerifiedField(description="y", ground_truth="b", verify_with=ExactMatch())

        class VerificationStrategy:
            verify_strategy = AnyOf(conditions=[FieldCheck(field="x"), FieldCheck(field="y")])

    answer = Answer(x="a", y="wrong")
    assert answer.verify() is True
    answer._null_fields = frozenset({"x"})
    assert answer.verify() is False
    assert answer.verify_granular() == 0.0


def test_outcome_carries_expected_weight_and_primitive() -> None:
    outcome = evaluate_fields(NullableAnswer(x="A ", y="b"))["y"]
    assert (outcome.name, outcome.expected, outcome.weight) == ("y", "b", 3.0)
    assert outcome.primitive == ExactMatch()


def test_zero_total_weight_gives_zero_granular() -> None:
    class Answer(BaseAnswer):
        x: bool = VerifiedField(
            description="x", ground_truth=True, verify_with=BooleanMatch(), weight=0
        )

    answer = Answer(x=True)
    assert answer.verify() is True
    assert answer.verify_granular() == 0.0


def test_auto_verify_any_of_spec_example() -> None:
    # Spec 3.6 [verified]: gene (w=1, fails) and count (w=2, passes) under AnyOf.
    class Answer(BaseAnswer):
        gene: str = VerifiedField(description="gene", ground_truth="TP53", verify_with=ExactMatch())
        count: int = VerifiedField(
            description="count", ground_truth=23, verify_with=NumericExact(), weight=2.0
        )

        class VerificationStrategy:
            verify_strategy = AnyOf(
                conditions=[FieldCheck(field="gene"), FieldCheck(field="count")]
            )

    answer = Answer(gene="KRAS", count=23)
    assert answer.verify() is True
    assert answer.verify_granular() == pytest.approx(2 / 3)


# ---------------------------------------------------------------------------
# Composition nodes (spec 3.4)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("node", "results", "passed"),
    [
        pytest.param(AllOf(), {}, True, id="empty-all_of-passes"),
        pytest.param(AnyOf(), {}, False, id="empty-any_of-fails"),
        pytest.param(AtLeastN(n=0), {}, True, id="at_least_0-empty-passes"),
        pytest.param(AtLeastN(n=1), {}, False, id="at_least_1-empty-fails"),
        pytest.param(FieldCheck(field="a"), {"a": True}, True, id="field-true"),
        pytest.param(FieldCheck(field="a"), {"a": False}, False, id="field-false"),
        pytest.param(FieldCheck(field="a"), {"a": None}, False, id="field-none-fails"),
        pytest.param(
            AtLeastN(
                n=2,
                conditions=[FieldCheck(field="a"), FieldCheck(field="b"), FieldCheck(field="c")],
            ),
            {"a": True, "b": None, "c": True},
            True,
            id="at_least_2-met",
        ),
        pytest.param(
            AtLeastN(
                n=2,
                conditions=[FieldCheck(field="a"), FieldCheck(field="b"), FieldCheck(field="c")],
            ),
            {"a": True, "b": None, "c": False},
            False,
            id="at_least_2-short",
        ),
        pytest.param(
            AllOf(
                conditions=[
                    FieldCheck(field="a"),
                    AnyOf(conditions=[FieldCheck(field="b"), FieldCheck(field="c")]),
                ]
            ),
            {"a": True, "b": False, "c": True},
            True,
            id="nested",
        ),
    ],
)
def test_evaluate_strategy(node: Any, results: dict[str, bool | None], passed: bool) -> None:
    assert evaluate_strategy(node, results) is passed


def test_field_check_on_missing_field_raises() -> None:
    with pytest.raises(KeyError, match="missing"):
        evaluate_strategy(FieldCheck(field="missing"), {"a": True})


@pytest.mark.parametrize(
    ("node", "label"),
    [
        pytest.param(AllOf(), "all_of", id="all_of"),
        pytest.param(AnyOf(), "any_of", id="any_of"),
        pytest.param(AtLeastN(n=2), "at_least_n(2)", id="at_least_n"),
        pytest.param(None, None, id="none"),
    ],
)
def test_strategy_label(node: Any, label: str | None) -> None:
    assert strategy_label(node) == label


# ---------------------------------------------------------------------------
# ConditionalGroundTruth
# ---------------------------------------------------------------------------


class SeverityAnswer(BaseAnswer):
    plan: str = VerifiedField(
        description="The recommended plan",
        ground_truth=ConditionalGroundTruth(
            source="node_results.triage.parsed.severity",
            cases={
                "high": GroundTruthCase(value="admit"),
                "low": GroundTruthCase(
                    value="discharge", verify_with=ContainsAny(substrings=["home", "discharge"])
                ),
                "3": GroundTruthCase(value="observe"),
            },
            default=GroundTruthCase(value="reassess"),
        ),
        verify_with=ExactMatch(),
    )


def _severity(plan: str, context: dict[str, Any] | None) -> SeverityAnswer:
    answer = SeverityAnswer(plan=plan)
    answer._scenario_context = context
    return answer


def _triage(severity: Any) -> dict[str, Any]:
    return {"node_results": {"triage": {"parsed": {"severity": severity}}}}


@pytest.mark.parametrize(
    ("plan", "context", "expected", "result"),
    [
        pytest.param("Reassess", None, "reassess", True, id="default-outside-scenario"),
        pytest.param("admit", None, "reassess", False, id="case-value-outside-scenario-fails"),
        pytest.param("ADMIT ", _triage("high"), "admit", True, id="matching-case"),
        pytest.param("reassess", _triage("high"), "admit", False, id="matching-case-default-fails"),
        pytest.param("send home", _triage("low"), "discharge", True, id="case-primitive-override"),
        pytest.param(
            "Discharge",
            _triage("low"),
            "discharge",
            False,
            id="override-is-case-sensitive-contains",
        ),
        pytest.param("observe", _triage(3), "observe", True, id="case-keyed-by-str-of-value"),
        pytest.param("reassess", _triage("medium"), "reassess", True, id="no-matching-case"),
        pytest.param("reassess", {"node_results": {}}, "reassess", True, id="missing-node"),
        pytest.param("reassess", {}, "reassess", True, id="empty-context"),
    ],
)
def test_conditional_ground_truth(
    plan: str, context: dict[str, Any] | None, expected: str, result: bool
) -> None:
    answer = _severity(plan, context)
    outcome = evaluate_fields(answer)["plan"]
    assert outcome.expected == expected
    assert outcome.result is result
    assert answer.verify() is result


def test_conditional_case_override_replaces_the_field_primitive() -> None:
    outcome = evaluate_fields(_severity("home", _triage("low")))["plan"]
    assert outcome.primitive == ContainsAny(substrings=["home", "discharge"])
    default = evaluate_fields(_severity("home", None))["plan"]
    assert default.primitive == ExactMatch()


def test_conditional_ground_truth_is_stored_with_marker_and_left_out_of_correct() -> None:
    meta = SeverityAnswer.verified_fields()["plan"]
    assert meta.is_conditional
    assert meta.ground_truth["__conditional__"] is True
    assert meta.ground_truth["source"] == "node_results.triage.parsed.severity"
    assert set(meta.ground_truth["cases"]) == {"high", "low", "3"}
    assert SeverityAnswer(plan="x").correct == {}
