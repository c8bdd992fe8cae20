"""Turning what a judge or a callable returned into trait values (spec 5.5).

Booleans accept bools and truthy numbers or strings (``"false"``, ``"0"`` and
``"no"`` are false); scores become integers clamped into the trait's range;
literal labels match a class exactly, else case-insensitively, else they are
invalid (index -1, the raw label kept).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

FALSE_WORDS = frozenset({"false", "0", "no", ""})
MISSING_LABEL = "[MISSING_FROM_RESPONSE]"
"""``llm_trait_labels`` value of a literal trait the judge did not classify."""
INVALID_INDEX = -1


class TraitValueError(ValueError):
    """A returned value cannot be read as the trait's kind."""


def boolean_value(raw: Any) -> bool:
    """``raw`` as a boolean verdict; ``TraitValueError`` for None, lists and objects."""
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, int | float):
        return raw != 0
    if isinstance(raw, str):
        return raw.strip().lower() not in FALSE_WORDS
    raise TraitValueError(f"expected true or false, got {raw!r}")


def integer_value(raw: Any) -> int:
    """``raw`` as an integer score (floats truncate, numeric strings parse)."""
    if isinstance(raw, bool):
        return int(raw)
    if isinstance(raw, int):
        return raw
    number = raw
    if isinstance(raw, str):
        try:
            number = float(raw.strip())
        except ValueError:
            number = None
    if isinstance(number, float) and math.isfinite(number):
        return int(number)
    raise TraitValueError(f"expected a whole number, got {raw!r}")


def clamp(value: int, low: int | None, high: int | None) -> int:
    """``value`` moved into ``[low, high]`` (an unset bound does not limit)."""
    if low is not None and value < low:
        return low
    if high is not None and value > high:
        return high
    return value


def score_value(raw: Any, low: int, high: int) -> tuple[int, int | None]:
    """``(score, original)``: the integer score clamped into ``[low, high]``; ``original``
    is the judge's out-of-range value when clamping changed it, else None."""
    value = integer_value(raw)
    clamped = clamp(value, low, high)
    return clamped, (value if clamped != value else None)


def literal_index(label: Any, classes: Mapping[str, str]) -> tuple[int, str]:
    """``(index, label)`` of the class ``label`` names: exact match first, then
    case-insensitive; ``(-1, label as given)`` when it names no class."""
    text = label if isinstance(label, str) else str(label)
    names = list(classes)
    if text in classes:
        return names.index(text), text
    folded = text.strip().lower()
    for index, name in enumerate(names):
        if name.lower() == folded:
            return index, name
    return INVALID_INDEX, text


def evaluation_error_label(reason: str) -> str:
    """``llm_trait_labels`` value of a literal trait whose evaluation failed."""
    return f"[EVALUATION_ERROR: {reason}]"
