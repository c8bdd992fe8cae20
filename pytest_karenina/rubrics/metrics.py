"""Confusion-matrix metrics of metric traits (precision, recall, F1, specificity, accuracy).

Any ratio whose denominator is zero is 0.0, as in Karenina.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

BUCKETS = ("tp", "fn", "fp", "tn")


def dedupe(items: Iterable[str]) -> list[str]:
    """``items`` without blanks and case-insensitive repeats, first spelling kept."""
    seen: set[str] = set()
    kept: list[str] = []
    for item in items:
        text = item.strip()
        key = text.lower()
        if text and key not in seen:
            seen.add(key)
            kept.append(text)
    return kept


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else 0.0


def confusion_metrics(
    lists: Mapping[str, Sequence[str]], metrics: Sequence[str]
) -> dict[str, float]:
    """The requested ``metrics`` from the bucket sizes of ``lists`` (missing buckets are empty)."""
    tp, fn, fp, tn = (len(lists.get(bucket, ())) for bucket in BUCKETS)
    precision = _ratio(tp, tp + fp)
    recall = _ratio(tp, tp + fn)
    values = {
        "precision": precision,
        "recall": recall,
        "f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
        "specificity": _ratio(tn, tn + fp),
        "accuracy": _ratio(tp + tn, tp + tn + fp + fn),
    }
    return {name: values[name] for name in metrics if name in values}
