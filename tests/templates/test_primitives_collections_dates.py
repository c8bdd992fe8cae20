"""Collection and date primitives (spec 3.2).

SetContainment, OrderedMatch, LiteralMatch, DateMatch, DateTolerance, DateRange.

Each table row is ``(primitive, extracted, expected, check result[, score])``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from pytest_karenina.templates import (
    DateMatch,
    DateRange,
    DateTolerance,
    LiteralMatch,
    OrderedMatch,
    SetContainment,
)
from tests.templates.primitive_helpers import rows as _rows

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
