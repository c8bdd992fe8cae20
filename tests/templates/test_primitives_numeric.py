"""Pass/fail numeric primitives (spec 3.2).

NumericExact, NumericTolerance, NumericMinimum, NumericMaximum, NumericRange, and the
errors they let through.

Each table row is ``(primitive, extracted, expected, check result[, score])``.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_karenina.templates import (
    NumericExact,
    NumericGraded,
    NumericMaximum,
    NumericMinimum,
    NumericRange,
    NumericTolerance,
    VerificationPrimitive,
)
from tests.templates.primitive_helpers import rows as _rows

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
