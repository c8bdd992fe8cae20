"""Ground truth that depends on an earlier scenario node's result.

Outside a scenario (and whenever the source cannot be resolved or has no
matching case) the ``default`` case applies. A case may also replace the
field's primitive.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, field_serializer

from pytest_karenina.templates.primitives.base import (
    VerificationPrimitive,
    primitive_from_dict,
    serialize_primitive,
)

CONDITIONAL_MARKER = "__conditional__"


class GroundTruthCase(BaseModel):
    """One branch: its ground truth value and an optional primitive override."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    value: Any
    verify_with: VerificationPrimitive | None = None

    @field_serializer("verify_with")
    def _dump_primitive(self, primitive: VerificationPrimitive | None) -> dict[str, Any] | None:
        return None if primitive is None else serialize_primitive(primitive)


class ConditionalGroundTruth(BaseModel):
    """Choose a :class:`GroundTruthCase` by the value found at ``source``.

    ``source`` is a dot path into the scenario context, e.g.
    ``"node_results.triage.parsed.severity"``; ``cases`` is keyed by ``str()``
    of that value.
    """

    model_config = ConfigDict(extra="forbid")

    source: str
    cases: dict[str, GroundTruthCase]
    default: GroundTruthCase

    def serialize(self) -> dict[str, Any]:
        """The stored form: the JSON dump plus ``"__conditional__": true``."""
        data = self.model_dump(mode="json")
        data[CONDITIONAL_MARKER] = True
        return data


def is_conditional(ground_truth: Any) -> bool:
    return isinstance(ground_truth, Mapping) and ground_truth.get(CONDITIONAL_MARKER) is True


def _lookup(path: str, context: Mapping[str, Any]) -> Any:
    current: Any = context
    for part in path.split("."):
        if not isinstance(current, Mapping):
            return None
        current = current.get(part)
        if current is None:
            return None
    return current


def resolve_conditional(
    stored: Mapping[str, Any], context: Mapping[str, Any] | None
) -> tuple[Any, VerificationPrimitive | None]:
    """The ground truth value and primitive override that apply in ``context``."""
    case: Any = stored.get("default") or {}
    if context is not None:
        found = _lookup(str(stored.get("source", "")), context)
        if found is not None:
            case = stored.get("cases", {}).get(str(found), case)
    override = case.get("verify_with")
    return case.get("value"), (primitive_from_dict(override) if override else None)
