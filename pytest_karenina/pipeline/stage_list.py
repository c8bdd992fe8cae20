"""The default stage list for a configuration (seed "13 Stages in Detail")."""

from __future__ import annotations

from typing import Any

from pytest_karenina.pipeline.stage import VerificationStage
from pytest_karenina.pipeline.stages.checks import AbstentionCheckStage, SufficiencyCheckStage
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

_OPTIONS = ("evaluation_mode", "abstention_enabled", "sufficiency_enabled", "rubric")


def _has_traits(rubric: Any) -> bool:
    return rubric is True or (isinstance(rubric, Rubric) and has_traits(rubric))


def default_stages(config: Any = None, **options: Any) -> list[VerificationStage]:
    """The stages for ``config`` in order; keyword ``options`` override config values.

    Template modes: ValidateTemplate, GenerateAnswer, the two guards, the
    enabled checks (abstention; sufficiency, template modes only), ParseTemplate,
    VerifyTemplate, EmbeddingCheck (always included; it acts only when enabled
    and verification failed), RubricEvaluation (rubric modes), FinalizeResult.
    ``rubric_only`` keeps answer generation, guards, abstention, RubricEvaluation and
    FinalizeResult. RubricEvaluation is included, as in the seed, only when a rubric
    with traits is configured: the ``rubric`` option (a ``Rubric``, or a bool saying
    whether there are rubric traits; default none) tells.
    """
    unknown = set(options) - set(_OPTIONS)
    if unknown:
        raise TypeError(f"unknown stage option(s) {sorted(unknown)}; known: {list(_OPTIONS)}")

    def setting(name: str, default: Any) -> Any:
        if name in options and options[name] is not None:
            return options[name]
        return getattr(config, name, default) if config is not None else default

    template = setting("evaluation_mode", "template_only") != "rubric_only"
    stages: list[VerificationStage] = []
    if template:
        stages.append(ValidateTemplateStage())
    stages += [GenerateAnswerStage(), RecursionLimitAutoFailStage(), TraceValidationAutoFailStage()]
    if setting("abstention_enabled", False):
        stages.append(AbstentionCheckStage())
    if template and setting("sufficiency_enabled", False):
        stages.append(SufficiencyCheckStage())
    if template:
        stages += [ParseTemplateStage(), VerifyTemplateStage(), EmbeddingCheckStage()]
    rubric_mode = setting("evaluation_mode", "template_only") != "template_only"
    if rubric_mode and _has_traits(setting("rubric", False)):
        stages.append(RubricEvaluationStage())
    stages.append(FinalizeResultStage())
    return stages
