"""Stage 11b, AgenticRubricEvaluation: a deep-agent judge investigates each agentic trait.

Included in the rubric modes after DeepJudgmentRubricAutoFail; it acts when the question's
rubric (global, its own, or dynamic: dynamic agentic traits take no presence check, their
concept is what the judge investigates) has agentic traits, limited to ``rubric_trait_names``.
A trait's judge is its ``model_override`` model, else the parsing model; it must be a deep
agent (``langchain_deep_agents``, ``claude_agent_sdk``). How traits are investigated and
extracted: :mod:`..rubric_grading.agentic_traits`. With ``materialize_trace`` on a trait
that sees both, the answering trace is written once to :data:`TRACE_FILE` in the workspace
(a new file, never through a link: anything else of that name errors the item) and removed
after, unless a trait sets ``persist_trace``.

The results join the rubric section RubricEvaluation left (or a new one):
``agentic_trait_scores``, ``agentic_trait_investigation_traces``,
``agentic_trait_extraction_metadata``, ``trait_provenance`` and ``trait_errors`` (a trait
without a value has a reason there, never a silent gap). Usage is recorded under
``rubric_agentic_trait_investigation`` and ``rubric_agentic_trait_extraction``. The
template verdict is never changed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from pytest_karenina.config.model import ModelConfig
from pytest_karenina.llm.agents.registry import agent_tier
from pytest_karenina.pipeline.artifacts import ArtifactKeys
from pytest_karenina.pipeline.context import VerificationContext
from pytest_karenina.pipeline.rubric_grading.agentic_traits import (
    AgenticOutcome,
    Evidence,
    TraitJudge,
    grade_agentic_traits,
)
from pytest_karenina.pipeline.stage import BaseVerificationStage
from pytest_karenina.pipeline.stages.context_queries import (
    config_value,
    judge_label,
    prompt_instructions,
)
from pytest_karenina.pipeline.workspace import write_new_file
from pytest_karenina.results.rubric import VerificationResultRubric
from pytest_karenina.rubrics.merge import DYNAMIC, merge_rubrics
from pytest_karenina.rubrics.traits import AgenticRubricTrait

if TYPE_CHECKING:
    from pytest_karenina.pipeline.llm_stack import ModelPairLLMs

TRACE_FILE = ".karenina_rubric_trace.txt"
"""Where a materializing trait's investigation finds the answering trace in the workspace."""
JUDGE_PORTS = "agentic_judge_ports"
"""Artifact: ``ModelConfig -> ModelPairLLMs`` for this question (its replicate and judge
replicate named), the ports of a trait's ``model_override`` model; the runner sets it."""
NEEDS_DEEP_AGENT = (
    "agentic rubric traits need a deep-agent judge (interface langchain_deep_agents or "
    "claude_agent_sdk), but the {which} model {label} has interface {interface!r}"
)


class AgenticRubricEvaluationStage(BaseVerificationStage):
    """Fills the rubric section's agentic fields."""

    @property
    def name(self) -> str:
        return "AgenticRubricEvaluation"

    @property
    def requires(self) -> list[str]:
        return [ArtifactKeys.RAW_LLM_RESPONSE]

    @property
    def produces(self) -> list[str]:
        return [
            ArtifactKeys.RUBRIC_RESULT, ArtifactKeys.AGENTIC_RUBRIC_EVALUATION_PERFORMED,
            ArtifactKeys.AGENTIC_TRAIT_SCORES, ArtifactKeys.AGENTIC_TRAIT_INVESTIGATION_TRACES,
            ArtifactKeys.AGENTIC_TRAIT_EXTRACTION_METADATA,
        ]  # fmt: skip

    def should_run(self, context: VerificationContext) -> bool:
        rubrics = (context.global_rubric, context.rubric, context.dynamic_rubric)
        found = any(rubric is not None and rubric.agentic_traits for rubric in rubrics)
        return found and super().should_run(context)

    def execute(self, context: VerificationContext) -> None:
        traits, provenance = agentic_traits(context)
        if not traits:
            return
        workspace = context.workspace_path
        trace = str(context.get_artifact(ArtifactKeys.RAW_LLM_RESPONSE) or "")
        wanted = workspace is not None and any(
            t.materialize_trace and t.context_mode == "trace_and_workspace" for t in traits
        )
        if wanted:
            assert workspace is not None
            try:
                write_new_file(workspace, TRACE_FILE, trace)
            except (OSError, RuntimeError) as exc:
                message = f"the answering trace could not be written to the workspace: {exc}"
                context.mark_error(f"Agentic rubric evaluation failed: {message}", self.name)
                return
        evidence = Evidence(
            question_id=context.question_id, question=context.question_text, trace=trace,
            workspace=workspace, trace_file=TRACE_FILE if wanted else None,
            instructions=lambda task: prompt_instructions(context, task),
        )  # fmt: skip
        try:
            outcome = grade_agentic_traits(
                traits, lambda trait: judge_for(context, trait), evidence,
                strategy=context.agentic_rubric_strategy,
                parallel=context.agentic_rubric_parallel,
            )  # fmt: skip
        finally:
            if wanted and workspace is not None and not any(t.persist_trace for t in traits):
                (workspace / TRACE_FILE).unlink(missing_ok=True)
        self._store(context, outcome, provenance)

    @staticmethod
    def _store(
        context: VerificationContext, outcome: AgenticOutcome, provenance: dict[str, str]
    ) -> None:
        tracker = context.usage_tracker()
        for kind, usage, label in outcome.usage:
            tracker.record(kind, usage, label)
        context.warnings.extend(outcome.warnings)
        if outcome.errors:
            context.warnings.append(
                f"agentic rubric traits without a value: {', '.join(outcome.errors)} "
                "(reasons in rubric.trait_errors)"
            )
        section = context.get_artifact(ArtifactKeys.RUBRIC_RESULT)
        if not isinstance(section, VerificationResultRubric):
            section = VerificationResultRubric()
        values = {
            ArtifactKeys.AGENTIC_TRAIT_SCORES: outcome.scores,
            ArtifactKeys.AGENTIC_TRAIT_INVESTIGATION_TRACES: outcome.traces,
            ArtifactKeys.AGENTIC_TRAIT_EXTRACTION_METADATA: outcome.metadata,
        }
        update: dict[str, Any] = {key: value or None for key, value in values.items()}
        update["trait_provenance"] = {**(section.trait_provenance or {}), **provenance} or None
        update["trait_errors"] = {**(section.trait_errors or {}), **outcome.errors} or None
        context.set_artifact(ArtifactKeys.RUBRIC_RESULT, section.model_copy(update=update))
        context.set_artifact(ArtifactKeys.AGENTIC_RUBRIC_EVALUATION_PERFORMED, True)
        for key, value in values.items():
            context.set_artifact(key, dict(value))


def agentic_traits(
    context: VerificationContext,
) -> tuple[list[AgenticRubricTrait], dict[str, str]]:
    """The agentic traits the question is graded on, in order (global, its own, dynamic),
    with their provenance. A name clash across the whole rubric raises, as in stage 11."""
    names = config_value(context, "rubric_trait_names", None)
    merged = merge_rubrics(context.global_rubric, context.rubric, trait_names=names)
    if context.dynamic_rubric is not None:
        wanted = [t for t in context.dynamic_rubric.traits() if names is None or t.name in names]
        merged = merged.add(wanted, DYNAMIC)
    traits = [t for t in merged.traits if isinstance(t, AgenticRubricTrait)]
    return traits, {trait.name: merged.provenance[trait.name] for trait in traits}


def judge_for(context: VerificationContext, trait: AgenticRubricTrait) -> TraitJudge | str:
    """The judge of ``trait`` (its ``model_override`` model, else the parsing model), or why
    it has none."""
    if trait.model_override is None:
        model = context.parsing_model
        agent, port = context.judge_agent, context.judge_llm
        if agent_tier(model.interface) != "deep_agent" or agent is None or port is None:
            return NEEDS_DEEP_AGENT.format(which="parsing", label=judge_label(context),
                                           interface=model.interface)  # fmt: skip
        return TraitJudge(agent, port, model, judge_label(context))
    try:
        model = ModelConfig.model_validate(trait.model_override)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(part) for part in problem["loc"]) or "(root)"
        return f"its model_override is not a valid model configuration: {where}: {problem['msg']}"
    if context.config is not None:
        model = context.config.stamp(model)
    label = model.identity("parsing").display_string
    if agent_tier(model.interface) != "deep_agent":
        return NEEDS_DEEP_AGENT.format(which="model_override", label=label,
                                       interface=model.interface)  # fmt: skip
    ports: Callable[[ModelConfig], ModelPairLLMs] | None = context.get_artifact(JUDGE_PORTS)
    if ports is None:
        return "its model_override model has no ports in this run (no LLM stack gave them)"
    try:
        pair = ports(model)
    except Exception as exc:
        return f"its model_override model {label} cannot be built: {type(exc).__name__}: {exc}"
    if pair.judge_agent is None:
        return NEEDS_DEEP_AGENT.format(which="model_override", label=label,
                                       interface=model.interface)  # fmt: skip
    return TraitJudge(pair.judge_agent, pair.judge, model, label)
