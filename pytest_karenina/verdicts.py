"""An item's verdicts: the template verdict and, where rubrics gate, the rubric traits.

Each result gets a category:

* ``error:<failure category>``: the pipeline failed (template, LLM, replay...);
* ``error:rubric``: rubrics gate and a gated trait has no value (a callable that
  cannot load, a judge call that failed): nothing unmeasured counts as a pass;
* ``abstained``, ``insufficient``, ``verify_fail``: the template verdict is false;
* ``rubric_fail``: rubrics gate and a gated trait failed its bound;
* ``pass``; or ``no_verdict`` when nothing decided (e.g. rubric_only without gated traits).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_karenina.results import VerificationResult
    from pytest_karenina.rubrics.gates import GatePolicy, TraitCheck
    from pytest_karenina.rubrics.traits import Rubric, RubricTrait

RUBRIC_ERROR = "error:rubric"
RUBRIC_FAIL = "rubric_fail"
NO_GATED_TRAITS = (
    "no verdict: rubric_only and no gated rubric trait "
    "(gate literal or metric traits with karenina_rubric_gates)"
)


@dataclass(frozen=True)
class Verdict:
    """One result of an item with its trait checks and category."""

    result: VerificationResult
    checks: list[TraitCheck] = field(default_factory=list)
    category: str = "no_verdict"

    @property
    def failing_traits(self) -> list[TraitCheck]:
        return [check for check in self.checks if check.gated and check.passed is False]

    @property
    def unmeasured_traits(self) -> list[TraitCheck]:
        return [check for check in self.checks if check.unmeasured]


def trait_definitions(rubrics: Sequence[Rubric | None]) -> dict[str, RubricTrait]:
    """Every trait of ``rubrics`` by name (the first definition of a name wins)."""
    found: dict[str, RubricTrait] = {}
    for rubric in rubrics:
        for trait in rubric.traits() if rubric is not None else ():
            found.setdefault(trait.name, trait)
    return found


def _template_category(result: VerificationResult) -> str | None:
    template = result.template
    if template is None or template.verify_result is None:
        return None
    if template.verify_result:
        return "pass"
    if template.abstention_detected and template.abstention_override_applied:
        return "abstained"
    if template.sufficiency_detected is False and template.sufficiency_override_applied:
        return "insufficient"
    return "verify_fail"


def categorize(result: VerificationResult, checks: Sequence[TraitCheck], gating: bool) -> str:
    """The category of one result (see the module docstring)."""
    meta = result.metadata
    if meta.error or not meta.completed_without_errors:
        return f"error:{meta.failure.category}" if meta.failure else "error:unknown"
    gated = [check for check in checks if check.gated] if gating else []
    if any(check.unmeasured for check in gated):
        return RUBRIC_ERROR
    template = _template_category(result)
    if template not in (None, "pass"):
        return str(template)
    if any(check.passed is False for check in gated):
        return RUBRIC_FAIL
    if template == "pass" or gated:
        return "pass"
    return "no_verdict"


def judge(
    results: Sequence[VerificationResult],
    definitions: Mapping[str, RubricTrait],
    policy: GatePolicy,
    gating: bool,
) -> list[Verdict]:
    """The verdicts of an item's results."""
    from pytest_karenina.rubrics.gates import check_traits

    verdicts = []
    for result in results:
        checks = check_traits(result.rubric, definitions, policy)
        verdicts.append(Verdict(result, checks, categorize(result, checks, gating)))
    return verdicts


def trait_line(check: TraitCheck) -> str:
    """``Clarity (llm score 1-5): 2, needs >= 3 (of 1-5); judge: ...``"""
    from pytest_karenina.outcomes import MAX_REASONING, short

    if check.error is not None:
        text = f"no value ({check.error})"
    else:
        text = short(check.value)
        if check.bound:
            text += f", needs {check.bound}"
    line = f"  trait {check.name} ({check.kind}): {text}"
    if check.reasoning:
        line += f"; judge: {short(check.reasoning, MAX_REASONING)}"
    return line


def rubric_explanation(verdict: Verdict) -> list[str]:
    """Lines naming each failing (or unmeasured) gated trait with value, bound and reasoning."""
    failing, unmeasured = verdict.failing_traits, verdict.unmeasured_traits
    gated = sum(1 for check in verdict.checks if check.gated)
    lines: list[str] = []
    if failing:
        lines.append(f"  rubric gate: {len(failing)} of {gated} gated traits failed")
    if unmeasured:
        lines.append(f"  rubric gate: {len(unmeasured)} of {gated} gated traits have no value")
    lines.extend(trait_line(check) for check in [*unmeasured, *failing])
    return lines


def check_dict(check: TraitCheck) -> dict[str, Any]:
    """A JSON-native form of a check, for the report payload."""
    return dataclasses.asdict(check)
