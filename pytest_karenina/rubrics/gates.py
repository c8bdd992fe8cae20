"""Pass/fail gates on rubric traits: which traits decide a verdict, and with which bound.

Karenina has no rubric verdict; pytest-karenina needs one for ``rubric_only`` runs
(and for ``template_and_rubric`` runs that ask for it). Defaults:

* boolean traits (LLM, regex, callable, agentic) pass when their value equals
  ``higher_is_better`` (true unless the trait says otherwise);
* score traits (LLM, agentic, and callable traits with both bounds) pass when their score,
  normalised to 0..1 over the trait's range and flipped when lower is better, is at
  least the score threshold (default 0.5);
* literal, template-kind and metric traits are reported but not gated.

Rules override the defaults per trait: ``Completeness>=4``, ``extraction.f1>=0.8``
(a metric of a metric trait, or a field of a template-kind trait), ``tone==formal``
(a literal class), ``HasCitations==false``, or ``Clarity off`` to stop gating a trait.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_karenina.results.rubric import VerificationResultRubric
from pytest_karenina.results.trace import TraceError, final_ai_message
from pytest_karenina.rubrics.traits import (
    AgenticRubricTrait,
    CallableTrait,
    LLMRubricTrait,
    MetricRubricTrait,
    RubricTrait,
)

DEFAULT_SCORE_THRESHOLD = 0.5
OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    ">=": operator.ge, "<=": operator.le, "==": operator.eq,
    "!=": operator.ne, ">": operator.gt, "<": operator.lt,
}  # fmt: skip
_RULE = re.compile(
    r"^\s*(?P<key>[^<>=!\s][^<>=!]*?)\s*(?P<op>>=|<=|==|!=|>|<)\s*(?P<value>[^<>=!\s].*?)\s*$"
)
_OFF = re.compile(r"^\s*(?P<key>\S.*?)\s+off\s*$", re.IGNORECASE)


class GateSpecError(ValueError):
    """A gate rule that cannot be read."""


@dataclass(frozen=True)
class GateRule:
    """``key op value``; ``op`` None means the trait is not gated (``key off``)."""

    key: str
    op: str | None = None
    value: Any = None

    def __str__(self) -> str:
        if self.op is None:
            return f"{self.key} off"
        value = str(self.value).lower() if isinstance(self.value, bool) else self.value
        return f"{self.key}{self.op}{value}"

    def holds(self, actual: Any) -> bool:
        assert self.op is not None
        expected, found = self.value, actual
        if isinstance(expected, bool) or isinstance(found, bool):
            return OPERATORS[self.op](_as_number(found), _as_number(expected))
        if isinstance(expected, str) or isinstance(found, str):
            return OPERATORS[self.op](str(found).lower(), str(expected).lower())
        return OPERATORS[self.op](found, expected)


def _as_number(value: Any) -> float:
    return float(value) if isinstance(value, bool | int | float) else math.nan


def _literal(text: str) -> Any:
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        number = float(text)
    except ValueError:
        return text.strip("'\"")
    return int(number) if number.is_integer() else number


def parse_gate_rules(entries: Iterable[str]) -> tuple[GateRule, ...]:
    """Rules from ini lines or options; each entry may hold several, comma-separated."""
    rules: list[GateRule] = []
    for entry in entries:
        for part in entry.split(","):
            if not part.strip():
                continue
            match = _RULE.match(part)
            off = _OFF.match(part)
            if match is not None:
                rules.append(GateRule(match["key"], match["op"], _literal(match["value"])))
            elif off is not None:
                rules.append(GateRule(off["key"]))
            else:
                raise GateSpecError(
                    f"cannot read rubric gate {part.strip()!r}: expected NAME>=VALUE (or <=, >, "
                    "<, ==, !=), NAME.METRIC>=VALUE, or 'NAME off'"
                )
    return tuple(rules)


def unknown_gate_traits(
    rules: Iterable[GateRule], traits_by_source: Mapping[str, Iterable[str]]
) -> str | None:
    """Why some ``rules`` name a trait no source has (a message listing the known traits per
    source), or None when every rule names a trait of at least one source.

    ``traits_by_source``: e.g. checkpoint file -> trait names. A rule's trait is the part of
    its key before the first dot (``extraction.f1`` names ``extraction``).
    """
    known = {name for names in traits_by_source.values() for name in names}
    unknown = sorted({str(rule) for rule in rules if rule.key.split(".", 1)[0] not in known})
    if not unknown:
        return None
    listing = "; ".join(
        f"{source}: {', '.join(sorted(names)) or '(no traits)'}"
        for source, names in traits_by_source.items()
    )
    return f"rubric gate names an unknown trait: {', '.join(unknown)}. Known traits: {listing}"


@dataclass(frozen=True)
class RubricGatePolicy:
    """How traits are gated: the score threshold and the per-trait rules."""

    score_threshold: float = DEFAULT_SCORE_THRESHOLD
    rules: tuple[GateRule, ...] = ()

    def rules_for(self, trait: str) -> list[GateRule]:
        """The rules on ``trait`` itself or on one of its parts (``trait.part``)."""
        return [r for r in self.rules if r.key == trait or r.key.startswith(f"{trait}.")]


@dataclass(frozen=True)
class TraitCheck:
    """One trait of one result: its value and whether it passes its gate.

    ``passed`` is None when the trait is not gated or has no value; ``error`` says
    why it has no value, ``skipped`` why a dynamic trait was not graded. ``reasoning`` is the
    judge's reasoning; for an agentic trait, its investigation's whole trace
    (:func:`investigation_finding` gives its conclusion).
    """

    name: str
    kind: str
    value: Any
    gated: bool
    passed: bool | None
    bound: str | None = None
    reasoning: str | None = None
    error: str | None = None
    skipped: str | None = None
    lower_is_better: bool = False
    """The trait's ``higher_is_better`` is false: a lower value is the better one."""

    @property
    def unmeasured(self) -> bool:
        """Gated, but without a value to judge."""
        return self.gated and self.error is not None


def kind_label(trait: RubricTrait) -> str:
    """``llm score 1-5``, ``regex``, ``callable boolean``, ``agentic boolean``, ``metric`` ..."""
    if isinstance(trait, LLMRubricTrait | CallableTrait | AgenticRubricTrait):
        if trait.kind == "score":
            return f"{trait.trait_type} score {trait.min_score}-{trait.max_score}"
        return f"{trait.trait_type} {trait.kind}"
    if isinstance(trait, MetricRubricTrait):
        return f"metric {trait.evaluation_mode}"
    return trait.trait_type


def _is_literal(trait: RubricTrait) -> bool:
    kinds = LLMRubricTrait | CallableTrait | AgenticRubricTrait
    return isinstance(trait, kinds) and trait.kind == "literal"


def _indices(rubric: VerificationResultRubric, trait: RubricTrait) -> Mapping[str, Any] | None:
    """The scores holding ``trait``'s class index (a literal trait)."""
    if isinstance(trait, CallableTrait):
        return rubric.callable_trait_scores
    if isinstance(trait, AgenticRubricTrait):
        return rubric.agentic_trait_scores
    return rubric.llm_trait_scores


def _value(rubric: VerificationResultRubric, trait: RubricTrait) -> Any:
    name = trait.name
    if isinstance(trait, LLMRubricTrait | AgenticRubricTrait) and trait.kind == "template":
        fields = (
            rubric.llm_trait_scores if trait.trait_type == "llm" else rubric.agentic_trait_scores
        )
        prefix = f"{name}."
        found = {k[len(prefix) :]: v for k, v in (fields or {}).items()
                 if k.startswith(prefix)}  # fmt: skip
        return found or None
    if _is_literal(trait) and isinstance(trait, LLMRubricTrait):
        return (rubric.llm_trait_labels or {}).get(name)
    if _is_literal(trait) and isinstance(trait, CallableTrait | AgenticRubricTrait):
        index = (_indices(rubric, trait) or {}).get(name)
        classes = list(trait.classes or {})
        valid = isinstance(index, int) and not isinstance(index, bool) and 0 <= index < len(classes)
        return classes[index] if valid else None  # type: ignore[index]
    scores = {
        "llm": rubric.llm_trait_scores, "regex": rubric.regex_trait_scores,
        "callable": rubric.callable_trait_scores, "metric": rubric.metric_trait_scores,
        "agentic": rubric.agentic_trait_scores,
    }[trait.trait_type]  # fmt: skip
    return (scores or {}).get(name)


def _default_gate(trait: RubricTrait, threshold: float) -> tuple[Callable[[Any], bool], str] | None:
    """The default pass test of ``trait`` and its bound as text, or None (not gated)."""
    kind = getattr(trait, "kind", "boolean" if trait.trait_type == "regex" else None)
    better = getattr(trait, "higher_is_better", True)
    if trait.trait_type in ("llm", "regex", "callable", "agentic") and kind == "boolean":
        wanted = better is not False
        return (lambda value: value is wanted), f"== {str(wanted).lower()}"
    if trait.trait_type in ("llm", "callable", "agentic") and kind == "score":
        low, high = getattr(trait, "min_score", None), getattr(trait, "max_score", None)
        if low is None or high is None or high <= low:
            return None
        cut = low + threshold * (high - low)
        if better is False:
            cut = high - threshold * (high - low)
            return (lambda value: value <= cut + 1e-9), f"<= {cut:g} (of {low}-{high})"
        return (lambda value: value >= cut - 1e-9), f">= {cut:g} (of {low}-{high})"
    return None


def _rule_test(
    trait: RubricTrait, rules: Sequence[GateRule], rubric: VerificationResultRubric
) -> tuple[Callable[[Any], bool], str]:
    literal = _is_literal(trait)
    indices = _indices(rubric, trait)

    def part(value: Any, rule: GateRule) -> Any:
        if rule.key != trait.name:
            return value.get(rule.key[len(trait.name) + 1 :]) if isinstance(value, dict) else None
        if literal and isinstance(rule.value, int | float) and not isinstance(rule.value, bool):
            return (indices or {}).get(trait.name)  # the class index
        return value

    def test(value: Any) -> bool:
        return all(
            part(value, rule) is not None and rule.holds(part(value, rule)) for rule in rules
        )

    return test, ", ".join(str(rule)[len(trait.name) :].lstrip(".") or str(rule) for rule in rules)


def check_traits(
    rubric: VerificationResultRubric | None,
    definitions: Mapping[str, RubricTrait],
    policy: RubricGatePolicy,
    ungrounded: Mapping[str, str] | None = None,
) -> list[TraitCheck]:
    """One :class:`TraitCheck` per trait the result covers, in evaluation order:
    graded traits (``trait_provenance``), then skipped dynamic traits.

    ``ungrounded`` maps the traits deep judgment found no verbatim quote for to why: such a
    trait fails its gate (rather than counting as unmeasured), unless a rule turns it off.
    """
    if rubric is None:
        return []
    errors = rubric.trait_errors or {}
    reasoning = {**(rubric.llm_trait_reasoning or {}),
                 **(rubric.agentic_trait_investigation_traces or {})}  # fmt: skip
    checks: list[TraitCheck] = []
    for name in rubric.trait_provenance or {}:
        trait = definitions.get(name)
        if trait is None:
            continue
        rules = policy.rules_for(name)
        active = [rule for rule in rules if rule.op is not None]
        gate = (
            None if rules and not active
            else _rule_test(trait, active, rubric) if active
            else _default_gate(trait, policy.score_threshold)
        )  # fmt: skip
        if ungrounded and name in ungrounded:
            checks.append(_ungrounded(trait, ungrounded[name], gated=not (rules and not active)))
            continue
        value = _value(rubric, trait)
        error = errors.get(name)
        passed = None if gate is None or error is not None or value is None else gate[0](value)
        if gate is not None and error is None and value is None:
            error = "no value"
        checks.append(TraitCheck(
            name, kind_label(trait), value, gate is not None, passed,
            bound=gate[1] if gate else None, reasoning=reasoning.get(name), error=error,
            lower_is_better=getattr(trait, "higher_is_better", True) is False,
        ))  # fmt: skip
    for name, reason in (rubric.dynamic_rubric_skipped_traits or {}).items():
        trait = definitions.get(name)
        kind = kind_label(trait) if trait is not None else "dynamic"
        checks.append(TraitCheck(name, kind, None, False, None, skipped=reason))
    return checks


def _ungrounded(trait: RubricTrait, why: str, *, gated: bool) -> TraitCheck:
    return TraitCheck(
        trait.name, kind_label(trait), None, gated, False if gated else None,
        bound="a verbatim quote of the answer" if gated else None, reasoning=why,
    )  # fmt: skip


def investigation_finding(trace: str) -> str:
    """What an agentic trait's investigation concluded: the last message of its ``trace``
    (the whole trace when none can be found)."""
    try:
        return final_ai_message(trace)
    except TraceError:
        return trace


def gate_summary(checks: Sequence[TraitCheck]) -> tuple[int, int]:
    """``(passed, gated)`` over ``checks``."""
    gated = [check for check in checks if check.gated]
    return sum(1 for check in gated if check.passed), len(gated)
