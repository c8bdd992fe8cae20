"""Reading raw judge or callable output as trait values: booleans, scores and literal labels."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_karenina.rubrics.scoring import (
    INVALID_INDEX,
    TraitValueError,
    boolean_value,
    clamp,
    evaluation_error_label,
    integer_value,
    literal_index,
    score_value,
)

TONES = {"formal": "Stiff and polite", "Casual": "Relaxed", "sarcastic": "Biting"}


# --- boolean_value -------------------------------------------------------------------------


@pytest.mark.parametrize("raw", [True, False])
def test_booleans_pass_through_unchanged(raw: bool) -> None:
    assert boolean_value(raw) is raw


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(0, False), (0.0, False), (1, True), (-3, True), (0.25, True), (2.0, True)],
)
def test_numbers_are_true_unless_zero(raw: float, expected: bool) -> None:
    assert boolean_value(raw) is expected


@pytest.mark.parametrize("raw", ["false", "FALSE", " False ", "0", "no", "No", "", "   "])
def test_false_words_and_blank_strings_are_false(raw: str) -> None:
    assert boolean_value(raw) is False


@pytest.mark.parametrize("raw", ["true", "yes", "1", "TRUE", "nope", "maybe", "off"])
def test_every_other_string_is_true(raw: str) -> None:
    # Only the listed false words count as false; anything else, even "nope", reads as true.
    assert boolean_value(raw) is True


@pytest.mark.parametrize("raw", [None, [], [True], {"result": True}, object()])
def test_non_scalar_values_are_not_booleans(raw: Any) -> None:
    with pytest.raises(TraitValueError, match="expected true or false"):
        boolean_value(raw)


def test_trait_value_error_is_a_value_error() -> None:
    assert issubclass(TraitValueError, ValueError)


# --- integer_value / clamp / score_value ---------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (4, 4),
        (-2, -2),
        (True, 1),
        (False, 0),
        (3.9, 3),  # truncation, not rounding
        (-3.9, -3),  # truncation goes towards zero
        ("4", 4),
        (" 7 ", 7),
        ("4.6", 4),
        ("-1", -1),
    ],
)
def test_integer_value_reads_whole_numbers(raw: Any, expected: int) -> None:
    value = integer_value(raw)
    assert value == expected
    assert type(value) is int


@pytest.mark.parametrize(
    "raw", ["four", "", "4 points", None, [4], {"score": 4}, float("nan"), float("inf"), "nan"]
)
def test_integer_value_rejects_garbage(raw: Any) -> None:
    with pytest.raises(TraitValueError, match="expected a whole number"):
        integer_value(raw)


@pytest.mark.parametrize("raw", ["inf", "-Infinity", "1e400"])
def test_integer_value_rejects_infinite_strings_as_trait_value_errors(raw: str) -> None:
    with pytest.raises(TraitValueError):
        integer_value(raw)


@pytest.mark.parametrize(
    ("value", "low", "high", "expected"),
    [
        (3, 1, 5, 3),
        (0, 1, 5, 1),
        (9, 1, 5, 5),
        (1, 1, 5, 1),
        (5, 1, 5, 5),
        (-10, None, 5, -10),
        (10, 1, None, 10),
        (10, None, None, 10),
    ],
)
def test_clamp(value: int, low: int | None, high: int | None, expected: int) -> None:
    assert clamp(value, low, high) == expected


def test_score_in_range_has_no_original() -> None:
    assert score_value(3, 1, 5) == (3, None)
    assert score_value(1, 1, 5) == (1, None)
    assert score_value(5, 1, 5) == (5, None)


def test_score_above_range_is_clamped_and_keeps_the_original() -> None:
    assert score_value(7, 1, 5) == (5, 7)


def test_score_below_range_is_clamped_and_keeps_the_original() -> None:
    assert score_value(-2, 1, 5) == (1, -2)
    assert score_value("0", 1, 5) == (1, 0)


def test_score_original_is_the_truncated_integer_not_the_raw_float() -> None:
    # 6.8 truncates to 6, which is what is clamped and reported as the original.
    assert score_value(6.8, 1, 5) == (5, 6)
    # 5.9 truncates to 5, which is in range: nothing was clamped.
    assert score_value(5.9, 1, 5) == (5, None)


def test_score_value_parses_numeric_strings() -> None:
    assert score_value(" 4 ", 1, 5) == (4, None)
    assert score_value("10", 0, 3) == (3, 10)


def test_score_value_rejects_garbage() -> None:
    with pytest.raises(TraitValueError):
        score_value("excellent", 1, 5)


# --- literal_index -------------------------------------------------------------------------


@pytest.mark.parametrize(("label", "index"), [("formal", 0), ("Casual", 1), ("sarcastic", 2)])
def test_exact_label_gives_its_position(label: str, index: int) -> None:
    assert literal_index(label, TONES) == (index, label)


@pytest.mark.parametrize(
    ("label", "index", "canonical"),
    [("FORMAL", 0, "formal"), ("casual", 1, "Casual"), ("  Sarcastic ", 2, "sarcastic")],
)
def test_case_insensitive_match_returns_the_canonical_name(
    label: str, index: int, canonical: str
) -> None:
    assert literal_index(label, TONES) == (index, canonical)


@pytest.mark.parametrize("label", ["friendly", "", "formally", "form"])
def test_unknown_label_is_invalid_and_kept_as_given(label: str) -> None:
    assert literal_index(label, TONES) == (INVALID_INDEX, label)
    assert INVALID_INDEX == -1


def test_non_string_label_is_compared_as_text() -> None:
    classes = {"1": "one star", "2": "two stars"}
    assert literal_index(2, classes) == (1, "2")
    assert literal_index(None, TONES) == (-1, "None")


def test_no_classes_means_every_label_is_invalid() -> None:
    assert literal_index("formal", {}) == (-1, "formal")


def test_evaluation_error_label_embeds_the_reason() -> None:
    assert evaluation_error_label("timeout") == "[EVALUATION_ERROR: timeout]"
