"""pytest-karenina: run Karenina LLM benchmarks as pytest test suites.

Public names are imported lazily: ``import pytest_karenina`` (which pytest does
for every run through the plugin entry point) costs nothing until a name such
as ``load_checkpoint`` is actually used.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0.dev0"

_CHECKPOINT = "pytest_karenina.checkpoint"
_RUBRICS = "pytest_karenina.rubrics"
_TEMPLATES = "pytest_karenina.templates"
_PIPELINE = "pytest_karenina.pipeline"
_RESULTS = "pytest_karenina.results"

_PRIMITIVE_NAMES = (
    "VerificationPrimitive",
    "TracePrimitive",
    "BooleanMatch",
    "ExactMatch",
    "ContainsAny",
    "ContainsAll",
    "RegexMatch",
    "SemanticMatch",
    "NumericExact",
    "NumericTolerance",
    "NumericRange",
    "NumericMinimum",
    "NumericMaximum",
    "NumericGraded",
    "NumericRangeGraded",
    "NumericThresholdGraded",
    "SetContainment",
    "OrderedMatch",
    "LiteralMatch",
    "DateMatch",
    "DateTolerance",
    "DateRange",
    "TraceRegex",
    "TraceContains",
    "TraceLength",
    "SynonymMap",
)

_LAZY: dict[str, str] = {
    **dict.fromkeys(
        ("load_checkpoint", "save_checkpoint", "Benchmark", "Question", "CheckpointError"),
        _CHECKPOINT,
    ),
    **dict.fromkeys(
        (
            "Rubric",
            "LLMRubricTrait",
            "RegexTrait",
            "CallableTrait",
            "MetricRubricTrait",
            "AgenticRubricTrait",
        ),
        _RUBRICS,
    ),
    "run_verification": _PIPELINE,
    "VerificationConfig": "pytest_karenina.config.verification",
    "ModelConfig": "pytest_karenina.config.model",
    "ConfigError": "pytest_karenina.config.sections",
    "load_preset": "pytest_karenina.config.presets",
    **dict.fromkeys(("VerificationResult", "VerificationResultSet"), _RESULTS),
    **dict.fromkeys(
        (
            "BaseAnswer",
            "VerifiedField",
            "compile_template",
            "template_id",
            "judge_schema",
            "TemplateError",
            "AllOf",
            "AnyOf",
            "AtLeastN",
            "FieldCheck",
            "ConditionalGroundTruth",
            "GroundTruthCase",
            *_PRIMITIVE_NAMES,
        ),
        _TEMPLATES,
    ),
}

__all__ = [
    "AgenticRubricTrait",
    "AllOf",
    "AnyOf",
    "AtLeastN",
    "BaseAnswer",
    "Benchmark",
    "BooleanMatch",
    "CallableTrait",
    "CheckpointError",
    "ConditionalGroundTruth",
    "ConfigError",
    "ContainsAll",
    "ContainsAny",
    "DateMatch",
    "DateRange",
    "DateTolerance",
    "ExactMatch",
    "FieldCheck",
    "GroundTruthCase",
    "LLMRubricTrait",
    "LiteralMatch",
    "MetricRubricTrait",
    "ModelConfig",
    "NumericExact",
    "NumericGraded",
    "NumericMaximum",
    "NumericMinimum",
    "NumericRange",
    "NumericRangeGraded",
    "NumericThresholdGraded",
    "NumericTolerance",
    "OrderedMatch",
    "Question",
    "RegexMatch",
    "RegexTrait",
    "Rubric",
    "SemanticMatch",
    "SetContainment",
    "SynonymMap",
    "TemplateError",
    "TraceContains",
    "TraceLength",
    "TracePrimitive",
    "TraceRegex",
    "VerificationConfig",
    "VerificationPrimitive",
    "VerificationResult",
    "VerificationResultSet",
    "VerifiedField",
    "__version__",
    "compile_template",
    "judge_schema",
    "load_checkpoint",
    "load_preset",
    "run_verification",
    "save_checkpoint",
    "template_id",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_karenina' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:
    from pytest_karenina.checkpoint import (
        Benchmark,
        CheckpointError,
        Question,
        load_checkpoint,
        save_checkpoint,
    )
    from pytest_karenina.config.model import ModelConfig
    from pytest_karenina.config.presets import load_preset
    from pytest_karenina.config.sections import ConfigError
    from pytest_karenina.config.verification import VerificationConfig
    from pytest_karenina.pipeline import run_verification
    from pytest_karenina.results import VerificationResult, VerificationResultSet
    from pytest_karenina.rubrics import (
        AgenticRubricTrait,
        CallableTrait,
        LLMRubricTrait,
        MetricRubricTrait,
        RegexTrait,
        Rubric,
    )
    from pytest_karenina.templates import (
        AllOf,
        AnyOf,
        AtLeastN,
        BaseAnswer,
        BooleanMatch,
        ConditionalGroundTruth,
        ContainsAll,
        ContainsAny,
        DateMatch,
        DateRange,
        DateTolerance,
        ExactMatch,
        FieldCheck,
        GroundTruthCase,
        LiteralMatch,
        NumericExact,
        NumericGraded,
        NumericMaximum,
        NumericMinimum,
        NumericRange,
        NumericRangeGraded,
        NumericThresholdGraded,
        NumericTolerance,
        OrderedMatch,
        RegexMatch,
        SemanticMatch,
        SetContainment,
        SynonymMap,
        TemplateError,
        TraceContains,
        TraceLength,
        TracePrimitive,
        TraceRegex,
        VerificationPrimitive,
        VerifiedField,
        compile_template,
        judge_schema,
        template_id,
    )
