"""Graded numeric primitives (spec 3.2).

NumericGraded, NumericRangeGraded, NumericThresholdGraded.

Each table row is ``(primitive, extracted, expected, check result[, score])``.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_karenina.templates import (
    NumericGraded,
    NumericRangeGraded,
    NumericThresholdGraded,
)
from tests.templates.primitive_helpers import rows as _rows

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
