"""Stage 1, ValidateTemplate: compile the question's template before any LLM call."""

from __future__ import annotations

from pytest_karenina.pipeline.artifacts import ArtifactKeys
from pytest_karenina.pipeline.context import VerificationContext
from pytest_karenina.pipeline.stage import BaseVerificationStage
from pytest_karenina.pipeline.stages.context_queries import template_seconds
from pytest_karenina.templates import TemplateError, compile_template, template_mode


class ValidateTemplateStage(BaseVerificationStage):
    """Compiles and validates the template; stores the class and its id-bound subclass.

    A template that does not compile is a fatal error for this item only.
    """

    @property
    def name(self) -> str:
        return "ValidateTemplate"

    @property
    def produces(self) -> list[str]:
        return [ArtifactKeys.RAW_ANSWER, ArtifactKeys.ANSWER, ArtifactKeys.TEMPLATE_MODE]

    def execute(self, context: VerificationContext) -> None:
        try:
            if not context.template_code.strip():
                raise TemplateError(
                    "the question has no answer template", question_id=context.question_id
                )
            seconds = template_seconds(context)
            answer_class = compile_template(
                context.template_code, context.question_id, seconds=seconds
            )
            raw_class = compile_template(context.template_code, seconds=seconds)
        except TemplateError as exc:
            message = f"Template validation failed: {exc}"
            context.set_result_field(ArtifactKeys.TEMPLATE_VALIDATION_ERROR, str(exc))
            context.mark_error(message, stage=self.name)
            return
        context.set_artifact(ArtifactKeys.RAW_ANSWER, raw_class)
        context.set_artifact(ArtifactKeys.ANSWER, answer_class)
        context.set_artifact(ArtifactKeys.TEMPLATE_MODE, template_mode(raw_class))
