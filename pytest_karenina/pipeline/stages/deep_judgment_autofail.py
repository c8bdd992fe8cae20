"""Stage 10, DeepJudgmentAutoFail: an attribute without a verbatim quote fails the answer.

Template deep judgment (ParseTemplate, ``deep_judgment_mode="full"``) leaves its outcome in
the :data:`DEEP_JUDGMENT` artifact. When attributes ended without an accepted quote, the
judge's reading of them is not grounded in the response, and the verdict is forced to False.
``reasoning_only`` quotes nothing and never fails here; an abstention decided the item
already.
"""

from __future__ import annotations

from pytest_karenina.pipeline.context import VerificationContext
from pytest_karenina.pipeline.deep_judgment.template import DEEP_JUDGMENT, TemplateDeepJudgment
from pytest_karenina.pipeline.stage import BaseAutoFailStage
from pytest_karenina.pipeline.stages.context_queries import abstained


class DeepJudgmentAutoFailStage(BaseAutoFailStage):
    """Fails the item when full deep judgment left attributes without a quote."""

    @property
    def name(self) -> str:
        return "DeepJudgmentAutoFail"

    def should_run(self, context: VerificationContext) -> bool:
        outcome = context.get_artifact(DEEP_JUDGMENT)
        if not isinstance(outcome, TemplateDeepJudgment) or outcome.mode != "full":
            return False
        return bool(outcome.missing) and not abstained(context) and super().should_run(context)

    def _get_autofail_reason(self, context: VerificationContext) -> str:
        """``deep judgment: no verbatim quote for <attributes>`` (the rejected quotes are in
        the warnings)."""
        outcome: TemplateDeepJudgment = context.get_artifact(DEEP_JUDGMENT)
        return f"deep judgment: no verbatim quote for {', '.join(outcome.missing)}"

    def _set_additional_failure_fields(self, context: VerificationContext) -> None:
        outcome: TemplateDeepJudgment = context.get_artifact(DEEP_JUDGMENT)
        context.warnings.extend(outcome.ungrounded())
