"""Stages 5 and 6: abstention and sufficiency checks by the judge, before parsing."""

from __future__ import annotations

import logging

from pytest_karenina.llm.ports import Usage
from pytest_karenina.llm.replay import ReplayMiss
from pytest_karenina.pipeline.artifacts import ArtifactKeys
from pytest_karenina.pipeline.context import VerificationContext
from pytest_karenina.pipeline.stage import BaseCheckStage
from pytest_karenina.pipeline.stages.context_queries import (
    abstained,
    config_value,
    prompt_instructions,
    recursion_limited,
)
from pytest_karenina.prompts import (
    AbstentionVerdict,
    SufficiencyVerdict,
    abstention_messages,
    sufficiency_messages,
)
from pytest_karenina.results.trace import prepare_evaluation_input

logger = logging.getLogger("pytest_karenina.pipeline")

_Detection = tuple[bool | None, bool, str | None, Usage | None]


def _judge_input(context: VerificationContext) -> str | None:
    """The answer text the check judges; None when its final AI message cannot be found
    (the check is then skipped, as in Karenina)."""
    raw = str(context.get_artifact(ArtifactKeys.RAW_LLM_RESPONSE, ""))
    full_trace = bool(config_value(context, "use_full_trace_for_template", False))
    text, error = prepare_evaluation_input(raw, full_trace)
    return None if error else text


class AbstentionCheckStage(BaseCheckStage):
    """Did the model decline to answer? Detected abstention fails the item.

    A failing judge call never fails the item: the check is then reported as
    not performed.
    """

    @property
    def name(self) -> str:
        return "AbstentionCheck"

    @property
    def _artifact_prefix(self) -> str:
        return "abstention"

    def should_run(self, context: VerificationContext) -> bool:
        if not super().should_run(context) or context.judge_checks is None:
            return False
        partial = context.get_artifact(ArtifactKeys.RESPONSE_TIMEOUT_PARTIAL) is True
        return not recursion_limited(context) and not partial

    def _detect(self, context: VerificationContext) -> _Detection:
        assert context.judge_checks is not None
        text = _judge_input(context)
        if text is None:
            return False, False, None, None
        messages = abstention_messages(
            context.question_text,
            text,
            instructions=prompt_instructions(context, "abstention_detection"),
        )
        try:
            reply = context.judge_checks.parse(
                messages, AbstentionVerdict, call_kind="abstention_check"
            )
        except ReplayMiss:
            raise  # strict replay: a missing recording is an error, not a skipped check
        except Exception as exc:
            logger.warning("%s: abstention check failed: %s", context.question_id, exc)
            return False, False, None, None
        verdict = reply.value
        return verdict.abstention_detected, True, verdict.reasoning, reply.usage

    def _should_trigger_override(self, detected: bool | None, check_performed: bool) -> bool:
        return check_performed and detected is True


class SufficiencyCheckStage(BaseCheckStage):
    """Does the answer hold enough to fill every required template field?

    ``sufficiency_detected`` is True when the answer IS sufficient; an
    insufficient answer fails the item and parsing is skipped.
    """

    @property
    def name(self) -> str:
        return "SufficiencyCheck"

    @property
    def _artifact_prefix(self) -> str:
        return "sufficiency"

    @property
    def requires(self) -> list[str]:
        return [ArtifactKeys.ANSWER]

    def should_run(self, context: VerificationContext) -> bool:
        if not super().should_run(context) or context.judge_checks is None:
            return False
        trace_failed = context.get_artifact(ArtifactKeys.TRACE_VALIDATION_FAILED) is True
        return not (recursion_limited(context) or trace_failed or abstained(context))

    def _detect(self, context: VerificationContext) -> _Detection:
        assert context.judge_checks is not None
        text = _judge_input(context)
        if text is None:
            return True, False, None, None
        try:
            schema = context.get_artifact(ArtifactKeys.RAW_ANSWER).model_json_schema()
        except Exception as exc:  # the check is optional (seed 000): never fatal
            note = f"sufficiency check not performed: the template has no JSON schema ({exc})"
            logger.warning("%s: %s", context.question_id, note)
            context.warnings.append(note)
            return True, False, None, None
        messages = sufficiency_messages(
            context.question_text,
            text,
            schema,
            instructions=prompt_instructions(context, "sufficiency_detection"),
        )
        try:
            reply = context.judge_checks.parse(
                messages, SufficiencyVerdict, call_kind="sufficiency_check"
            )
        except ReplayMiss:
            raise
        except Exception as exc:
            logger.warning("%s: sufficiency check failed: %s", context.question_id, exc)
            return True, False, None, None
        return reply.value.sufficient, True, reply.value.reasoning, reply.usage

    def _should_trigger_override(self, detected: bool | None, check_performed: bool) -> bool:
        return check_performed and detected is False
