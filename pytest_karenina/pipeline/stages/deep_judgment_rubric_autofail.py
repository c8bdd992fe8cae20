"""Stage 12, DeepJudgmentRubricAutoFail: a rubric trait without a verbatim quote fails.

RubricEvaluation leaves its rubric deep judgment in the :data:`DEEP_JUDGMENT_RUBRIC`
artifact. A trait whose quotes were all rejected, after every retry, has no grounded
grade. In the template modes the verdict is forced to False, as the seed says. In
``rubric_only`` there is no template verdict to force: the stage records itself as the
failed stage, and the rubric gate fails the trait (:func:`rubrics.gates.check_traits`),
where Karenina would turn the missing verdict into False. An abstention decided the item
already.
"""

from __future__ import annotations

import logging

from pytest_karenina.pipeline.artifacts import ArtifactKeys
from pytest_karenina.pipeline.context import VerificationContext
from pytest_karenina.pipeline.rubric_grading.deep_traits import (
    DEEP_JUDGMENT_RUBRIC,
    RubricDeepJudgment,
)
from pytest_karenina.pipeline.stage import VERDICT_REASON, BaseAutoFailStage
from pytest_karenina.pipeline.stages.context_queries import abstained, config_value

logger = logging.getLogger("pytest_karenina.pipeline")


class DeepJudgmentRubricAutoFailStage(BaseAutoFailStage):
    """Fails the item when rubric deep judgment left traits without a quote."""

    @property
    def name(self) -> str:
        return "DeepJudgmentRubricAutoFail"

    def should_run(self, context: VerificationContext) -> bool:
        record = context.get_artifact(DEEP_JUDGMENT_RUBRIC)
        if not isinstance(record, RubricDeepJudgment) or not record.performed:
            return False
        ungrounded = bool(record.without_excerpts())
        return ungrounded and not abstained(context) and super().should_run(context)

    def _get_autofail_reason(self, context: VerificationContext) -> str:
        """``rubric deep judgment: no verbatim quote for <traits>`` (why, per trait, is in
        the warnings)."""
        record: RubricDeepJudgment = context.get_artifact(DEEP_JUDGMENT_RUBRIC)
        return f"rubric deep judgment: no verbatim quote for {', '.join(record.without_excerpts())}"

    def execute(self, context: VerificationContext) -> None:
        if config_value(context, "evaluation_mode", None) != "rubric_only":
            super().execute(context)
            return
        reason = self._get_autofail_reason(context)
        logger.warning(
            "%s: rubric gate fails at stage %s: %s", context.question_id, self.name, reason
        )
        context.set_artifact(VERDICT_REASON, reason)
        if not context.has_artifact(ArtifactKeys.FAILED_STAGE):
            context.set_artifact(ArtifactKeys.FAILED_STAGE, self.name)
        self._set_additional_failure_fields(context)

    def _set_additional_failure_fields(self, context: VerificationContext) -> None:
        record: RubricDeepJudgment = context.get_artifact(DEEP_JUDGMENT_RUBRIC)
        context.warnings.extend(record.ungrounded())
