"""Rubric deep judgment over an item's rubric: which traits, their grading, the section.

RubricEvaluation hands the LLM traits that deep judgment covers (:func:`split_deep_traits`)
to :func:`grade_deep_traits` and the others to the plain grader. Deep-judged values join the
plain ones in ``llm_trait_scores``; a failing call is an entry of ``trait_errors``; a trait
left without a valid quote has neither, and :class:`RubricDeepJudgment` lists it for stage
12 (DeepJudgmentRubricAutoFail) and the ``deep_judgment_rubric`` section.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_karenina.config.verification import VerificationConfig
from pytest_karenina.llm.ports import ChatPort
from pytest_karenina.pipeline.deep_judgment.rubric_trait import (
    TraitDeepJudgment,
    TraitSettings,
    judge_trait,
    trait_settings,
)
from pytest_karenina.pipeline.deep_judgment.search import SearchFunction
from pytest_karenina.pipeline.rubric_grading.outcome import RubricOutcome
from pytest_karenina.results.deep_judgment import VerificationResultDeepJudgmentRubric
from pytest_karenina.rubrics.traits import LLMRubricTrait

DEEP_JUDGMENT_RUBRIC = "deep_judgment_rubric_outcome"
"""Artifact: the item's :class:`RubricDeepJudgment`, when RubricEvaluation ran with rubric
deep judgment enabled."""
NOT_DEEP_KIND = (
    "rubric trait {name!r} asks for deep judgment, which covers boolean and score traits; "
    "this {kind} trait was graded with a plain judge call"
)


@dataclass
class RubricDeepJudgment:
    """Deep judgment of one item's rubric: each deep-judged trait, and the plain LLM scores
    of the same rubric (``standard_rubric_scores``)."""

    traits: dict[str, TraitDeepJudgment] = field(default_factory=dict)
    standard_scores: dict[str, Any] = field(default_factory=dict)

    @property
    def performed(self) -> bool:
        return bool(self.traits)

    def without_excerpts(self) -> list[str]:
        """The traits whose quotes were all rejected, after every retry."""
        return [name for name, trait in self.traits.items() if trait.excerpt_validation_failed]

    def ungrounded(self) -> list[str]:
        """One warning line per trait without a valid quote (stage 12 logs them)."""
        return [self.traits[name].ungrounded() for name in self.without_excerpts()]

    def section(self) -> VerificationResultDeepJudgmentRubric:
        """The ``deep_judgment_rubric`` result section, as Karenina writes it once a trait
        was deep-judged: empty maps and lists as ``{}`` and ``[]`` (the hallucination risks
        None without any), ``total_traits_evaluated`` counting the traits that got a grade.
        Before any trait was (the section of an evaluation that never ran), None."""
        if not self.performed:
            return VerificationResultDeepJudgmentRubric(
                standard_rubric_scores=self.standard_scores or None
            )
        traits = self.traits.values()
        scores = {t.name: t.value for t in traits if t.value is not None}
        risks = {t.name: t.risk for t in traits if t.risk is not None}
        return VerificationResultDeepJudgmentRubric(
            deep_judgment_rubric_performed=True,
            extracted_rubric_excerpts={t.name: t.excerpts for t in traits if t.excerpts},
            rubric_trait_reasoning={t.name: t.reasoning for t in traits if t.reasoning},
            deep_judgment_rubric_scores=scores,
            standard_rubric_scores=dict(self.standard_scores),
            trait_metadata={t.name: t.metadata() for t in traits},
            traits_without_valid_excerpts=self.without_excerpts(),
            rubric_hallucination_risk_assessment=risks or None,
            total_deep_judgment_model_calls=sum(t.model_calls for t in traits),
            total_traits_evaluated=len(scores),
            total_excerpt_retries=sum(t.retries for t in traits),
        )


def rubric_deep_judgment_enabled(
    config: VerificationConfig | None, traits: Sequence[LLMRubricTrait]
) -> bool:
    """Whether the item's rubric has deep judgment on: a mode other than ``disabled``, or a
    trait that asks for it itself."""
    if config is not None and config.deep_judgment_rubric_mode != "disabled":
        return True
    return any(trait.deep_judgment_enabled for trait in traits)


def split_deep_traits(
    config: VerificationConfig | None, traits: Sequence[LLMRubricTrait], question_id: str
) -> tuple[list[tuple[LLMRubricTrait, TraitSettings]], list[LLMRubricTrait], list[str]]:
    """``(deep, plain, warnings)``: the traits graded through deep judgment with their
    settings, the others, and a warning per trait that asks for it but is of a kind it
    does not cover (literal, template)."""
    deep: list[tuple[LLMRubricTrait, TraitSettings]] = []
    plain: list[LLMRubricTrait] = []
    warnings: list[str] = []
    for trait in traits:
        settings = trait_settings(config, trait, question_id) if config is not None else None
        if settings is not None:
            deep.append((trait, settings))
            continue
        plain.append(trait)
        if trait.deep_judgment_enabled and trait.kind not in ("boolean", "score"):
            warnings.append(NOT_DEEP_KIND.format(name=trait.name, kind=trait.kind))
    return deep, plain, warnings


def grade_deep_traits(
    judge: ChatPort,
    deep: Sequence[tuple[LLMRubricTrait, TraitSettings]],
    answer: str,
    outcome: RubricOutcome,
    *,
    question: str = "",
    instructions: Mapping[str, str | None] | None = None,
    search: Callable[[], SearchFunction] | None = None,
) -> RubricDeepJudgment:
    """Grade each deep trait in turn into ``outcome`` (scores, reasoning, errors, usage).

    ``search`` makes the search function, once, when the first trait that searches needs it.
    The returned record's ``standard_scores`` is filled by the caller after plain grading.
    """
    record = RubricDeepJudgment()
    tool: SearchFunction | None = None
    for trait, settings in deep:
        if settings.search and search is not None and tool is None:
            tool = search()
        graded = judge_trait(
            judge, trait, answer, settings, instructions,
            question=question, search=tool if settings.search else None,
        )  # fmt: skip
        record.traits[trait.name] = graded
        if graded.model_calls:
            outcome.usage = outcome.usage + graded.usage
            outcome.calls += graded.model_calls
        outcome.warnings.extend(graded.warnings)
        if graded.value is not None:
            outcome.llm_scores[trait.name] = graded.value
            outcome.llm_reasoning[trait.name] = graded.reasoning
        elif graded.error is not None:
            outcome.fail(trait.name, graded.error)
    return record
