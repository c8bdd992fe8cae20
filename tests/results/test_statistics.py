"""The estimators against hand-computed values and published tables, and their properties."""

from __future__ import annotations

import math

import pytest

from pytest_karenina.results.statistics import (
    clustered_wilson,
    fisher_exact,
    fisher_floor,
    holm,
    mcnemar_exact,
    pass_at_k,
    wilson_interval,
)

hypothesis = pytest.importorskip("hypothesis", reason="pip install -e '.[dev]'")
given, st = hypothesis.given, hypothesis.strategies


@pytest.mark.parametrize(
    ("successes", "trials", "low", "high"),
    [(8, 10, 0.4902, 0.9433), (0, 10, 0.0, 0.2775), (10, 10, 0.7225, 1.0),
     (81, 100, 0.7222, 0.8749), (1, 2, 0.0945, 0.9055)],
)  # fmt: skip
def test_wilson_matches_the_tables(successes: int, trials: int, low: float, high: float) -> None:
    found = wilson_interval(successes, trials)
    assert found == pytest.approx((low, high), abs=5e-4)


def test_wilson_without_trials_knows_nothing() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [(10, 3, 1, 0.3), (5, 2, 2, 0.7), (4, 0, 2, 0.0), (3, 3, 2, 1.0), (6, 4, 3, 1.0),
     (6, 2, 3, 1 - 4 / 20)],
)  # fmt: skip
def test_pass_at_k(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected)


def test_pass_at_k_refuses_k_above_n() -> None:
    with pytest.raises(ValueError, match="1 <= k <= n"):
        pass_at_k(2, 1, 3)


@pytest.mark.parametrize(
    ("b", "c", "expected"),
    [(0, 5, 0.0625), (1, 9, 0.021484375), (3, 3, 1.0), (0, 0, 1.0), (2, 8, 0.109375)],
)  # fmt: skip
def test_mcnemar_exact(b: int, c: int, expected: float) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(expected)
    assert mcnemar_exact(c, b) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ((3, 1, 1, 3), 34 / 70),  # Fisher's lady tasting tea: 0.4857
        ((1, 9, 11, 3), 0.002759456),  # R: fisher.test(matrix(c(1, 11, 9, 3), 2))
        ((10, 0, 0, 10), 1.082509e-05),  # R: 2 / choose(20, 10)
        ((5, 0, 0, 5), 0.007936508),  # five replicates passed, then none: 2 / 252
        ((5, 0, 2, 3), 0.1666667),  # 5/5 then 3/5
        ((5, 0, 4, 1), 1.0),  # 5/5 then 4/5: noise
        ((0, 0, 0, 0), 1.0),
    ],
    ids=["tea", "dieting", "10-0", "5-0", "5-3", "5-4", "empty"],
)  # fmt: skip
def test_fisher_exact_matches_published_values(
    table: tuple[int, int, int, int], expected: float
) -> None:
    a, b, c, d = table
    assert fisher_exact(a, b, c, d) == pytest.approx(expected, rel=1e-6)
    # The test does not care which row or column comes first.
    assert fisher_exact(c, d, a, b) == pytest.approx(expected, rel=1e-6)
    assert fisher_exact(b, a, d, c) == pytest.approx(expected, rel=1e-6)


def test_fisher_exact_refuses_negative_cells() -> None:
    with pytest.raises(ValueError, match="negative"):
        fisher_exact(1, -1, 2, 2)


@pytest.mark.parametrize(
    ("margins", "expected"),
    [
        ((5, 5, 10), 1.0),  # every replicate passed on both sides: one table, p = 1
        ((5, 5, 1), 1.0),  # one failure in ten: wherever it falls, p = 1
        ((5, 5, 2), 20 / 45),  # two failures: at best both on one side
        ((5, 5, 5), 2 / 252),  # five: 5/5 against 0/5 is the least likely table
        ((4, 4, 4), 2 / 70),  # the tea table's extremes
    ],
)
def test_fisher_floor_is_the_least_likely_tables_p_value(
    margins: tuple[int, int, int], expected: float
) -> None:
    assert fisher_floor(*margins) == pytest.approx(expected)


@given(st.integers(0, 8), st.integers(0, 8), st.integers(0, 8), st.integers(0, 8))
def test_no_table_goes_below_its_floor(a: int, b: int, c: int, d: int) -> None:
    assert fisher_exact(a, b, c, d) >= fisher_floor(a + b, c + d, a + c) - 1e-12


def test_holm_matches_r() -> None:
    """R: ``p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm")`` is ``0.03 0.06 0.06 0.02``."""
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])  # capped at 1
    assert holm([0.02]) == [0.02]
    assert holm([]) == []


@given(st.lists(st.floats(0, 1), max_size=20))
def test_holm_never_lowers_a_p_value_and_keeps_their_order(p_values: list[float]) -> None:
    adjusted = holm(p_values)
    assert all(p <= q <= 1 for p, q in zip(p_values, adjusted, strict=True))
    ranked = sorted(range(len(p_values)), key=lambda i: p_values[i])
    assert [adjusted[i] for i in ranked] == sorted(adjusted)


def test_clustering_counts_all_or_nothing_questions_once() -> None:
    """Five questions, three replicates each, every question unanimous: five observations."""
    rate, low, high = clustered_wilson([(3, 3)] * 3 + [(0, 3)] * 2)
    assert rate == pytest.approx(0.6)
    assert (low, high) == pytest.approx(wilson_interval(3, 5))


def test_single_verdict_clusters_are_plain_wilson() -> None:
    rate, low, high = clustered_wilson([(1, 1)] * 8 + [(0, 1)] * 2)
    assert rate == pytest.approx(0.8) and (low, high) == pytest.approx(wilson_interval(8, 10))


def test_mixed_clusters_are_wider_than_independent_verdicts_would_be() -> None:
    clusters = [(3, 3), (3, 3), (0, 3), (2, 3), (1, 3), (3, 3)]
    rate, low, high = clustered_wilson(clusters)
    naive = wilson_interval(sum(k for k, _ in clusters), sum(n for _, n in clusters))
    assert rate == pytest.approx(12 / 18)
    assert high - low > naive[1] - naive[0]


@given(st.integers(0, 500), st.integers(1, 500))
def test_wilson_contains_the_rate_and_stays_in_the_unit_interval(k: int, n: int) -> None:
    k = min(k, n)
    low, high = wilson_interval(k, n)
    assert 0.0 <= low <= k / n + 1e-12 and k / n - 1e-12 <= high <= 1.0


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(1, 5)), min_size=1, max_size=40))
def test_clustered_wilson_contains_the_rate(clusters: list[tuple[int, int]]) -> None:
    clusters = [(min(k, n), n) for k, n in clusters]
    rate, low, high = clustered_wilson(clusters)
    assert 0.0 <= low <= rate + 1e-12 and rate - 1e-12 <= high <= 1.0
    assert not math.isnan(low) and not math.isnan(high)
