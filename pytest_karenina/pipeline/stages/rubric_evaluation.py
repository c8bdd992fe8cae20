"""Stage 11, RubricEvaluation: score the answer on the question's rubric traits.

The rubric is the global traits followed by the question's own (a name clash
errors the item), limited to ``rubric_trait_names``, plus the dynamic traits the
presence check finds in the response (agentic traits are left to stage 11b,
AgenticRubricEvaluation). Regex and callable traits are scored
locally, LLM and metric traits by the judge; LLM traits under rubric deep judgment
quote their evidence first, one after another (:mod:`rubric_grading.deep_traits`),
leaving the :data:`DEEP_JUDGMENT_RUBRIC` artifact for stage 12. The stage is
independent of the template verdict: it also runs after a failed verification or an
abstention.

Failures stay at the trait: a callable that cannot load or a judge call that fails
leaves that trait without a value and with a reason in ``trait_errors``; the item
still reports its other traits. An unexpected exception while scoring gives no
rubric result and a warning (the seed's non-fatal rule). Strict-replay misses, a
failed presence-check call and name clashes error the item.
"""

from __future__ import annotations

import logging

from pytest_karenina.llm.replay import ReplayMiss
from pytest_karenina.pipeline.artifacts import ArtifactKeys
from pytest_karenina.pipeline.context import VerificationContext
from pytest_karenina.pipeline.deep_judgment.rubric_trait import TraitSettings
from pytest_karenina.pipeline.deep_judgment.search import SearchUnavailable, resolve_search_tool
from pytest_karenina.pipeline.rubric_grading.deep_traits import (
    DEEP_JUDGMENT_RUBRIC,
    RubricDeepJudgment,
    grade_deep_traits,
    rubric_deep_judgment_enabled,
    split_deep_traits,
)
from pytest_karenina.pipeline.rubric_grading.deterministic import (
    score_callable_traits,
    score_regex_traits,
)
from pytest_karenina.pipeline.rubric_grading.dynamic import resolve_dynamic
from pytest_karenina.pipeline.rubric_grading.llm_traits import JudgeMaterial, LLMTraitGrader
from pytest_karenina.pipeline.rubric_grading.outcome import RubricOutcome
from pytest_karenina.pipeline.stage import BaseVerificationStage
from pytest_karenina.pipeline.stages.context_queries import (
    config_value,
    evaluation_input,
    judge_label,
    prompt_instructions,
    template_seconds,
)
from pytest_karenina.prompts.deep_judgment_rubric import (
    EXCERPT_TASK,
    HALLUCINATION_TASK,
    REASONING_TASK,
    SCORE_TASK,
)
from pytest_karenina.prompts.rubric_presence import PRESENCE_TASK
from pytest_karenina.rubrics.merge import MergedRubric, merge_rubrics
from pytest_karenina.rubrics.traits import LLMRubricTrait, has_traits

logger = logging.getLogger("pytest_karenina.pipeline")

USAGE_KEY = "rubric_evaluation"
DEEP_TASKS = (EXCERPT_TASK, HALLUCINATION_TASK, REASONING_TASK, SCORE_TASK)


class RubricEvaluationStage(BaseVerificationStage):
    """Fills ``rubric_result`` (the ``VerificationResultRubric`` section)."""

    @property
    def name(self) -> str:
        return "RubricEvaluation"

    @property
    def produces(self) -> list[str]:
        return [
            ArtifactKeys.RUBRIC_RESULT, ArtifactKeys.VERIFY_RUBRIC,
            ArtifactKeys.LLM_TRAIT_LABELS, ArtifactKeys.METRIC_TRAIT_METRICS,
        ]  # fmt: skip

    def should_run(self, context: VerificationContext) -> bool:
        if not super().should_run(context) or not has_traits(
            context.global_rubric, context.rubric, context.dynamic_rubric
        ):
            return False
        trace_failed = context.get_artifact(ArtifactKeys.TRACE_VALIDATION_FAILED) is True
        return not (trace_failed and not self._full_trace(context))

    @staticmethod
    def _full_trace(context: VerificationContext) -> bool:
        return bool(config_value(context, "use_full_trace_for_rubric", True))

    def execute(self, context: VerificationContext) -> None:
        names = config_value(context, "rubric_trait_names", None)
        merged = merge_rubrics(context.global_rubric, context.rubric, trait_names=names)
        text, _ = evaluation_input(context, self._full_trace(context))
        # Agentic traits are stage 11b's (AgenticRubricEvaluation): it adds their provenance.
        provenance = {
            trait.name: merged.provenance[trait.name]
            for trait in merged.traits
            if trait.trait_type != "agentic"
        }
        outcome = RubricOutcome(provenance=provenance)
        if context.dynamic_rubric is not None and context.judge_checks is not None:
            merged = resolve_dynamic(
                context.judge_checks, context.dynamic_rubric, merged, text, outcome,
                trait_names=names, instructions=prompt_instructions(context, PRESENCE_TASK),
            )  # fmt: skip
        strategy = str(config_value(context, "rubric_evaluation_strategy", None) or "batch")
        try:
            self._score(context, merged, text, outcome, strategy)
        except (ReplayMiss, SearchUnavailable):
            raise
        except Exception as exc:
            message = f"Rubric evaluation failed: {type(exc).__name__}: {exc}"
            logger.warning("%s: %s", context.question_id, message)
            context.warnings.append(message)
            return
        if outcome.calls:
            context.usage_tracker().record(USAGE_KEY, outcome.usage, judge_label(context))
        context.warnings.extend(outcome.warnings)
        if outcome.errors:
            context.warnings.append(
                f"rubric traits without a value: {', '.join(outcome.errors)} "
                "(reasons in rubric.trait_errors)"
            )
        context.set_artifact(ArtifactKeys.RUBRIC_RESULT, outcome.to_result(strategy))
        # Seed 002's rubric keys, for custom stages placed after this one.
        scores = {**outcome.llm_scores, **outcome.regex_scores, **outcome.callable_scores}
        context.set_artifact(ArtifactKeys.VERIFY_RUBRIC, scores)
        context.set_artifact(ArtifactKeys.LLM_TRAIT_LABELS, dict(outcome.llm_labels))
        context.set_artifact(ArtifactKeys.METRIC_TRAIT_METRICS, dict(outcome.metric_scores))

    def _score(
        self,
        context: VerificationContext,
        merged: MergedRubric,
        text: str,
        outcome: RubricOutcome,
        strategy: str,
    ) -> None:
        rubric = merged.rubric
        record = RubricDeepJudgment()
        score_regex_traits(rubric.regex_traits, text, outcome, template_seconds(context))
        score_callable_traits(rubric.callable_traits, text, outcome)
        if rubric.llm_traits or rubric.metric_traits:
            judge = context.judge_llm
            if judge is None:
                raise RuntimeError("LLM and metric rubric traits need a judge model")
            material = JudgeMaterial(
                question=context.question_text,
                answer=text,
                reference=context.raw_answer,
                instructions=lambda task: prompt_instructions(context, task),
            )
            deep, plain, warnings = split_deep_traits(
                context.config, rubric.llm_traits, context.question_id
            )
            outcome.warnings.extend(warnings)
            grader = LLMTraitGrader(judge, material, outcome, strategy=strategy)
            grader.grade(plain)
            grader.grade_metrics(rubric.metric_traits)
            if deep:
                record = self._deep(context, deep, text, outcome)
                names = {trait.name for trait in plain}
                record.standard_scores = {
                    name: score for name, score in outcome.llm_scores.items() if name in names
                }
        if record.performed or rubric_deep_judgment_enabled(context.config, rubric.llm_traits):
            context.set_artifact(DEEP_JUDGMENT_RUBRIC, record)

    @staticmethod
    def _deep(
        context: VerificationContext,
        deep: list[tuple[LLMRubricTrait, TraitSettings]],
        text: str,
        outcome: RubricOutcome,
    ) -> RubricDeepJudgment:
        """Rubric deep judgment of the ``deep`` traits, one after another."""
        chat = context.judge_chat
        if chat is None:
            raise RuntimeError("rubric deep judgment needs a parsing model")
        tool = config_value(context, "deep_judgment_rubric_search_tool", None)
        return grade_deep_traits(
            chat, deep, text, outcome, question=context.question_text,
            instructions={task: prompt_instructions(context, task) for task in DEEP_TASKS},
            search=lambda: resolve_search_tool(tool, "deep_judgment_rubric_search_tool"),
        )  # fmt: skip
