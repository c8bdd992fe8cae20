"""Rubric traits: the data models of Karenina's qualitative evaluation criteria.

Importing this package loads only the trait models (pydantic), never an evaluator.
"""

from pytest_karenina.rubrics.rules import (
    TraitConfigError,
)
from pytest_karenina.rubrics.traits import (
    AgenticRubricTrait,
    BaseRubricTrait,
    CallableTrait,
    LLMRubricTrait,
    MetricRubricTrait,
    RegexTrait,
    Rubric,
    RubricTrait,
)

__all__ = [
    "AgenticRubricTrait",
    "BaseRubricTrait",
    "CallableTrait",
    "LLMRubricTrait",
    "MetricRubricTrait",
    "RegexTrait",
    "Rubric",
    "RubricTrait",
    "TraitConfigError",
]
