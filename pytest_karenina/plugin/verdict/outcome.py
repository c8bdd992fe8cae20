"""An item's verdicts: each result's :class:`Outcome`, and the facts behind it (which stage
decided, each field expected vs parsed, overrides applied).

Outcomes:

* ``error:<failure category>``: the pipeline failed (template, LLM, replay...);
* ``error:template``: the template's code raised (``verify()``, ``verify_granular()``, a
  regex pattern): a broken benchmark, although Karenina's fields record a false verdict;
* ``error:rubric``: rubrics gate and a gated trait has no value (a callable that
  cannot load, a judge call that failed): nothing unmeasured counts as a pass;
* ``error:worker_crashed``: the xdist worker running the item died;
* ``abstained``, ``insufficient``, ``verify_fail``: the template verdict is false;
* ``rubric_fail``: rubrics gate and a gated trait failed its bound;
* ``pass``; or ``no_verdict`` when nothing decided (e.g. rubric_only without gated traits).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from pytest_karenina.results.classify import template_error
from pytest_karenina.rubrics.gates import RubricGatePolicy, TraitCheck, check_traits
from pytest_karenina.templates import TemplateError, compile_template
from pytest_karenina.templates.primitives.base import TracePrimitive, serialize_primitive
from pytest_karenina.templates.time_limit import DEFAULT_TEMPLATE_TIME_LIMIT

if TYPE_CHECKING:
    from pytest_karenina.results import Failure, VerificationResult
    from pytest_karenina.rubrics.traits import Rubric, RubricTrait


class Outcome(StrEnum):
    """The outcome category of one result (or, for a whole item, its worst result)."""

    PASS = "pass"
    NO_VERDICT = "no_verdict"
    VERIFY_FAIL = "verify_fail"
    ABSTAINED = "abstained"
    INSUFFICIENT = "insufficient"
    RUBRIC_FAIL = "rubric_fail"
    RUBRIC_ERROR = "error:rubric"
    WORKER_CRASHED = "error:worker_crashed"
    UNKNOWN_ERROR = "error:unknown"
    # One per failure category of a result whose pipeline did not complete.
    CONTENT_ERROR = "error:content"
    RECURSION_LIMIT_ERROR = "error:recursion_limit"
    TRACE_VALIDATION_ERROR = "error:trace_validation"
    DEEP_JUDGMENT_ERROR = "error:deep_judgment"
    DEEP_JUDGMENT_RUBRIC_ERROR = "error:deep_judgment_rubric"
    TIMEOUT_ERROR = "error:timeout"
    CONNECTION_ERROR = "error:connection"
    RATE_LIMIT_ERROR = "error:rate_limit"
    SERVER_ERROR = "error:server_error"
    ABSTENTION_ERROR = "error:abstention"
    SUFFICIENCY_ERROR = "error:sufficiency"
    TEMPLATE_VALIDATION_ERROR = "error:template_validation"
    PARSING_ERROR = "error:parsing"
    UNEXPECTED_ERROR = "error:unexpected_error"
    REPLAY_ERROR = "error:replay"
    """Strict replay had no recording for a call (``failure.details["replay_miss"]``)."""
    TEMPLATE_ERROR = "error:template"
    """The template's code raised while judging the answer (:func:`template_error_of`)."""
    SCENARIO_FAIL = "scenario_fail"
    """A scenario item whose verdict is a failure (:mod:`.scenario`)."""
    SCENARIO_ERROR = "error:scenario"
    """A scenario that did not load, or whose execution stopped with status ``error``."""

    @property
    def is_error(self) -> bool:
        """Nothing was measured: pytest reports the item as an error, not a failure."""
        return self.startswith("error:")

    @property
    def decided(self) -> bool:
        """A verdict was reached (pass or a failure), as opposed to an error or no verdict."""
        return not self.is_error and self is not Outcome.NO_VERDICT

    @classmethod
    def of_failure(cls, category: str | None) -> Outcome:
        """The error outcome of a failure category (``error:unknown`` when none)."""
        return cls(f"error:{category}") if category else cls.UNKNOWN_ERROR


def worst_outcome(outcomes: Sequence[Outcome]) -> Outcome:
    """An item's outcome: its first error, else its first non-pass, else pass (no verdict
    when there is no outcome at all)."""
    if not outcomes:
        return Outcome.NO_VERDICT
    return next((o for o in outcomes if o.is_error), None) or next(
        (o for o in outcomes if o is not Outcome.PASS), Outcome.PASS
    )


@dataclass(frozen=True)
class Verdict:
    """One result of an item with its trait checks and outcome."""

    result: VerificationResult
    checks: list[TraitCheck] = field(default_factory=list)
    category: Outcome = Outcome.NO_VERDICT
    gating: bool = True
    """Whether the gated rubric traits take part in the verdict (``rubric_only``, or
    ``template_and_rubric`` with ``--karenina-rubric-gate``); else they are reported only."""
    embedding_threshold: float | None = None
    """The run's embedding check threshold (None when the check is off or not known)."""

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


def _template_outcome(result: VerificationResult) -> Outcome | None:
    template = result.template
    if template is None or template.verify_result is None:
        return None
    if template.verify_result:
        return Outcome.PASS
    if template.abstention_detected and template.abstention_override_applied:
        return Outcome.ABSTAINED
    if template.sufficiency_detected is False and template.sufficiency_override_applied:
        return Outcome.INSUFFICIENT
    return Outcome.VERIFY_FAIL


def template_error_of(result: VerificationResult) -> str | None:
    """``template error: verify() raised ... (template line N)`` when the template's code
    raised while judging the answer (from the result's warnings, or its
    ``field_verification_error``), else None."""
    template = result.template
    raised = template.field_verification_error if template is not None else None
    return template_error(result.metadata.warnings, raised)


def error_outcome(result: VerificationResult) -> Outcome:
    """The error outcome of a result whose pipeline did not complete: ``error:replay`` for a
    strict replay miss, else ``error:<its failure category>``."""
    failure = result.metadata.failure
    if failure is not None and (failure.details or {}).get("replay_miss"):
        return Outcome.REPLAY_ERROR
    return Outcome.of_failure(failure.category if failure else None)


def outcome_of(result: VerificationResult, checks: Sequence[TraitCheck], gating: bool) -> Outcome:
    """The outcome of one result (see the module docstring)."""
    meta = result.metadata
    if meta.error or not meta.completed_without_errors:
        return error_outcome(result)
    if template_error_of(result) is not None:
        return Outcome.TEMPLATE_ERROR
    gated = [check for check in checks if check.gated] if gating else []
    if any(check.unmeasured for check in gated):
        return Outcome.RUBRIC_ERROR
    template = _template_outcome(result)
    if template not in (None, Outcome.PASS):
        return template
    if any(check.passed is False for check in gated):
        return Outcome.RUBRIC_FAIL
    if template is Outcome.PASS or gated:
        return Outcome.PASS
    return Outcome.NO_VERDICT


def ungrounded_traits(result: VerificationResult) -> dict[str, str]:
    """The rubric traits deep judgment found no verbatim quote for, with the reason."""
    section = result.deep_judgment_rubric
    if section is None or not section.traits_without_valid_excerpts:
        return {}
    metadata = section.trait_metadata or {}
    found = {}
    for name in section.traits_without_valid_excerpts:
        retries = (metadata.get(name) or {}).get("excerpt_retry_count", 0)
        found[name] = (
            f"deep judgment: no valid quote after {retries} excerpt "
            f"retr{'y' if retries == 1 else 'ies'}"
        )
    return found


def decide_verdicts(
    results: Sequence[VerificationResult],
    definitions: Mapping[str, RubricTrait],
    policy: RubricGatePolicy,
    gating: bool,
    embedding_threshold: float | None = None,
) -> list[Verdict]:
    """The verdicts of an item's results; ``gating``: rubric traits take part;
    ``embedding_threshold``: the run's, when its embedding check is on (for explanations)."""
    verdicts = []
    for result in results:
        checks = check_traits(result.rubric, definitions, policy, ungrounded_traits(result))
        outcome = outcome_of(result, checks, gating)
        verdicts.append(Verdict(result, checks, outcome, gating, embedding_threshold))
    return verdicts


# --- the facts behind a verdict ----------------------------------------------------------


@dataclass(frozen=True)
class FieldFacts:
    """What the reports need of a question's template, read where it was compiled (the
    pipeline's thread): each field's primitive class name and, for trace primitives, what the
    check found in the answer (``True``: the pattern or text is there)."""

    primitives: Mapping[str, str] = field(default_factory=dict)
    observed: Mapping[str, bool] = field(default_factory=dict)
    specs: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    """The stored form of each primitive that normalizes text (``normalize``), so a report
    can re-run it with another normalizer on the recorded values (failure clusters)."""


NO_FACTS = FieldFacts()
"""Shared by every item without facts (before its pipeline ran, and after teardown)."""


def field_facts(
    code: str, trace: str | None, *, seconds: float | None = DEFAULT_TEMPLATE_TIME_LIMIT
) -> FieldFacts:
    """The :class:`FieldFacts` of template ``code`` for the answer ``trace``; empty when the
    template does not compile. ``seconds``: the run's ``template_time_limit``, which is part
    of the compile cache's key, so the pipeline's compiled class (or error) is reused and the
    template's code does not run again under another limit."""
    try:
        answer_class = compile_template(code, seconds=seconds)
    except TemplateError:
        return NO_FACTS
    checks = {
        name: meta.verify_with
        for name, meta in answer_class.verified_fields().items()
        if meta.verify_with is not None
    }
    observed = {
        name: check.check_trace(trace)
        for name, check in checks.items()
        if isinstance(check, TracePrimitive) and trace is not None
    }
    specs = {
        name: serialize_primitive(check)
        for name, check in checks.items()
        if "normalize" in type(check).model_fields
    }
    return FieldFacts(
        {name: type(check).__name__ for name, check in checks.items()}, observed, specs
    )


def field_rows(result: VerificationResult, facts: FieldFacts) -> list[dict[str, Any]]:
    """One row per judged field: name, expected, parsed, primitive, passed (None: no verdict)
    and, for a template that decides with its own ``verify()`` (no per-field verdicts),
    ``differs``: whether the extraction is not the ground truth (else None). Such a template
    also gets a row, without the ``expected`` key, for each field the judge extracted that has
    no ground truth (``differs`` None): what its ``verify()`` judged.

    A trace primitive's field shows as parsed what its check found in the answer; the failed
    field of a primitive that normalizes text adds ``spec``, its stored form
    (:attr:`FieldFacts.specs`).
    """
    template = result.template
    if template is None:
        return []
    expected = template.parsed_gt_response or {}
    parsed = {**(template.parsed_llm_response or {}), **facts.observed}
    outcome = template.field_results or {}
    names = [*outcome] + [n for n in expected if n not in outcome]
    if not outcome:
        names += [name for name in parsed if name not in expected]
    rows: list[dict[str, Any]] = []
    for name in names:
        row: dict[str, Any] = {"field": name}
        if name in outcome or name in expected:
            row["expected"] = expected.get(name)
        compared = not outcome and "expected" in row
        row |= {
            "parsed": parsed.get(name),
            "primitive": facts.primitives.get(name),
            "passed": outcome.get(name),
            "differs": parsed.get(name) != row["expected"] if compared else None,
        }
        if name in facts.specs and row["passed"] is False:  # what a failure cluster re-runs
            row["spec"] = dict(facts.specs[name])
        rows.append(row)
    return rows


def overrides(result: VerificationResult) -> list[str]:
    """The checks that overrode the template verdict, in words."""
    template = result.template
    if template is None:
        return []
    found = []
    if template.abstention_override_applied:
        found.append("abstention detected: verdict forced to false")
    if template.sufficiency_override_applied:
        found.append("insufficient response: verdict forced to false")
    if template.embedding_override_applied:
        score = template.embedding_similarity_score
        found.append(f"embedding check rescued the answer (similarity {score:.3f})")
    return found


def _class_style(stage: str) -> str:
    # Failure records name Karenina's stages in snake case (verify_template).
    return "".join(part.capitalize() for part in stage.split("_")) if stage.islower() else stage


def template_deciding_stage(result: VerificationResult) -> str:
    """The stage that decided the template verdict (class-style name): the stage of the
    failure record (the pipeline names the stage that forced a false verdict there, a custom
    stage too), else the check whose override flag is set, else VerifyTemplate."""
    template = result.template
    failure = result.metadata.failure
    if failure is not None:
        return _class_style(failure.stage)
    if template is not None:
        if template.abstention_override_applied:
            return "AbstentionCheck"
        if template.sufficiency_override_applied:
            return "SufficiencyCheck"
        if template.recursion_limit_reached:
            return "RecursionLimitAutoFail"
        if template.embedding_override_applied:
            return "EmbeddingCheck"
    return "VerifyTemplate"


def overriding_failure(verdict: Verdict) -> Failure | None:
    """The failure record of a false verdict that a stage other than VerifyTemplate forced
    (an auto-fail stage, a custom stage): its ``reason`` names the stage's reason."""
    failure = verdict.result.metadata.failure
    if failure is None or verdict.category not in (Outcome.VERIFY_FAIL, Outcome.RUBRIC_FAIL):
        return None
    if verdict.category is Outcome.RUBRIC_FAIL:
        return failure if failure.category == "deep_judgment_rubric" else None
    return None if _class_style(failure.stage) == "VerifyTemplate" else failure


def deciding_stage(verdict: Verdict) -> str:
    """The stage that forced a false verdict (:func:`overriding_failure`), RubricEvaluation
    when a rubric gate decided, else the template's deciding stage."""
    forced = overriding_failure(verdict)
    if forced is not None:
        return _class_style(forced.stage)
    template = verdict.result.template
    no_template_verdict = template is None or template.verify_result is None
    rubric_decided = verdict.category in (Outcome.RUBRIC_FAIL, Outcome.RUBRIC_ERROR) or (
        verdict.category is Outcome.PASS and no_template_verdict
    )
    return "RubricEvaluation" if rubric_decided else template_deciding_stage(verdict.result)
