"""Composition of per-field results: ``FieldCheck``, ``AllOf``, ``AnyOf``, ``AtLeastN``.

A template selects a rule with a nested class::

    class VerificationStrategy:
        verify_strategy = AnyOf(conditions=[FieldCheck(field="target"), ...])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field


class _Node(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class FieldCheck(_Node):
    """Passes when the named VerifiedField's result is exactly ``True``."""

    type: Literal["field_check"] = "field_check"
    field: str


class AllOf(_Node):
    """Passes when every condition passes (an empty ``AllOf`` passes)."""

    type: Literal["all_of"] = "all_of"
    conditions: list[Condition] = []


class AnyOf(_Node):
    """Passes when at least one condition passes (an empty ``AnyOf`` fails)."""

    type: Literal["any_of"] = "any_of"
    conditions: list[Condition] = []


class AtLeastN(_Node):
    """Passes when at least ``n`` conditions pass."""

    type: Literal["at_least_n"] = "at_least_n"
    n: int = Field(ge=0)
    conditions: list[Condition] = []


Condition: TypeAlias = Annotated[FieldCheck | AllOf | AnyOf | AtLeastN, Field(discriminator="type")]
Strategy: TypeAlias = AllOf | AnyOf | AtLeastN | FieldCheck

for _model in (AllOf, AnyOf, AtLeastN):
    _model.model_rebuild()


def evaluate_strategy(node: Strategy, results: Mapping[str, bool | None]) -> bool:
    """Evaluate a composition tree over per-field results (``None`` fails).

    Raises ``KeyError`` naming the field when a ``FieldCheck`` refers to a field
    that has no result.
    """
    if isinstance(node, FieldCheck):
        if node.field not in results:
            raise KeyError(f"FieldCheck refers to {node.field!r}, which is not a VerifiedField")
        return results[node.field] is True
    outcomes = [evaluate_strategy(child, results) for child in node.conditions]
    if isinstance(node, AllOf):
        return all(outcomes)
    if isinstance(node, AnyOf):
        return any(outcomes)
    return sum(outcomes) >= node.n


def referenced_fields(node: Strategy) -> set[str]:
    """Every field name a composition tree refers to."""
    if isinstance(node, FieldCheck):
        return {node.field}
    names: set[str] = set()
    for child in node.conditions:
        names |= referenced_fields(child)
    return names


def strategy_label(node: Strategy | None) -> str | None:
    """The ``composition_strategy`` of results: ``all_of``, ``any_of`` or ``at_least_n(<n>)``."""
    if node is None:
        return None
    if isinstance(node, AtLeastN):
        return f"at_least_n({node.n})"
    return node.type


def template_strategy(answer_class: type[Any]) -> Strategy | None:
    """The ``VerificationStrategy.verify_strategy`` of a template class, if any.

    Raises ``TypeError`` when the attribute is present but not a composition node.
    """
    holder = getattr(answer_class, "VerificationStrategy", None)
    strategy = getattr(holder, "verify_strategy", None) if holder is not None else None
    if strategy is None:
        return None
    if not isinstance(strategy, FieldCheck | AllOf | AnyOf | AtLeastN):
        raise TypeError(
            "VerificationStrategy.verify_strategy must be AllOf, AnyOf, AtLeastN or FieldCheck, "
            f"got {type(strategy).__name__}"
        )
    return strategy
