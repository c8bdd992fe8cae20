"""Stages 3 and 4: auto-fail guards on the generated answer."""

from __future__ import annotations

from pytest_karenina.pipeline.artifacts import ArtifactKeys
from pytest_karenina.pipeline.context import VerificationContext
from pytest_karenina.pipeline.stage import BaseAutoFailStage
from pytest_karenina.results.trace import TraceError, final_ai_message


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

    Only agent (MCP) traces are checked; plain answers and manual traces are
    trusted.
    """

    @property
    def name(self) -> str:
        return "TraceValidationAutoFail"

    def should_run(self, context: VerificationContext) -> bool:
        if not context.has_artifact(ArtifactKeys.RAW_LLM_RESPONSE):
            return False
        model = context.answering_model
        context.set_artifact(ArtifactKeys.MCP_ENABLED, bool(model.mcp_urls_dict))
        if not model.mcp_urls_dict or model.interface == "manual":
            return False
        try:
            final_ai_message(context.get_artifact(ArtifactKeys.RAW_LLM_RESPONSE))
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
