"""Per-field results and the automatic ``verify()`` / ``verify_granular()``.

Used by templates with VerifiedFields. Each field gets a tri-state result:
``True``/``False`` from its primitive, or ``None`` when the judge left it null
(the field is in the instance's ``_null_fields``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_karenina.templates.composition import (
    AnyOf,
    AtLeastN,
    evaluate_strategy,
    template_strategy,
)
from pytest_karenina.templates.conditional import resolve_conditional
from pytest_karenina.templates.primitives.base import TracePrimitive, VerificationPrimitive

if TYPE_CHECKING:
    from pytest_karenina.templates.base_answer import BaseAnswer


@dataclass(frozen=True)
class FieldOutcome:
    """The verification of one VerifiedField."""

    name: str
    result: bool | None
    score: float | None
    expected: Any
    weight: float
    primitive: VerificationPrimitive


def _score(primitive: VerificationPrimitive, value: Any, expected: Any, passed: bool) -> float:
    try:
        score = float(primitive.score(value, expected))
    except Exception:  # a scoring failure only loses the partial credit
        return 1.0 if passed else 0.0
    if math.isnan(score):
        return 1.0 if passed else 0.0
    return min(1.0, max(0.0, score))


def evaluate_fields(answer: BaseAnswer) -> dict[str, FieldOutcome]:
    """Verify every VerifiedField of ``answer``, in declaration order.

    Exceptions from a primitive's ``check`` propagate (the caller reports them
    as a field verification error); a trace field without a raw trace raises
    ``ValueError``.
    """
    outcomes: dict[str, FieldOutcome] = {}
    context = answer._scenario_context
    for name, meta in type(answer).verified_fields().items():
        expected, primitive = meta.ground_truth, meta.verify_with
        if meta.is_conditional:
            expected, override = resolve_conditional(meta.ground_truth, context)
            primitive = override or primitive
        result: bool | None
        score: float | None
        if name in answer._null_fields:
            result, score = None, None
        elif isinstance(primitive, TracePrimitive):
            trace = answer._raw_trace
            if trace is None:
                raise ValueError(f"field {name!r} checks the raw trace, but no trace is attached")
            result = primitive.check_trace(trace) == bool(expected)
            score = 1.0 if result else 0.0
        else:
            value = getattr(answer, name)
            result = bool(primitive.check(value, expected))
            score = _score(primitive, value, expected, result)
        outcomes[name] = FieldOutcome(name, result, score, expected, meta.weight, primitive)
    return outcomes


def auto_verify(self: BaseAnswer) -> bool:
    """All VerifiedFields pass, or the template's ``VerificationStrategy`` holds."""
    outcomes = evaluate_fields(self)
    strategy = template_strategy(type(self))
    if strategy is not None:
        return evaluate_strategy(strategy, {name: o.result for name, o in outcomes.items()})
    return all(outcome.result is True for outcome in outcomes.values())


def auto_verify_granular(self: BaseAnswer) -> float:
    """Weighted partial credit in [0, 1] that follows the top-level strategy.

    Contribution of a field = weight x score (a null field contributes 0);
    ``AllOf``/no strategy: sum of contributions; ``AnyOf``: the largest;
    ``AtLeastN(n)``: the n largest; each divided by the sum of all weights.
    """
    outcomes = evaluate_fields(self).values()
    total = sum(outcome.weight for outcome in outcomes)
    if total == 0:
        return 0.0
    contributions = sorted(
        (outcome.weight * (outcome.score or 0.0) for outcome in outcomes), reverse=True
    )
    strategy = template_strategy(type(self))
    if isinstance(strategy, AnyOf):
        contributions = contributions[:1]
    elif isinstance(strategy, AtLeastN):
        contributions = contributions[: strategy.n]
    return sum(contributions) / total


auto_verify.__karenina_auto__ = True  # type: ignore[attr-defined]
auto_verify_granular.__karenina_auto__ = True  # type: ignore[attr-defined]
