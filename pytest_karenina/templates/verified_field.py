"""``VerifiedField``: a pydantic field that carries its ground truth and primitive.

The metadata lives in ``json_schema_extra["__verification__"]`` in Karenina's
layout::

    {"ground_truth": ..., "verify_with": {...params, "type": "ExactMatch"},
     "weight": 1.0, "extraction_hint": None}

so checkpoints written by Karenina and by us read the same. It is stripped
from every schema a judge sees.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

from pydantic import Field
from pydantic.fields import FieldInfo

from pytest_karenina.templates.conditional import ConditionalGroundTruth, is_conditional
from pytest_karenina.templates.errors import TemplateWarning
from pytest_karenina.templates.primitives.base import (
    TracePrimitive,
    VerificationPrimitive,
    primitive_from_dict,
    serialize_primitive,
)
from pytest_karenina.templates.primitives.graded import (
    NumericGraded,
    NumericThresholdGraded,
)
from pytest_karenina.templates.primitives.numeric import (
    NumericExact,
    NumericMaximum,
    NumericMinimum,
    NumericTolerance,
)
from pytest_karenina.templates.primitives.text import BooleanMatch

VERIFICATION_KEY = "__verification__"

_NUMERIC_GT = (NumericExact, NumericTolerance, NumericMinimum, NumericMaximum, NumericGraded,
               NumericThresholdGraded)  # fmt: skip
_BOOL_LIKE = (True, False, 0, 1, "true", "false", "yes", "no", "True", "False")


def VerifiedField(
    description: str,
    ground_truth: Any,
    verify_with: VerificationPrimitive | None = None,
    weight: float = 1.0,
    extraction_hint: str | None = None,
    **field_kwargs: Any,
) -> Any:
    """Declare a template field with its ground truth and verification primitive.

    ``description`` is the judge's extraction instruction (required, non-blank);
    ``weight`` sets the field's share of ``verify_granular()``;
    ``extraction_hint`` is extra guidance shown to the judge. Other keyword
    arguments go to ``pydantic.Field``. Raises ``ValueError`` for a blank
    description, a missing primitive or a negative weight.
    """
    if not isinstance(description, str) or not description.strip():
        raise ValueError(
            "VerifiedField needs a non-empty description: it is the judge's instruction"
        )
    if verify_with is None:
        raise ValueError(
            "VerifiedField needs verify_with=<a verification primitive>, "
            "for example ExactMatch() or BooleanMatch()"
        )
    if not isinstance(verify_with, VerificationPrimitive):
        raise TypeError(
            f"verify_with must be a verification primitive, got {type(verify_with).__name__}"
        )
    numeric = isinstance(weight, int | float) and not isinstance(weight, bool)
    if not numeric or not math.isfinite(weight) or weight < 0:
        raise ValueError(f"VerifiedField weight must be a finite number >= 0, got {weight!r}")
    _warn_if_incompatible(ground_truth, verify_with)
    stored_truth = (
        ground_truth.serialize()
        if isinstance(ground_truth, ConditionalGroundTruth)
        else ground_truth
    )
    metadata = {
        "ground_truth": stored_truth,
        "verify_with": serialize_primitive(verify_with),
        "weight": float(weight),
        "extraction_hint": extraction_hint,
    }
    return Field(
        description=description, json_schema_extra={VERIFICATION_KEY: metadata}, **field_kwargs
    )


def _warn_if_incompatible(ground_truth: Any, primitive: VerificationPrimitive) -> None:
    if isinstance(ground_truth, ConditionalGroundTruth):
        return
    if isinstance(primitive, _NUMERIC_GT):
        try:
            float(ground_truth)
        except (TypeError, ValueError):
            warnings.warn(
                f"{type(primitive).__name__} compares numbers but the ground truth "
                f"{ground_truth!r} is not numeric",
                TemplateWarning,
                stacklevel=3,
            )
    elif isinstance(primitive, BooleanMatch) and ground_truth not in _BOOL_LIKE:
        warnings.warn(
            f"BooleanMatch expects a boolean ground truth, got {ground_truth!r}",
            TemplateWarning,
            stacklevel=3,
        )


@dataclass(frozen=True)
class VerificationMeta:
    """A VerifiedField's metadata with its primitive rebuilt."""

    ground_truth: Any
    verify_with: VerificationPrimitive
    weight: float = 1.0
    extraction_hint: str | None = None

    @property
    def is_trace(self) -> bool:
        return isinstance(self.verify_with, TracePrimitive)

    @property
    def is_conditional(self) -> bool:
        return is_conditional(self.ground_truth)

    @classmethod
    def from_field(cls, field: FieldInfo) -> VerificationMeta | None:
        """The metadata of a VerifiedField, or None for an ordinary field."""
        extra = field.json_schema_extra
        if not isinstance(extra, dict):
            return None
        stored = extra.get(VERIFICATION_KEY)
        if not isinstance(stored, dict):
            return None
        primitive = stored.get("verify_with")
        if not isinstance(primitive, dict):
            raise ValueError(f"{VERIFICATION_KEY} needs a stored primitive, got {primitive!r}")
        weight = stored.get("weight", 1.0)
        hint = stored.get("extraction_hint")
        return cls(
            ground_truth=stored.get("ground_truth"),
            verify_with=primitive_from_dict(primitive),
            weight=float(weight) if isinstance(weight, int | float) else 1.0,
            extraction_hint=hint if isinstance(hint, str) else None,
        )
