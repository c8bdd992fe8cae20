"""Numeric primitives with partial credit.

Each gives a pass/fail ``check`` and a ``score`` that decays from 1 to 0 over a
"shoulder" beyond the accepted region, linearly (``1 - r``) or quadratically
(``1 - r**2``), where ``r`` is the distance into the shoulder as a fraction.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field, model_validator

from pytest_karenina.templates.primitives.base import VerificationPrimitive, builtin_primitive

Decay = Literal["linear", "quadratic"]
Mode = Literal["relative", "absolute"]


def decayed(distance: float, inner: float, outer: float, decay: Decay) -> float:
    """1 inside ``inner``, 0 from ``outer`` on, decaying in between."""
    if distance <= inner:
        return 1.0
    if distance >= outer:
        return 0.0
    ratio = (distance - inner) / (outer - inner)
    return 1.0 - (ratio if decay == "linear" else ratio * ratio)


@builtin_primitive
class NumericGraded(VerificationPrimitive):
    """Distance to the ground truth graded against ``cutoff``.

    Passes when the distance is at most ``full_credit`` (if set) else ``cutoff``.
    Full score up to ``full_credit`` (or 0), zero from ``cutoff``. In relative
    mode the distance to a ground truth of 0 is undefined unless the value is 0,
    which scores 0 and fails.
    """

    cutoff: float = Field(gt=0)
    full_credit: float | None = Field(default=None, ge=0)
    mode: Mode = "relative"
    decay: Decay = "linear"

    @model_validator(mode="after")
    def _full_credit_below_cutoff(self) -> NumericGraded:
        if self.full_credit is not None and self.full_credit >= self.cutoff:
            raise ValueError(
                f"NumericGraded full_credit ({self.full_credit}) must be below cutoff "
                f"({self.cutoff})"
            )
        return self

    def distance(self, extracted: Any, expected: Any) -> float | None:
        value, target = float(extracted), float(expected)
        if self.mode == "absolute":
            return abs(value - target)
        if target == 0:
            return 0.0 if value == 0 else None
        return abs(value - target) / abs(target)

    def check(self, extracted: Any, expected: Any) -> bool:
        distance = self.distance(extracted, expected)
        limit = self.full_credit if self.full_credit is not None else self.cutoff
        return distance is not None and distance <= limit

    def score(self, extracted: Any, expected: Any) -> float:
        distance = self.distance(extracted, expected)
        if distance is None:
            return 0.0
        return decayed(distance, self.full_credit or 0.0, self.cutoff, self.decay)


@builtin_primitive
class NumericRangeGraded(VerificationPrimitive):
    """Inside ``[min, max]`` passes; outside, the score decays over ``margin``.

    The shoulder is ``margin`` (absolute) or ``margin * (max - min)`` (relative).
    The full score covers the closed range even when a bound is exclusive.
    Ground truth unused.
    """

    min: float
    max: float
    margin: float = Field(gt=0)
    mode: Mode = "absolute"
    decay: Decay = "linear"
    exclusive_min: bool = False
    exclusive_max: bool = False

    @model_validator(mode="after")
    def _min_below_max(self) -> NumericRangeGraded:
        if not self.min < self.max:
            raise ValueError(f"NumericRangeGraded needs min < max, got {self.min} and {self.max}")
        return self

    def check(self, extracted: Any, expected: Any) -> bool:
        value = float(extracted)
        above_min = value > self.min if self.exclusive_min else value >= self.min
        below_max = value < self.max if self.exclusive_max else value <= self.max
        return above_min and below_max

    def score(self, extracted: Any, expected: Any) -> float:
        value = float(extracted)
        gap = max(self.min - value, value - self.max, 0.0)
        shoulder = self.margin if self.mode == "absolute" else self.margin * (self.max - self.min)
        return decayed(gap, 0.0, shoulder, self.decay)


@builtin_primitive
class NumericThresholdGraded(VerificationPrimitive):
    """One-sided threshold at the ground truth with a graded shoulder.

    ``direction="max"`` accepts values at or below the ground truth, ``"min"``
    values at or above it (strictly, if ``exclusive``). The shoulder is
    ``margin`` (absolute) or ``margin * |ground truth|`` (relative; a ground
    truth of 0 leaves no shoulder).
    """

    direction: Literal["max", "min"]
    margin: float = Field(gt=0)
    mode: Mode = "relative"
    decay: Decay = "linear"
    exclusive: bool = False

    def check(self, extracted: Any, expected: Any) -> bool:
        value, threshold = float(extracted), float(expected)
        if self.direction == "max":
            return value < threshold if self.exclusive else value <= threshold
        return value > threshold if self.exclusive else value >= threshold

    def score(self, extracted: Any, expected: Any) -> float:
        value, threshold = float(extracted), float(expected)
        overshoot = value - threshold if self.direction == "max" else threshold - value
        if overshoot <= 0:
            return 1.0
        shoulder = self.margin if self.mode == "absolute" else self.margin * abs(threshold)
        if shoulder == 0 or math.isnan(overshoot):
            return 0.0
        return decayed(overshoot, 0.0, shoulder, self.decay)
