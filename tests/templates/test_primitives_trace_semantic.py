"""Trace primitives (TraceRegex, TraceContains, TraceLength) and SemanticMatch (spec 3.2-3.3)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pytest_karenina.templates import (
    BaseAnswer,
    SemanticMatch,
    TraceContains,
    TraceLength,
    TraceRegex,
    VerifiedField,
    evaluate_fields,
)
from pytest_karenina.templates.primitives import (
    SemanticMatchUnavailable,
    set_similarity_function,
)

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
