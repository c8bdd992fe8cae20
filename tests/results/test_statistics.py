"""The estimators against hand-computed values and published tables, and their properties."""

from __future__ import annotations

import math

import pytest

from pytest_karenina.results.statistics import (
    clustered_wilson,
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
