"""pytest-karenina: run Karenina LLM benchmarks as pytest test suites.

Public names are imported lazily: ``import pytest_karenina`` (which pytest does
for every run through the plugin entry point) costs nothing until a name such
as ``load_checkpoint`` is actually used. They are listed once, in ``_LAZY``
(``__all__`` derives from it); the ``TYPE_CHECKING`` block names them again for
type checkers, which cannot follow ``__getattr__``.
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

__all__ = sorted([*_LAZY, "__version__"])
"""The public names: the lazy map's and the version (the ``TYPE_CHECKING`` block below
re-exports the same names for type checkers, ``tests/test_package.py`` holds them equal)."""


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
    from pytest_karenina.checkpoint import Benchmark as Benchmark
    from pytest_karenina.checkpoint import CheckpointError as CheckpointError
    from pytest_karenina.checkpoint import Question as Question
    from pytest_karenina.checkpoint import load_checkpoint as load_checkpoint
    from pytest_karenina.checkpoint import save_checkpoint as save_checkpoint
    from pytest_karenina.config.model import ModelConfig as ModelConfig
    from pytest_karenina.config.presets import load_preset as load_preset
    from pytest_karenina.config.sections import ConfigError as ConfigError
    from pytest_karenina.config.verification import VerificationConfig as VerificationConfig
    from pytest_karenina.pipeline import run_verification as run_verification
    from pytest_karenina.results import VerificationResult as VerificationResult
    from pytest_karenina.results import VerificationResultSet as VerificationResultSet
    from pytest_karenina.rubrics import AgenticRubricTrait as AgenticRubricTrait
    from pytest_karenina.rubrics import CallableTrait as CallableTrait
    from pytest_karenina.rubrics import LLMRubricTrait as LLMRubricTrait
    from pytest_karenina.rubrics import MetricRubricTrait as MetricRubricTrait
    from pytest_karenina.rubrics import RegexTrait as RegexTrait
    from pytest_karenina.rubrics import Rubric as Rubric
    from pytest_karenina.templates import AllOf as AllOf
    from pytest_karenina.templates import AnyOf as AnyOf
    from pytest_karenina.templates import AtLeastN as AtLeastN
    from pytest_karenina.templates import BaseAnswer as BaseAnswer
    from pytest_karenina.templates import BooleanMatch as BooleanMatch
    from pytest_karenina.templates import ConditionalGroundTruth as ConditionalGroundTruth
    from pytest_karenina.templates import ContainsAll as ContainsAll
    from pytest_karenina.templates import ContainsAny as ContainsAny
    from pytest_karenina.templates import DateMatch as DateMatch
    from pytest_karenina.templates import DateRange as DateRange
    from pytest_karenina.templates import DateTolerance as DateTolerance
    from pytest_karenina.templates import ExactMatch as ExactMatch
    from pytest_karenina.templates import FieldCheck as FieldCheck
    from pytest_karenina.templates import GroundTruthCase as GroundTruthCase
    from pytest_karenina.templates import LiteralMatch as LiteralMatch
    from pytest_karenina.templates import NumericExact as NumericExact
    from pytest_karenina.templates import NumericGraded as NumericGraded
    from pytest_karenina.templates import NumericMaximum as NumericMaximum
    from pytest_karenina.templates import NumericMinimum as NumericMinimum
    from pytest_karenina.templates import NumericRange as NumericRange
    from pytest_karenina.templates import NumericRangeGraded as NumericRangeGraded
    from pytest_karenina.templates import NumericThresholdGraded as NumericThresholdGraded
    from pytest_karenina.templates import NumericTolerance as NumericTolerance
    from pytest_karenina.templates import OrderedMatch as OrderedMatch
    from pytest_karenina.templates import RegexMatch as RegexMatch
    from pytest_karenina.templates import SemanticMatch as SemanticMatch
    from pytest_karenina.templates import SetContainment as SetContainment
    from pytest_karenina.templates import SynonymMap as SynonymMap
    from pytest_karenina.templates import TemplateError as TemplateError
    from pytest_karenina.templates import TraceContains as TraceContains
    from pytest_karenina.templates import TraceLength as TraceLength
    from pytest_karenina.templates import TracePrimitive as TracePrimitive
    from pytest_karenina.templates import TraceRegex as TraceRegex
    from pytest_karenina.templates import VerificationPrimitive as VerificationPrimitive
    from pytest_karenina.templates import VerifiedField as VerifiedField
    from pytest_karenina.templates import compile_template as compile_template
    from pytest_karenina.templates import judge_schema as judge_schema
    from pytest_karenina.templates import template_id as template_id
