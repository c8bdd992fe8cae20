"""Boolean, string and categorical primitives."""

from __future__ import annotations

import re
import warnings
from typing import Any

from pydantic import field_validator

from pytest_karenina.templates.bounded_regex import search
from pytest_karenina.templates.errors import TemplateWarning
from pytest_karenina.templates.normalizers import Normalizer, apply_normalizers
from pytest_karenina.templates.primitives.base import (
    RegexPattern,
    VerificationPrimitive,
    builtin_primitive,
)


@builtin_primitive
class BooleanMatch(VerificationPrimitive):
    """Truthiness equality; ``None`` only matches ``None``.

    Python truthiness is used on purpose (Karenina does the same), so the
    string ``"false"`` counts as true.
    """

    def check(self, extracted: Any, expected: Any) -> bool:
        if extracted is None or expected is None:
            return extracted is None and expected is None
        return bool(extracted) == bool(expected)


@builtin_primitive
class ExactMatch(VerificationPrimitive):
    """``str()`` of both sides, normalized, must be equal."""

    normalize: list[Normalizer] = ["lowercase", "strip"]

    def check(self, extracted: Any, expected: Any) -> bool:
        return apply_normalizers(self.normalize, extracted) == apply_normalizers(
            self.normalize, expected
        )


@builtin_primitive
class ContainsAny(VerificationPrimitive):
    """At least one substring occurs in the extracted text (ground truth unused)."""

    substrings: list[str]
    normalize: list[Normalizer] = []

    def check(self, extracted: Any, expected: Any) -> bool:
        text = apply_normalizers(self.normalize, extracted)
        return any(apply_normalizers(self.normalize, sub) in text for sub in self.substrings)


@builtin_primitive
class ContainsAll(VerificationPrimitive):
    """Every substring occurs in the extracted text (ground truth unused)."""

    substrings: list[str]
    normalize: list[Normalizer] = []

    def check(self, extracted: Any, expected: Any) -> bool:
        text = apply_normalizers(self.normalize, extracted)
        return all(apply_normalizers(self.normalize, sub) in text for sub in self.substrings)


@builtin_primitive
class RegexMatch(VerificationPrimitive):
    """``re.search(pattern, str(extracted), flags)`` finds a match (ground truth unused).

    ``flags`` are names of ``re`` flags such as ``"IGNORECASE"``; unknown names
    are ignored with a :class:`TemplateWarning`, as in Karenina. The pattern is
    compiled when the primitive is built, so a broken pattern is a template
    error rather than a failed answer.
    """

    pattern: RegexPattern
    flags: list[str] = []

    @field_validator("flags")
    @classmethod
    def _warn_unknown_flags(cls, flags: list[str]) -> list[str]:
        for name in flags:
            if not isinstance(getattr(re, name, None), re.RegexFlag):
                warnings.warn(f"RegexMatch ignores unknown flag {name!r}", TemplateWarning, 2)
        return flags

    def compiled_flags(self) -> int:
        value = 0
        for name in self.flags:
            flag = getattr(re, name, None)
            if isinstance(flag, re.RegexFlag):
                value |= flag
        return value

    def check(self, extracted: Any, expected: Any) -> bool:
        return search(self.pattern, str(extracted), self.compiled_flags())


@builtin_primitive
class LiteralMatch(VerificationPrimitive):
    """Plain Python equality, for ``Literal[...]`` fields."""

    def check(self, extracted: Any, expected: Any) -> bool:
        return bool(extracted == expected)
