"""Pass/fail numeric primitives. Values are coerced with ``float()``.

A value that cannot be coerced raises (``ValueError``/``TypeError``) on
purpose: the template's verification records it as a field error.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from pytest_karenina.templates.primitives.base import VerificationPrimitive, builtin_primitive


@builtin_primitive
class NumericExact(VerificationPrimitive):
    """``float(extracted) == float(expected)``."""

    def check(self, extracted: Any, expected: Any) -> bool:
        return float(extracted) == float(expected)


@builtin_primitive
class NumericTolerance(VerificationPrimitive):
    """Within ``tolerance`` of the ground truth, absolutely or relative to it.

    In relative mode a ground truth of 0 only accepts exactly 0.
    """

    tolerance: float = Field(ge=0)
    mode: Literal["relative", "absolute"] = "relative"

    def check(self, extracted: Any, expected: Any) -> bool:
        value, target = float(extracted), float(expected)
        difference = abs(value - target)
        if self.mode == "absolute":
            return difference <= self.tolerance
        if target == 0:
            return difference == 0
        return difference / abs(target) <= self.tolerance


@builtin_primitive
class NumericRange(VerificationPrimitive):
    """Inside ``[min, max]`` (either bound optional); ground truth unused."""

    min: float | None = None
    max: float | None = None
    exclusive_min: bool = False
    exclusive_max: bool = False

    @model_validator(mode="after")
    def _bounds_ordered(self) -> NumericRange:
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"NumericRange min ({self.min}) is above max ({self.max})")
        return self

    def check(self, extracted: Any, expected: Any) -> bool:
        value = float(extracted)
        if self.min is not None and (value <= self.min if self.exclusive_min else value < self.min):
            return False
        if self.max is not None and (value >= self.max if self.exclusive_max else value > self.max):
            return False
        return True


@builtin_primitive
class NumericMinimum(VerificationPrimitive):
    """The extracted value is at least the ground truth (``>``, if exclusive)."""

    exclusive: bool = False

    def check(self, extracted: Any, expected: Any) -> bool:
        value, floor = float(extracted), float(expected)
        return value > floor if self.exclusive else value >= floor


@builtin_primitive
class NumericMaximum(VerificationPrimitive):
    """The extracted value is at most the ground truth (``<``, if exclusive)."""

    exclusive: bool = False

    def check(self, extracted: Any, expected: Any) -> bool:
        value, ceiling = float(extracted), float(expected)
        return value < ceiling if self.exclusive else value <= ceiling
