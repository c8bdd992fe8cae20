"""Stages 3 and 4: auto-fail guards on the generated answer."""

from __future__ import annotations

from pytest_karenina.llm.agents.registry import uses_agent
from pytest_karenina.pipeline.artifacts import ArtifactKeys
from pytest_karenina.pipeline.context import VerificationContext
from pytest_karenina.pipeline.stage import BaseAutoFailStage
from pytest_karenina.results.trace import TraceError, content_text, final_ai_message


class RecursionLimitAutoFailStage(BaseAutoFailStage):
    """Fails the item when the answering agent hit its turn limit."""

    @property
    def name(self) -> str:
        return "RecursionLimitAutoFail"

    def should_run(self, context: VerificationContext) -> bool:
        reached = context.get_artifact(ArtifactKeys.RECURSION_LIMIT_REACHED) is True
        return reached and super().should_run(context)

    def _get_autofail_reason(self, context: VerificationContext) -> str:
        return "the answering agent reached its recursion limit"


class TraceValidationAutoFailStage(BaseAutoFailStage):
    """Fails the item when an agent trace does not end with a usable AI message.

    Only agent traces (MCP tools, deep agents) are checked, from their structured
    ``trace_messages`` when there are any; plain answers and manual traces are trusted, and
    so is the partial trace of a run its time limit cut short (``response_timeout_partial``,
    judged as it is under ``allow_partial_trace_scoring``: its last message may well be a
    tool call, and the judge then reads the whole trace instead of the final AI message).
    """

    @property
    def name(self) -> str:
        return "TraceValidationAutoFail"

    def should_run(self, context: VerificationContext) -> bool:
        if not context.has_artifact(ArtifactKeys.RAW_LLM_RESPONSE):
            return False
        model = context.answering_model
        context.set_artifact(ArtifactKeys.MCP_ENABLED, bool(model.mcp_urls_dict))
        if not uses_agent(model) or model.interface == "manual":
            return False
        if context.get_artifact(ArtifactKeys.RESPONSE_TIMEOUT_PARTIAL) is True:
            return False
        try:
            _check_trace(context)
        except TraceError as exc:
            context.set_artifact(ArtifactKeys.TRACE_VALIDATION_FAILED, True)
            context.set_artifact(ArtifactKeys.TRACE_VALIDATION_ERROR, str(exc))
            context.set_artifact_and_result(ArtifactKeys.TRACE_EXTRACTION_ERROR, str(exc))
            return super().should_run(context)
        context.set_artifact(ArtifactKeys.TRACE_VALIDATION_FAILED, False)
        context.set_artifact(ArtifactKeys.TRACE_VALIDATION_ERROR, None)
        return False

    def _get_autofail_reason(self, context: VerificationContext) -> str:
        return str(context.get_artifact(ArtifactKeys.TRACE_EXTRACTION_ERROR))


def _check_trace(context: VerificationContext) -> None:
    """Raise :class:`TraceError` unless the trace ends with an AI message that has text."""
    messages = context.get_artifact(ArtifactKeys.TRACE_MESSAGES)
    if not isinstance(messages, list) or not messages:
        final_ai_message(context.get_artifact(ArtifactKeys.RAW_LLM_RESPONSE))
        return
    last = messages[-1] if isinstance(messages[-1], dict) else {}
    if last.get("role") not in ("assistant", "ai"):
        raise TraceError("Last message in trace is not an AI message")
    if not content_text(last.get("content")).strip():
        raise TraceError("Final AI message has no text content (only tool calls)")
