"""Stage 9, EmbeddingCheck: a semantic second opinion on failed field verification."""

from __future__ import annotations

import json
import logging
from typing import Any

from pytest_karenina.pipeline.artifacts import ArtifactKeys
from pytest_karenina.pipeline.context import VerificationContext
from pytest_karenina.pipeline.embedding import EMBEDDINGS, EmbeddingUnavailable
from pytest_karenina.pipeline.stage import BaseVerificationStage
from pytest_karenina.pipeline.stages.context_queries import config_value, judge_label
from pytest_karenina.prompts import equivalence_messages, is_equivalent

logger = logging.getLogger("pytest_karenina.pipeline")


class EmbeddingCheckStage(BaseVerificationStage):
    """When field verification failed (and the check is enabled): embed the
    expected and parsed answers with the configured model; at or above the
    threshold, ask the judge whether they are equivalent, and on YES turn the
    field result into a pass. It never overrides a failed regex check.
    """

    @property
    def name(self) -> str:
        return "EmbeddingCheck"

    def should_run(self, context: VerificationContext) -> bool:
        return (
            super().should_run(context)
            and context.get_artifact(ArtifactKeys.FIELD_VERIFICATION_RESULT) is False
            and bool(config_value(context, "embedding_check_enabled", False))
        )

    def execute(self, context: VerificationContext) -> None:
        model_name = str(config_value(context, "embedding_check_model", "all-MiniLM-L6-v2"))
        threshold = float(config_value(context, "embedding_check_threshold", 0.85))
        expected = context.get_artifact(ArtifactKeys.PARSED_GT_RESPONSE)
        parsed = context.get_artifact(ArtifactKeys.PARSED_LLM_RESPONSE)
        context.set_artifact_and_result(ArtifactKeys.EMBEDDING_CHECK_PERFORMED, True)
        context.set_artifact_and_result(ArtifactKeys.EMBEDDING_MODEL_USED, model_name)
        try:
            score = EMBEDDINGS.similarity(model_name, _as_text(expected), _as_text(parsed))
        except EmbeddingUnavailable as exc:
            context.warnings.append(str(exc))
            return
        context.set_artifact_and_result(ArtifactKeys.EMBEDDING_SIMILARITY_SCORE, score)
        if score < threshold or context.judge_chat is None:
            return
        messages = equivalence_messages(context.question_text, expected, parsed)
        reply = context.judge_chat.chat(messages, call_kind="embedding_check")
        context.usage_tracker().record("embedding_check", reply.usage, judge_label(context))
        if not is_equivalent(reply.text):
            return
        logger.warning("%s: embedding check overrides a failed verification", context.question_id)
        regex_ok = context.get_artifact(ArtifactKeys.REGEX_OVERALL_SUCCESS) is not False
        context.set_artifact(ArtifactKeys.FIELD_VERIFICATION_RESULT, True)
        context.set_artifact_and_result(ArtifactKeys.VERIFY_RESULT, regex_ok)
        context.set_artifact_and_result(ArtifactKeys.EMBEDDING_OVERRIDE_APPLIED, True)


def _as_text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
