"""The default stage list for a configuration (seed "13 Stages in Detail")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_karenina.pipeline.stage import VerificationStage
from pytest_karenina.pipeline.stages.agentic_parse_template import AgenticParseTemplateStage
from pytest_karenina.pipeline.stages.agentic_rubric_evaluation import (
    AgenticRubricEvaluationStage,
)
from pytest_karenina.pipeline.stages.checks import AbstentionCheckStage, SufficiencyCheckStage
from pytest_karenina.pipeline.stages.deep_judgment_autofail import DeepJudgmentAutoFailStage
from pytest_karenina.pipeline.stages.deep_judgment_rubric_autofail import (
    DeepJudgmentRubricAutoFailStage,
)
from pytest_karenina.pipeline.stages.embedding_check import EmbeddingCheckStage
from pytest_karenina.pipeline.stages.finalize import FinalizeResultStage
from pytest_karenina.pipeline.stages.generate_answer import GenerateAnswerStage
from pytest_karenina.pipeline.stages.guards import (
    RecursionLimitAutoFailStage,
    TraceValidationAutoFailStage,
)
from pytest_karenina.pipeline.stages.parse_template import ParseTemplateStage
from pytest_karenina.pipeline.stages.rubric_evaluation import RubricEvaluationStage
from pytest_karenina.pipeline.stages.validate_template import ValidateTemplateStage
from pytest_karenina.pipeline.stages.verify_template import VerifyTemplateStage
from pytest_karenina.rubrics.traits import Rubric, has_traits

if TYPE_CHECKING:
    from pytest_karenina.config.choices import EvaluationMode
    from pytest_karenina.config.verification import VerificationConfig


def default_stages(
    config: VerificationConfig | None = None,
    *,
    evaluation_mode: EvaluationMode | None = None,
    abstention_enabled: bool | None = None,
    sufficiency_enabled: bool | None = None,
    rubric: Rubric | bool | None = None,
) -> list[VerificationStage]:
    """The stages for ``config`` in order; a keyword given (not None) overrides the config.

    Template modes: ValidateTemplate, GenerateAnswer, the two guards, the
    enabled checks (abstention; sufficiency, template modes only), ParseTemplate (or
    AgenticParseTemplate with ``agentic_parsing``, never both),
    VerifyTemplate, EmbeddingCheck (always included; it acts only when enabled
    and verification failed), DeepJudgmentAutoFail (template deep judgment on),
    RubricEvaluation, DeepJudgmentRubricAutoFail and AgenticRubricEvaluation (rubric
    modes; it acts only on agentic traits), FinalizeResult. ``rubric_only`` keeps answer
    generation, guards, abstention, the three rubric stages and FinalizeResult. The rubric
    stages are included, as in the seed, only when a rubric with traits is configured:
    ``rubric`` (a ``Rubric``, or a bool saying whether there are rubric traits; default
    none) tells.
    """
    mode = evaluation_mode or (config.evaluation_mode if config else "template_only")
    if abstention_enabled is None:
        abstention_enabled = config.abstention_enabled if config else False
    if sufficiency_enabled is None:
        sufficiency_enabled = config.sufficiency_enabled if config else False
    has_rubric = rubric is True or (isinstance(rubric, Rubric) and has_traits(rubric))

    template = mode != "rubric_only"
    stages: list[VerificationStage] = []
    if template:
        stages.append(ValidateTemplateStage())
    stages += [GenerateAnswerStage(), RecursionLimitAutoFailStage(), TraceValidationAutoFailStage()]
    if abstention_enabled:
        stages.append(AbstentionCheckStage())
    if template and sufficiency_enabled:
        stages.append(SufficiencyCheckStage())
    if template:
        agentic = config is not None and config.agentic_parsing
        parse = AgenticParseTemplateStage() if agentic else ParseTemplateStage()
        stages += [parse, VerifyTemplateStage(), EmbeddingCheckStage()]
    if template and config is not None and config.deep_judgment_mode != "disabled":
        stages.append(DeepJudgmentAutoFailStage())
    if mode != "template_only" and has_rubric:
        stages += [
            RubricEvaluationStage(), DeepJudgmentRubricAutoFailStage(),
            AgenticRubricEvaluationStage(),
        ]  # fmt: skip
    stages.append(FinalizeResultStage())
    return stages
