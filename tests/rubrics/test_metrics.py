"""Confusion-matrix metrics of metric traits, and the case-insensitive de-duplication helper."""

from __future__ import annotations

import pytest

from pytest_karenina.rubrics.metrics import BUCKETS, confusion_metrics, dedupe

hypothesis = pytest.importorskip(
    "hypothesis", reason="property tests need the dev extra: pip install -e '.[dev]'"
)
given, st = hypothesis.given, hypothesis.strategies

ALL_METRICS = ("precision", "recall", "f1", "specificity", "accuracy")


def buckets(tp: int = 0, fn: int = 0, fp: int = 0, tn: int = 0) -> dict[str, list[str]]:
    """Confusion lists with the given bucket sizes (the item texts do not matter)."""
    sizes = {"tp": tp, "fn": fn, "fp": fp, "tn": tn}
    return {name: [f"{name}-{i}" for i in range(size)] for name, size in sizes.items()}


# --- confusion_metrics ---------------------------------------------------------------------


def test_tp_only_metrics_by_hand() -> None:
    # tp=3, fp=1, fn=2:
    #   precision = 3 / (3 + 1) = 0.75
    #   recall    = 3 / (3 + 2) = 0.6
    #   f1        = 2 * 0.75 * 0.6 / (0.75 + 0.6) = 0.9 / 1.35 = 0.6667
    result = confusion_metrics(buckets(tp=3, fp=1, fn=2), ["precision", "recall", "f1"])
    assert result == {
        "precision": pytest.approx(0.75),
        "recall": pytest.approx(0.6),
        "f1": pytest.approx(2 / 3),
    }


def test_full_matrix_metrics_by_hand() -> None:
    # tp=4, fn=1, fp=2, tn=3 (10 items):
    #   precision   = 4 / (4 + 2) = 0.6667
    #   recall      = 4 / (4 + 1) = 0.8
    #   f1          = 2 * (2/3) * 0.8 / (2/3 + 0.8) = (16/15) / (22/15) = 8/11 = 0.7273
    #   specificity = tn / (tn + fp) = 3 / (3 + 2) = 0.6
    #   accuracy    = (tp + tn) / all = (4 + 3) / 10 = 0.7
    result = confusion_metrics(buckets(tp=4, fn=1, fp=2, tn=3), ALL_METRICS)
    assert result == {
        "precision": pytest.approx(2 / 3),
        "recall": pytest.approx(0.8),
        "f1": pytest.approx(8 / 11),
        "specificity": pytest.approx(0.6),
        "accuracy": pytest.approx(0.7),
    }


def test_perfect_extraction() -> None:
    # tp=5 and nothing else: every ratio with tp in the numerator is 5/5 = 1.
    # specificity = 0 / (0 + 0): a zero denominator, so 0.0.
    result = confusion_metrics(buckets(tp=5), ALL_METRICS)
    assert result == {
        "precision": 1.0,
        "recall": 1.0,
        "f1": 1.0,
        "specificity": 0.0,
        "accuracy": 1.0,
    }


def test_empty_lists_give_zero_everywhere() -> None:
    # Every denominator is 0, so every ratio (and f1, whose p + r is 0) is 0.0.
    assert confusion_metrics({}, ALL_METRICS) == dict.fromkeys(ALL_METRICS, 0.0)


def test_zero_precision_denominator_only() -> None:
    # tp=0, fp=0, fn=4: precision = 0/0 -> 0.0, recall = 0/4 = 0.0, f1 -> 0.0.
    # tn=2: specificity = 2 / (2 + 0) = 1.0, accuracy = (0 + 2) / 6 = 0.3333.
    result = confusion_metrics(buckets(fn=4, tn=2), ALL_METRICS)
    assert result["precision"] == 0.0
    assert result["recall"] == 0.0
    assert result["f1"] == 0.0
    assert result["specificity"] == 1.0
    assert result["accuracy"] == pytest.approx(1 / 3)


def test_only_false_positives() -> None:
    # tp=0, fp=3: precision = 0/3 = 0.0; recall = 0/0 -> 0.0; specificity = 0/(0+3) = 0.0.
    result = confusion_metrics(buckets(fp=3), ALL_METRICS)
    assert result == dict.fromkeys(ALL_METRICS, 0.0)


def test_only_requested_metrics_are_returned_in_request_order() -> None:
    lists = buckets(tp=1, fn=1, fp=1, tn=1)
    result = confusion_metrics(lists, ["recall", "accuracy"])
    assert list(result) == ["recall", "accuracy"]
    # recall = 1 / (1 + 1) = 0.5; accuracy = (1 + 1) / 4 = 0.5
    assert result == {"recall": 0.5, "accuracy": 0.5}


def test_unknown_metric_names_are_ignored() -> None:
    result = confusion_metrics(buckets(tp=2, fp=2), ["precision", "mcc", "auc"])
    # precision = 2 / (2 + 2) = 0.5
    assert result == {"precision": 0.5}
    assert confusion_metrics(buckets(tp=2), []) == {}


def test_missing_buckets_count_as_empty() -> None:
    # Only tp and fn given: tp=2, fn=2 -> recall = 2 / 4 = 0.5, precision = 2 / 2 = 1.0.
    result = confusion_metrics({"tp": ["a", "b"], "fn": ["c", "d"]}, ["precision", "recall"])
    assert result == {"precision": 1.0, "recall": 0.5}


def test_buckets_are_counted_by_length_not_content() -> None:
    # Repeated items still count once each: tp=3 (same text three times), fp=1.
    result = confusion_metrics({"tp": ["x", "x", "x"], "fp": ["y"]}, ["precision"])
    assert result == {"precision": pytest.approx(0.75)}


def test_bucket_names() -> None:
    assert set(BUCKETS) == {"tp", "fn", "fp", "tn"}


counts = st.integers(min_value=0, max_value=200)


@given(tp=counts, fn=counts, fp=counts, tn=counts)
def test_metrics_are_bounded_and_f1_lies_between_precision_and_recall(
    tp: int, fn: int, fp: int, tn: int
) -> None:
    result = confusion_metrics(buckets(tp=tp, fn=fn, fp=fp, tn=tn), ALL_METRICS)
    assert set(result) == set(ALL_METRICS)
    for name, value in result.items():
        assert 0.0 <= value <= 1.0, (name, value)
    precision, recall, f1 = result["precision"], result["recall"], result["f1"]
    if precision == 0.0 or recall == 0.0:
        # The harmonic mean of anything with a zero is zero.
        assert f1 == 0.0
    else:
        # A harmonic mean lies between its two operands (allowing float rounding).
        tolerance = 1e-12
        assert min(precision, recall) - tolerance <= f1 <= max(precision, recall) + tolerance


# --- dedupe --------------------------------------------------------------------------------


def test_dedupe_is_case_insensitive_and_keeps_the_first_spelling() -> None:
    assert dedupe(["BCL2", "bcl2", "Bcl2", "TP53"]) == ["BCL2", "TP53"]
    assert dedupe(["tp53", "TP53"]) == ["tp53"]


def test_dedupe_strips_and_drops_blanks() -> None:
    assert dedupe(["  apoptosis ", "", "   ", "Apoptosis", "\tgrowth\n"]) == [
        "apoptosis",
        "growth",
    ]


def test_dedupe_compares_after_stripping() -> None:
    assert dedupe(["kinase", " KINASE  "]) == ["kinase"]


def test_dedupe_keeps_order_and_accepts_any_iterable() -> None:
    assert dedupe(iter(["c", "a", "b", "A"])) == ["c", "a", "b"]
    assert dedupe([]) == []
