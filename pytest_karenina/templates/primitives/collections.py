"""List primitives."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from pytest_karenina.templates.normalizers import Normalizer, apply_normalizers
from pytest_karenina.templates.primitives.base import VerificationPrimitive, builtin_primitive


@builtin_primitive
class SetContainment(VerificationPrimitive):
    """Compare extracted and expected items as sets (no normalization).

    ``exact``: same set; ``subset``: extracted within expected; ``superset``:
    extracted covers expected; ``overlap``: at least ``min_overlap`` (default 1)
    items in common.
    """

    mode: Literal["exact", "subset", "superset", "overlap"] = "exact"
    min_overlap: int | None = Field(default=None, ge=0)

    def check(self, extracted: Any, expected: Any) -> bool:
        found, wanted = set(extracted), set(expected)
        if self.mode == "exact":
            return found == wanted
        if self.mode == "subset":
            return found <= wanted
        if self.mode == "superset":
            return found >= wanted
        return len(found & wanted) >= (self.min_overlap or 1)


@builtin_primitive
class OrderedMatch(VerificationPrimitive):
    """Same length and element-wise equal after normalizing ``str()`` of each item."""

    normalize: list[Normalizer] = ["lowercase", "strip"]

    def check(self, extracted: Any, expected: Any) -> bool:
        found, wanted = list(extracted), list(expected)
        if len(found) != len(wanted):
            return False
        return all(
            apply_normalizers(self.normalize, a) == apply_normalizers(self.normalize, b)
            for a, b in zip(found, wanted, strict=True)
        )
