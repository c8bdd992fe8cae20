"""Hypothesis properties of normalizers and primitives (spec sections 3.1 and 3.2).

Only properties that follow from the spec are asserted. Two that look plausible
but are false, and are therefore pinned by examples instead:

* a *sequence* of normalizer names is not idempotent in general: removing
  punctuation after stripping can expose new edge or doubled whitespace;
* ``NumericGraded`` without ``full_credit`` passes at ``d == cutoff`` where its
  score is 0, so "check passes => score > 0" does not hold;
* "score == 1 only if d <= full_credit" holds for the real-valued formula but
  not in floating point (``1 - r`` rounds to 1.0 for tiny ``r``), so scores
  are compared with an exact oracle up to a tolerance instead.

Floats are bounded and finite: the spec does not define NaN/inf behaviour.
"""

from __future__ import annotations

import itertools
import string
from fractions import Fraction
from typing import Any

import pytest

from pytest_karenina.templates import (
    BooleanMatch,
    ExactMatch,
    NumericGraded,
    NumericRangeGraded,
    NumericThresholdGraded,
    NumericTolerance,
    OrderedMatch,
    SetContainment,
    SynonymMap,
)
from pytest_karenina.templates.primitives import (
    NORMALIZER_NAMES,
    apply_normalizer,
    apply_normalizers,
)

hypothesis = pytest.importorskip(
    "hypothesis", reason="property tests need the dev extra: pip install -e '.[dev]'"
)
assume, given, settings = hypothesis.assume, hypothesis.given, hypothesis.settings
st = hypothesis.strategies

# Text with plenty of whitespace (including Unicode spaces) and ASCII punctuation.
INTERESTING = " \t\n\r\x0b\x0c\x1c\x85\xa0\u2003\u3000.,;:!?-'\"()[]{}_/\\aAbBzZ0İΣß"
texts = st.text(alphabet=st.one_of(st.sampled_from(INTERESTING), st.characters()), max_size=40)
names = st.sampled_from(NORMALIZER_NAMES)
name_sequences = st.lists(names, max_size=6)
finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
tolerances = st.floats(min_value=0, max_value=1e3, allow_nan=False, allow_infinity=False)
items = st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), max_size=6)
decays = st.sampled_from(["linear", "quadratic"])
modes = st.sampled_from(["relative", "absolute"])

WHITESPACE_OPS = {"strip", "collapse_whitespace"}


# ---------------------------------------------------------------------------
# Normalizers
# ---------------------------------------------------------------------------


@settings(max_examples=200)
@given(name=names, text=texts)
def test_every_normalizer_name_is_idempotent(name: str, text: str) -> None:
    once = apply_normalizer(name, text)
    assert apply_normalizer(name, once) == once


def is_idempotent_order(sequence: list[str]) -> bool:
    """Whether applying ``sequence`` twice always equals applying it once.

    ``lowercase`` neither creates nor removes whitespace or ASCII punctuation,
    so it never matters. Only the first ``remove_punctuation`` matters (later
    ones find nothing to remove). Removing punctuation after a whitespace
    operation can leave edge or doubled whitespace, which the *second* pass's
    whitespace operations then change, unless the whitespace operations after
    it already normalise that: a ``collapse_whitespace``, or a ``strip`` when
    the operations before it only stripped (no inner runs were collapsed).
    """
    ops = [op for op in sequence if op != "lowercase"]
    if "remove_punctuation" not in ops:
        return True
    first = ops.index("remove_punctuation")
    before, after = set(ops[:first]), set(ops[first + 1 :])
    if not before & WHITESPACE_OPS:
        return True
    if "collapse_whitespace" in after:
        return True
    return "strip" in after and "collapse_whitespace" not in before


@settings(max_examples=200)
@given(sequence=name_sequences, text=texts)
def test_normalizer_sequences_in_a_stable_order_are_idempotent(
    sequence: list[str], text: str
) -> None:
    assume(is_idempotent_order(sequence))
    once = apply_normalizers(sequence, text)
    assert apply_normalizers(sequence, once) == once


def test_order_characterisation_is_exact_for_short_sequences() -> None:
    # Exhaustive over every sequence of up to five names: on this witness, the
    # sequence is idempotent exactly when is_idempotent_order() says so.
    witness = " . A  .  b . "
    disagreements = []
    for length in range(6):
        for sequence in itertools.product(NORMALIZER_NAMES, repeat=length):
            once = apply_normalizers(sequence, witness)
            stable = apply_normalizers(sequence, once) == once
            if stable != is_idempotent_order(list(sequence)):
                disagreements.append(sequence)
    assert disagreements == []


@pytest.mark.parametrize(
    ("sequence", "text", "once", "twice"),
    [
        pytest.param(["strip", "remove_punctuation"], " . a", " a", "a", id="strip-then-punct"),
        pytest.param(
            ["collapse_whitespace", "remove_punctuation"],
            "a . b",
            "a  b",
            "a b",
            id="collapse-then-punct",
        ),
    ],
)
def test_order_matters_sequences_that_are_not_idempotent(
    sequence: list[str], text: str, once: str, twice: str
) -> None:
    assert apply_normalizers(sequence, text) == once
    assert apply_normalizers(sequence, once) == twice


@settings(max_examples=200)
@given(text=texts)
def test_collapse_whitespace_output_shape(text: str) -> None:
    result = apply_normalizer("collapse_whitespace", text)
    assert "  " not in result
    assert result == result.strip()
    assert all(char == " " for char in result if char.isspace())
    # Same words, single spaces: the spec's definition, restated with str.split().
    assert result == " ".join(text.split())


@settings(max_examples=200)
@given(text=texts)
def test_remove_punctuation_deletes_exactly_ascii_punctuation(text: str) -> None:
    result = apply_normalizer("remove_punctuation", text)
    assert result == "".join(char for char in text if char not in string.punctuation)
    assert not set(result) & set(string.punctuation)


@given(text=texts)
def test_lowercase_and_strip_are_the_str_methods(text: str) -> None:
    assert apply_normalizer("lowercase", text) == text.lower()
    assert apply_normalizer("strip", text) == text.strip()


@given(
    mapping=st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=5),
    text=st.one_of(st.text(max_size=5), st.sampled_from(["a", "b", ""])),
)
def test_synonym_map_is_idempotent_when_no_replacement_is_itself_remapped(
    mapping: dict[str, str], text: str
) -> None:
    assume(all(mapping.get(value, value) == value for value in mapping.values()))
    synonyms = SynonymMap(mapping=mapping)
    once = synonyms.apply(text)
    assert synonyms.apply(once) == once
    assert once == mapping.get(text, text)


def test_synonym_map_is_not_idempotent_in_general() -> None:
    chain = SynonymMap(mapping={"a": "b", "b": "c"})
    assert apply_normalizers([chain], "a") == "b"
    assert apply_normalizers([chain, chain], "a") == "c"


# ---------------------------------------------------------------------------
# Text and list primitives
# ---------------------------------------------------------------------------

normalizer_lists = st.lists(
    st.one_of(names, st.builds(SynonymMap, mapping=st.dictionaries(texts, texts, max_size=3))),
    max_size=4,
)


@given(value=texts, normalize=normalizer_lists)
def test_exact_match_is_reflexive(value: str, normalize: list[Any]) -> None:
    assert ExactMatch(normalize=normalize).check(value, value) is True


@given(a=texts, b=texts, normalize=normalizer_lists)
def test_exact_match_is_symmetric(a: str, b: str, normalize: list[Any]) -> None:
    primitive = ExactMatch(normalize=normalize)
    assert primitive.check(a, b) == primitive.check(b, a)


@given(a=texts, b=texts)
def test_exact_match_default_ignores_case_and_edge_whitespace(a: str, b: str) -> None:
    assert ExactMatch().check(a, b) == (a.lower().strip() == b.lower().strip())


@given(values=st.lists(texts, max_size=6), normalize=normalizer_lists)
def test_ordered_match_is_reflexive(values: list[str], normalize: list[Any]) -> None:
    assert OrderedMatch(normalize=normalize).check(values, list(values)) is True


@given(a=st.lists(texts, max_size=4), b=st.lists(texts, max_size=4))
def test_ordered_match_needs_equal_length(a: list[str], b: list[str]) -> None:
    assume(len(a) != len(b))
    assert OrderedMatch().check(a, b) is False


@given(a=items, b=items)
def test_set_exact_implies_subset_and_superset(a: list[str], b: list[str]) -> None:
    if SetContainment(mode="exact").check(a, b):
        assert SetContainment(mode="subset").check(a, b)
        assert SetContainment(mode="superset").check(a, b)


@given(a=items, b=items)
def test_set_subset_and_superset_together_imply_exact(a: list[str], b: list[str]) -> None:
    both = SetContainment(mode="subset").check(a, b) and SetContainment(mode="superset").check(a, b)
    assert both == SetContainment(mode="exact").check(a, b)


@given(a=items, b=items)
def test_set_subset_is_superset_reversed(a: list[str], b: list[str]) -> None:
    assert SetContainment(mode="subset").check(a, b) == SetContainment(mode="superset").check(b, a)


@given(a=items, b=items)
def test_set_exact_is_symmetric(a: list[str], b: list[str]) -> None:
    exact = SetContainment(mode="exact")
    assert exact.check(a, b) == exact.check(b, a)


@given(a=items, b=items, min_overlap=st.sampled_from([None, 1]))
def test_set_overlap_default_is_non_empty_intersection(
    a: list[str], b: list[str], min_overlap: int | None
) -> None:
    primitive = SetContainment(mode="overlap", min_overlap=min_overlap)
    assert primitive.check(a, b) == bool(set(a) & set(b))


@given(a=items, b=items, min_overlap=st.integers(min_value=0, max_value=6))
def test_set_overlap_counts_common_items(a: list[str], b: list[str], min_overlap: int) -> None:
    primitive = SetContainment(mode="overlap", min_overlap=min_overlap)
    assert primitive.check(a, b) == (len(set(a) & set(b)) >= (min_overlap or 1))


@given(
    a=st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=3)),
    b=st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=3)),
)
def test_boolean_match_is_symmetric_truthiness(a: Any, b: Any) -> None:
    primitive = BooleanMatch()
    assert primitive.check(a, b) == primitive.check(b, a)
    if a is not None and b is not None:
        assert primitive.check(a, b) == (bool(a) == bool(b))
    else:
        assert primitive.check(a, b) == (a is None and b is None)


# ---------------------------------------------------------------------------
# NumericTolerance
# ---------------------------------------------------------------------------


@settings(max_examples=200)
@given(a=finite, b=finite, tolerance=tolerances)
def test_absolute_tolerance_is_symmetric(a: float, b: float, tolerance: float) -> None:
    primitive = NumericTolerance(tolerance=tolerance, mode="absolute")
    assert primitive.check(a, b) == primitive.check(b, a)


@given(a=finite, b=finite)
def test_absolute_tolerance_zero_is_equality(a: float, b: float) -> None:
    assert NumericTolerance(tolerance=0, mode="absolute").check(a, b) == (a == b)


@given(a=finite, tolerance=tolerances, mode=modes)
def test_tolerance_is_reflexive(a: float, tolerance: float, mode: str) -> None:
    assert NumericTolerance(tolerance=tolerance, mode=mode).check(a, a) is True


@settings(max_examples=200)
@given(x=finite, gt=finite, t1=tolerances, t2=tolerances, mode=modes)
def test_tolerance_is_monotone_in_tolerance(
    x: float, gt: float, t1: float, t2: float, mode: str
) -> None:
    low, high = sorted((t1, t2))
    if NumericTolerance(tolerance=low, mode=mode).check(x, gt):
        assert NumericTolerance(tolerance=high, mode=mode).check(x, gt)


@given(x=finite, tolerance=tolerances)
def test_relative_tolerance_with_zero_ground_truth_only_accepts_zero(
    x: float, tolerance: float
) -> None:
    assert NumericTolerance(tolerance=tolerance).check(x, 0) == (x == 0)


# ---------------------------------------------------------------------------
# Graded numeric primitives
# ---------------------------------------------------------------------------


@st.composite
def numeric_graded(draw: st.DrawFn) -> NumericGraded:
    cutoff = draw(st.floats(min_value=1e-3, max_value=1e3))
    fraction = draw(st.one_of(st.none(), st.floats(min_value=0, max_value=0.99)))
    full_credit = None if fraction is None else cutoff * fraction
    return NumericGraded(
        cutoff=cutoff, full_credit=full_credit, mode=draw(modes), decay=draw(decays)
    )


def graded_distance(primitive: NumericGraded, x: float, gt: float) -> float | None:
    """The spec's distance: |x-gt|, or |x-gt|/|gt| in relative mode (undefined at gt == 0)."""
    if primitive.mode == "absolute":
        return abs(x - gt)
    if gt == 0:
        return 0.0 if x == 0 else None
    return abs(x - gt) / abs(gt)


def decay_oracle(distance: float, inner: float, outer: float, decay: str) -> float:
    """The spec's shoulder formula, computed exactly."""
    if distance <= inner:
        return 1.0
    if distance >= outer:
        return 0.0
    ratio = (Fraction(distance) - Fraction(inner)) / (Fraction(outer) - Fraction(inner))
    return float(1 - (ratio if decay == "linear" else ratio * ratio))


@settings(max_examples=200)
@given(primitive=numeric_graded(), x=finite, gt=finite)
def test_numeric_graded_matches_the_spec_formula(
    primitive: NumericGraded, x: float, gt: float
) -> None:
    distance = graded_distance(primitive, x, gt)
    check, score = primitive.check(x, gt), primitive.score(x, gt)
    assert 0.0 <= score <= 1.0
    if distance is None:
        assert (check, score) == (False, 0.0)
        return
    limit = primitive.cutoff if primitive.full_credit is None else primitive.full_credit
    assert check == (distance <= limit)
    inner = primitive.full_credit or 0.0
    assert score == pytest.approx(
        decay_oracle(distance, inner, primitive.cutoff, primitive.decay), abs=1e-9
    )
    if distance <= inner:
        assert score == 1.0
    if distance >= primitive.cutoff:
        assert score == 0.0


@settings(max_examples=200)
@given(primitive=numeric_graded(), x=finite, gt=finite)
def test_numeric_graded_check_and_score_agree_where_the_spec_says(
    primitive: NumericGraded, x: float, gt: float
) -> None:
    check, score = primitive.check(x, gt), primitive.score(x, gt)
    if primitive.full_credit is None:
        # Failing means d > cutoff, which scores 0 (passing at d == cutoff also scores 0).
        if not check:
            assert score == 0.0
    elif check:
        # With full_credit, passing means d <= full_credit: full score.
        assert score == 1.0


@settings(max_examples=200)
@given(primitive=numeric_graded(), x1=finite, x2=finite, gt=finite)
def test_numeric_graded_score_is_non_increasing_in_distance(
    primitive: NumericGraded, x1: float, x2: float, gt: float
) -> None:
    d1, d2 = graded_distance(primitive, x1, gt), graded_distance(primitive, x2, gt)
    assume(d1 is not None and d2 is not None)
    assert d1 is not None and d2 is not None
    if d1 <= d2:
        assert primitive.score(x1, gt) >= primitive.score(x2, gt)


@st.composite
def range_graded(draw: st.DrawFn) -> NumericRangeGraded:
    low = draw(st.floats(min_value=-1e3, max_value=1e3))
    width = draw(st.floats(min_value=1e-2, max_value=1e3))
    return NumericRangeGraded(
        min=low,
        max=low + width,
        margin=draw(st.floats(min_value=1e-3, max_value=10)),
        mode=draw(st.sampled_from(["absolute", "relative"])),
        decay=draw(decays),
        exclusive_min=draw(st.booleans()),
        exclusive_max=draw(st.booleans()),
    )


@settings(max_examples=200)
@given(primitive=range_graded(), x=finite)
def test_numeric_range_graded_properties(primitive: NumericRangeGraded, x: float) -> None:
    check, score = primitive.check(x, None), primitive.score(x, None)
    assert 0.0 <= score <= 1.0
    inside = primitive.min <= x <= primitive.max
    if inside:
        assert score == 1.0  # full score on the closed range, exclusive bounds included
    if check:
        assert inside
    gap = max(primitive.min - x, x - primitive.max, 0.0)
    shoulder = (
        primitive.margin
        if primitive.mode == "absolute"
        else primitive.margin * (primitive.max - primitive.min)
    )
    assert score == pytest.approx(decay_oracle(gap, 0.0, shoulder, primitive.decay), abs=1e-9)


@settings(max_examples=200)
@given(primitive=range_graded(), x1=finite, x2=finite)
def test_numeric_range_graded_score_is_non_increasing_in_gap(
    primitive: NumericRangeGraded, x1: float, x2: float
) -> None:
    def gap(x: float) -> float:
        return max(primitive.min - x, x - primitive.max, 0.0)

    if gap(x1) <= gap(x2):
        assert primitive.score(x1, None) >= primitive.score(x2, None)


@st.composite
def threshold_graded(draw: st.DrawFn) -> NumericThresholdGraded:
    return NumericThresholdGraded(
        direction=draw(st.sampled_from(["max", "min"])),
        margin=draw(st.floats(min_value=1e-3, max_value=10)),
        mode=draw(modes),
        decay=draw(decays),
        exclusive=draw(st.booleans()),
    )


@settings(max_examples=200)
@given(primitive=threshold_graded(), x=finite, gt=finite)
def test_numeric_threshold_graded_properties(
    primitive: NumericThresholdGraded, x: float, gt: float
) -> None:
    check, score = primitive.check(x, gt), primitive.score(x, gt)
    assert 0.0 <= score <= 1.0
    overshoot = x - gt if primitive.direction == "max" else gt - x
    if check or overshoot <= 0:
        assert score == 1.0  # the right side of the threshold, boundary included
    shoulder = primitive.margin if primitive.mode == "absolute" else primitive.margin * abs(gt)
    if overshoot > 0:
        expected = 0.0 if shoulder == 0 else decay_oracle(overshoot, 0.0, shoulder, primitive.decay)
        assert score == pytest.approx(expected, abs=1e-9)


@given(primitive=threshold_graded(), x=finite)
def test_numeric_threshold_graded_relative_zero_ground_truth_has_no_shoulder(
    primitive: NumericThresholdGraded, x: float
) -> None:
    primitive = primitive.model_copy(update={"mode": "relative"})
    on_right_side = x <= 0 if primitive.direction == "max" else x >= 0
    assert primitive.score(x, 0) == (1.0 if on_right_side else 0.0)
