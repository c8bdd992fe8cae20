"""Cohen's kappa and its large-sample interval against published worked examples; the rates
of a judge's confusion table."""

from __future__ import annotations

import pytest

from pytest_karenina.results.agreement import (
    BinaryAgreement,
    binary_agreement,
    cohen_kappa,
)

hypothesis = pytest.importorskip("hypothesis", reason="pip install -e '.[dev]'")
given, st = hypothesis.given, hypothesis.strategies

SKIN_CONDITION = [[10, 4, 1, 0], [5, 10, 12, 2], [2, 4, 12, 5], [0, 2, 6, 13]]
"""SAS/STAT User's Guide, PROC FREQ, example "Cohen's Kappa": two dermatologists rate the
skin condition of 88 patients (terrible, poor, marginal, clear); the printout reads simple
kappa 0.3449, ASE 0.0724, 95% confidence limits 0.2030 and 0.4868."""
SAS_THREE_BY_THREE = [[0, 4, 1], [0, 8, 0], [0, 1, 5]]
"""A SAS PROC FREQ printout (as statsmodels' test suite records it): kappa 0.4842, ASE
0.1380, 95% confidence limits 0.2137 and 0.7547."""


@pytest.mark.parametrize(
    ("table", "kappa", "se", "low", "high"),
    [(SKIN_CONDITION, 0.3449, 0.0724, 0.2030, 0.4868),
     (SAS_THREE_BY_THREE, 0.4842, 0.1380, 0.2137, 0.7547)],
    ids=["skin-condition", "three-by-three"],
)  # fmt: skip
def test_kappa_and_its_interval_match_the_published_printouts(
    table: list[list[int]], kappa: float, se: float, low: float, high: float
) -> None:
    found = cohen_kappa(table)
    assert (found.value, found.se, found.low, found.high) == pytest.approx(
        (kappa, se, low, high), abs=5e-5
    )


def test_the_textbook_two_by_two() -> None:
    """Wikipedia's Cohen's kappa example: 50 proposals, both say yes 20 times, both no 15
    times, 5 and 10 disagreements: po 0.7, pe 0.5, kappa 0.4."""
    found = cohen_kappa([[20, 5], [10, 15]])
    assert (found.observed, found.expected, found.value) == pytest.approx((0.7, 0.5, 0.4))
    assert found.n == 50


def test_the_worked_example_of_the_docs() -> None:
    """docs/statistics.md: 40 labelled answers, people pass 20; the judge passes 18 of them
    and 4 of the 20 people fail."""
    found = BinaryAgreement(tp=18, fp=4, fn=2, tn=16)
    assert found.accuracy.value == pytest.approx(0.85)
    assert found.accuracy.interval == pytest.approx((0.7093, 0.9294), abs=5e-5)
    assert found.true_positive_rate.value == pytest.approx(0.9)
    assert found.false_positive_rate.value == pytest.approx(0.2)
    assert found.false_positive_rate.interval == pytest.approx((0.0807, 0.4160), abs=5e-5)
    kappa = found.kappa
    assert (kappa.observed, kappa.expected, kappa.value) == pytest.approx((0.85, 0.5, 0.7))
    assert (kappa.se, kappa.low, kappa.high) == pytest.approx((0.1123, 0.4798, 0.9202), abs=5e-5)


def test_kappa_is_undefined_when_chance_explains_everything() -> None:
    """Both raters used one category only: pe is 1 and kappa is 0/0, not a number."""
    found = cohen_kappa([[7, 0], [0, 0]])
    assert not found.defined and found.value is None and found.se is None
    assert (found.observed, found.expected) == (1.0, 1.0)
    assert not cohen_kappa([[0, 0], [0, 0]]).defined


def test_perfect_agreement_has_kappa_one() -> None:
    found = cohen_kappa([[6, 0], [0, 4]])
    assert (found.value, found.low, found.high) == (1.0, 1.0, 1.0)


def test_bad_tables_are_refused() -> None:
    with pytest.raises(ValueError, match="square"):
        cohen_kappa([[1, 2], [3]])
    with pytest.raises(ValueError, match="negative"):
        cohen_kappa([[1, -2], [3, 4]])


def test_pairs_make_the_confusion_table() -> None:
    """Positive means the people passed the answer."""
    pairs = [(True, True), (True, True), (False, True), (True, False), (False, False)]
    assert binary_agreement(pairs) == BinaryAgreement(tp=2, fp=1, fn=1, tn=1)
    empty = binary_agreement([])
    assert empty.accuracy.value is None and empty.accuracy.interval == (0.0, 1.0)


@given(st.lists(st.tuples(st.booleans(), st.booleans()), max_size=60))
def test_kappa_stays_in_its_range_and_swapping_raters_keeps_it(
    pairs: list[tuple[bool, bool]],
) -> None:
    found = binary_agreement(pairs).kappa
    swapped = binary_agreement([(judge, people) for people, judge in pairs]).kappa
    if found.value is None:
        assert swapped.value is None
        return
    assert -1.0 <= found.value <= 1.0
    assert found.low is not None and found.high is not None
    assert -1.0 <= found.low <= found.value <= found.high <= 1.0
    assert swapped.value == pytest.approx(found.value)
    assert swapped.se == pytest.approx(found.se)
