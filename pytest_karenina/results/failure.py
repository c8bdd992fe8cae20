"""The failure taxonomy of ``metadata.failure`` and the caveats of ``metadata.caveats``.

A :class:`Failure` is the structured reason a result did not pass (spec 5.7); a caveat is an
informational flag that accompanies any verdict. :func:`classify_failure` lives in
:mod:`pytest_karenina.results.classify`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, computed_field

FailureCategory = Literal[
    "content",
    "recursion_limit",
    "trace_validation",
    "deep_judgment",
    "deep_judgment_rubric",
    "timeout",
    "connection",
    "rate_limit",
    "server_error",
    "abstention",
    "sufficiency",
    "template_validation",
    "parsing",
    "unexpected_error",
]
"""Leaf category of a failure (Karenina's ``FailureCategory`` values)."""

FailureGroup = Literal["content", "autofail", "retry", "abstained", "system"]
"""Coarse grouping of failure categories, for aggregation."""

Caveat = Literal[
    "partial_content", "embedding_override", "retries_used", "parse_decision_malformed"
]
"""The caveats Karenina emits. ``metadata.caveats`` is typed ``list[str]`` so that exports
from a newer Karenina with more caveats still load."""

CATEGORY_GROUPS: Mapping[FailureCategory, FailureGroup] = MappingProxyType(
    {
        "content": "content",
        "recursion_limit": "autofail",
        "trace_validation": "autofail",
        "deep_judgment": "autofail",
        "deep_judgment_rubric": "autofail",
        "timeout": "retry",
        "connection": "retry",
        "rate_limit": "retry",
        "server_error": "retry",
        "abstention": "abstained",
        "sufficiency": "abstained",
        "template_validation": "system",
        "parsing": "system",
        "unexpected_error": "system",
    }
)
"""The group of every category (spec 5.7)."""

REASON_MAX_CHARS = 500


class Failure(BaseModel):
    """A structured non-pass verdict: ``{category, stage, reason, details, group}``.

    ``reason`` is at most 500 characters (use :func:`trim_reason`). ``group`` is computed from
    ``category``: it is written on dump and any incoming ``group`` is ignored on load.
    ``details`` is free-form JSON; pytest-karenina puts the run's full error text under
    ``"error_message"`` whenever an error was recorded (see ``docs/results.md``).
    """

    model_config = ConfigDict(extra="ignore", frozen=True)

    category: FailureCategory
    stage: str
    reason: str = Field(max_length=REASON_MAX_CHARS)
    details: dict[str, Any] | None = None

    # mypy does not understand a decorated property; pydantic requires this order.
    @computed_field  # type: ignore[prop-decorator]
    @property
    def group(self) -> FailureGroup:
        """The category's group (``CATEGORY_GROUPS[category]``)."""
        return CATEGORY_GROUPS[self.category]

    @property
    def error_message(self) -> str | None:
        """The full error text stored in ``details["error_message"]``, if any."""
        value = (self.details or {}).get("error_message")
        return value if isinstance(value, str) else None


def trim_reason(text: str | None) -> str:
    """``text`` stripped and cut to the 500 characters a ``Failure.reason`` may hold."""
    return (text or "").strip()[:REASON_MAX_CHARS]


def error_from_failure(failure: Failure | Mapping[str, Any] | None) -> str | None:
    """The ``metadata.error`` text a failure implies (used when loading Karenina exports).

    ``details["error_message"]`` when present; otherwise the reason of a failure in the
    ``retry`` or ``system`` group (those always come from a recorded error); else None.
    """
    if failure is None:
        return None
    data = failure.model_dump() if isinstance(failure, Failure) else failure
    details = data.get("details")
    if isinstance(details, Mapping) and isinstance(details.get("error_message"), str):
        return str(details["error_message"])
    category = data.get("category")
    group = (
        CATEGORY_GROUPS.get(cast(FailureCategory, category)) if isinstance(category, str) else None
    )
    reason = data.get("reason")
    if group in ("retry", "system") and isinstance(reason, str):
        return reason
    return None


def template_validation_error_from_failure(
    failure: Failure | Mapping[str, Any] | None,
) -> str | None:
    """The ``template.template_validation_error`` a ``template_validation`` failure implies."""
    if failure is None:
        return None
    data = failure.model_dump() if isinstance(failure, Failure) else failure
    if data.get("category") != "template_validation":
        return None
    details = data.get("details")
    if isinstance(details, Mapping) and isinstance(details.get("template_validation_error"), str):
        return str(details["template_validation_error"])
    reason = data.get("reason")
    return reason if isinstance(reason, str) else None
