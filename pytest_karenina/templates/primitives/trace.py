"""Trace primitives: checks on the raw answer trace (``--- AI Message ---`` headers included)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from pytest_karenina.templates.bounded_regex import findall
from pytest_karenina.templates.primitives.base import (
    RegexPattern,
    TracePrimitive,
    builtin_primitive,
)


@builtin_primitive
class TraceRegex(TracePrimitive):
    """The pattern matches the trace at least ``count_min`` times (default once)."""

    pattern: RegexPattern
    count_min: int | None = Field(default=None, ge=0)

    def check_trace(self, trace: str) -> bool:
        return len(findall(self.pattern, trace)) >= (
            self.count_min if self.count_min is not None else 1
        )


@builtin_primitive
class TraceContains(TracePrimitive):
    """The trace contains ``substring`` verbatim."""

    substring: str

    def check_trace(self, trace: str) -> bool:
        return self.substring in trace


@builtin_primitive
class TraceLength(TracePrimitive):
    """The trace length in characters or whitespace-separated words is within bounds."""

    min: int | None = Field(default=None, ge=0)
    max: int | None = Field(default=None, ge=0)
    unit: Literal["chars", "words"] = "chars"

    def check_trace(self, trace: str) -> bool:
        length = len(trace) if self.unit == "chars" else len(trace.split())
        if self.min is not None and length < self.min:
            return False
        return self.max is None or length <= self.max
