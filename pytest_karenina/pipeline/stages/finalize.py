"""Stage 13, FinalizeResult: build the ``VerificationResult`` from the context.

It always runs, also after a fatal error, so every task yields a result.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from pydantic_core import to_jsonable_python

from pytest_karenina.config.rules import RUBRIC_MODES
from pytest_karenina.pipeline.artifacts import FINAL_RESULT, ArtifactKeys
from pytest_karenina.pipeline.context import VerificationContext
from pytest_karenina.pipeline.deciding_stage import DECIDING_STAGE, STAGE_REASONS
from pytest_karenina.pipeline.deep_judgment.template import DEEP_JUDGMENT, TemplateDeepJudgment
from pytest_karenina.pipeline.retries import (
    ERROR_CATEGORY,
    REPLAY_MISS,
    RETRY_TALLY,
    TIME_BUDGET_SPENT,
    RetryTally,
)
from pytest_karenina.pipeline.rubric_grading.deep_traits import (
    DEEP_JUDGMENT_RUBRIC,
    RubricDeepJudgment,
)
from pytest_karenina.pipeline.stage import BaseVerificationStage
from pytest_karenina.pipeline.stages.context_queries import config_value
from pytest_karenina.pipeline.stages.generate_answer import ERROR_DETAILS, WORKSPACE_SLOT
from pytest_karenina.pipeline.stages.parse_template import JUDGE_RAW_OUTPUT
from pytest_karenina.pipeline.workspace import SAVE_WORKSPACE, WorkspaceSlot
from pytest_karenina.pipeline.workspace_save import WorkspaceSaveError
from pytest_karenina.results import (
    VerificationResult,
    VerificationResultDeepJudgment,
    VerificationResultDeepJudgmentRubric,
    VerificationResultMetadata,
    VerificationResultTemplate,
    cap_warnings,
    classify_failure,
    collect_caveats,
    compute_result_id,
)
from pytest_karenina.results.trace import stored_trace_text
from pytest_karenina.rubrics.traits import has_traits

_TEMPLATE_FIELDS = frozenset(VerificationResultTemplate.model_fields)
_ROOT_FIELDS = frozenset({
    ArtifactKeys.EVALUATION_INPUT, ArtifactKeys.USED_FULL_TRACE,
    ArtifactKeys.TRACE_EXTRACTION_ERROR,
})  # fmt: skip


def custom_fields(fields: Mapping[str, Any]) -> dict[str, Any] | None:
    """Result fields no section takes (a custom stage's ``set_result_field``), JSON-native
    (``repr`` for anything else); None when there are none."""
    found = {
        key: to_jsonable_python(value, fallback=repr)
        for key, value in fields.items()
        if key not in _TEMPLATE_FIELDS and key not in _ROOT_FIELDS
    }
    return found or None


class FinalizeResultStage(BaseVerificationStage):
    """Assembles metadata (ids, identities, timing, failure, caveats), the template
    section from the accumulated result fields, and the root trace fields."""

    always_runs = True

    @property
    def name(self) -> str:
        return "FinalizeResult"

    def execute(self, context: VerificationContext) -> None:
        saved = self._save_workspace(context)
        fields = dict(context.result_fields)
        trace = fields.get(ArtifactKeys.TRACE_MESSAGES) or []
        for key in (ArtifactKeys.RAW_LLM_RESPONSE, ArtifactKeys.EVALUATION_INPUT):
            if isinstance(fields.get(key), str):  # long tool results: whole in the trace only
                fields[key] = stored_trace_text(fields[key], trace)
        template = VerificationResultTemplate.model_validate(
            {
                **{key: value for key, value in fields.items() if key in _TEMPLATE_FIELDS},
                "usage_metadata": context.usage_tracker().to_metadata(),
            }
        )
        result = VerificationResult(
            metadata=self._metadata(context, template),
            template=template,
            rubric=context.get_artifact(ArtifactKeys.RUBRIC_RESULT),
            evaluation_input=fields.get(ArtifactKeys.EVALUATION_INPUT),
            used_full_trace=fields.get(ArtifactKeys.USED_FULL_TRACE, True),
            trace_extraction_error=fields.get(ArtifactKeys.TRACE_EXTRACTION_ERROR),
            custom_fields=custom_fields(fields),
            judge_replicate=context.judge_replicate,
            saved_workspace=saved,
            deep_judgment=_deep_judgment_section(context),
            deep_judgment_rubric=_deep_judgment_rubric_section(context),
        )
        context.set_artifact(FINAL_RESULT, result)

    def _save_workspace(self, context: VerificationContext) -> str | None:
        """The last judge of an answer saves its workspace (``workspace_output_mode``); a
        save that fails errors this result (so the item), naming the path."""
        slot = context.get_artifact(WORKSPACE_SLOT)
        if not context.get_artifact(SAVE_WORKSPACE) or not isinstance(slot, WorkspaceSlot):
            return None
        try:
            saved = slot.save()
        except WorkspaceSaveError as exc:
            context.mark_error(str(exc), self.name)
            return None
        return str(saved) if saved is not None else None

    def _metadata(
        self, context: VerificationContext, template: VerificationResultTemplate
    ) -> VerificationResultMetadata:
        answering = context.answering_model.identity("answering")
        parsing = context.parsing_model.identity("parsing")
        tally = context.get_artifact(RETRY_TALLY)
        retry_counts = tally.as_metadata() if isinstance(tally, RetryTally) else None
        failure = classify_failure(
            failed_stage=context.get_artifact(ArtifactKeys.FAILED_STAGE),
            template_verification_performed=template.template_verification_performed,
            verify_result=template.verify_result,
            error=context.error,
            error_stage=context.error_stage,
            error_category=context.get_artifact(ERROR_CATEGORY),
            retry_counts=retry_counts,
            time_budget_spent=context.get_artifact(TIME_BUDGET_SPENT) is True,
            abstention_detected=template.abstention_detected,
            abstention_reasoning=template.abstention_reasoning,
            sufficiency_detected=template.sufficiency_detected,
            sufficiency_reasoning=template.sufficiency_reasoning,
            template_validation_error=template.template_validation_error,
            deciding_stage=context.get_artifact(DECIDING_STAGE),
            stage_reasons=context.get_artifact(STAGE_REASONS),
        )
        extra = {
            "judge_output": context.get_artifact(JUDGE_RAW_OUTPUT),
            REPLAY_MISS: context.get_artifact(REPLAY_MISS),
            **(context.get_artifact(ERROR_DETAILS) or {}),
        }
        extra = {key: value for key, value in extra.items() if value}
        if failure is not None and extra:
            details: dict[str, Any] = {**(failure.details or {}), **extra}
            failure = failure.model_copy(update={"details": details})
        few_shot = context.few_shot_examples or []
        return VerificationResultMetadata(
            question_id=context.question_id,
            template_id=context.template_id,
            completed_without_errors=context.error is None,
            error=context.error,
            failure=failure,
            caveats=list(
                collect_caveats(
                    response_timeout_partial=template.response_timeout_partial,
                    embedding_override_applied=template.embedding_override_applied,
                    retry_counts=retry_counts,
                )
            ),
            warnings=cap_warnings(context.warnings),
            retry_counts=retry_counts,
            question_text=context.question_text,
            raw_answer=context.raw_answer,
            keywords=context.keywords,
            answering=answering,
            parsing=parsing,
            answering_system_prompt=context.answering_model.system_prompt,
            parsing_system_prompt=context.parsing_model.system_prompt,
            execution_time=time.perf_counter() - context.started_at,
            timestamp=context.timestamp,
            result_id=compute_result_id(
                answering,
                parsing,
                context.question_id,
                context.replicate,
                context.timestamp,
                judge_replicate=context.judge_replicate,
            ),
            run_name=context.run_name,
            replicate=context.replicate,
            few_shot_enabled=bool(few_shot),
            few_shot_example_count=len(few_shot),
            evaluation_mode=config_value(context, "evaluation_mode", None),
        )


def _deep_judgment_section(context: VerificationContext) -> VerificationResultDeepJudgment | None:
    """Whenever template deep judgment is on (template modes), also when parsing never ran."""
    mode = str(config_value(context, "deep_judgment_mode", "disabled") or "disabled")
    if mode == "disabled" or config_value(context, "evaluation_mode", None) == "rubric_only":
        return None
    outcome = context.get_artifact(DEEP_JUDGMENT)
    if isinstance(outcome, TemplateDeepJudgment):
        return VerificationResultDeepJudgment(**outcome.section_fields())
    return VerificationResultDeepJudgment(
        deep_judgment_mode=mode, deep_judgment_enabled=True, deep_judgment_performed=False
    )


def _deep_judgment_rubric_section(
    context: VerificationContext,
) -> VerificationResultDeepJudgmentRubric | None:
    """Whenever rubric deep judgment is on for a rubric that was to be evaluated, also when
    the evaluation never ran."""
    record = context.get_artifact(DEEP_JUDGMENT_RUBRIC)
    if isinstance(record, RubricDeepJudgment):
        return record.section()
    mode = config_value(context, "deep_judgment_rubric_mode", "disabled") or "disabled"
    rubric_mode = config_value(context, "evaluation_mode", None) in RUBRIC_MODES
    if mode == "disabled" or not rubric_mode:
        return None
    if not has_traits(context.global_rubric, context.rubric, context.dynamic_rubric):
        return None
    return VerificationResultDeepJudgmentRubric()
