"""The parts of a ``VerificationConfig``: its error type, constants and sub-models.

Few-shot (spec 4.6), prompt instructions (4.7) and rubric deep-judgment settings
(4.8) keep Karenina's field names and ``extra="forbid"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_ANSWERING_SYSTEM_PROMPT = (
    "You are an expert assistant. Answer the question accurately and concisely."
)
"""Given to every answering model without a ``system_prompt`` (spec 4.2)."""
DEFAULT_PARSING_SYSTEM_PROMPT = (
    "You are a validation assistant. Parse and validate responses against the given "
    "Pydantic template."
)
"""Defined by Karenina but never applied nor sent to the judge (spec 4.2); kept for reference."""
DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"
DEFAULT_EMBEDDING_THRESHOLD = 0.85
NOT_SUPPORTED = "is not supported yet by pytest-karenina"


class ConfigError(ValueError):
    """A configuration that cannot be used: unreadable, invalid, or asking for a
    feature pytest-karenina does not have yet.

    ``problems`` lists the individual findings (for an unsupported feature, one
    :class:`UnsupportedFeature` each); ``source`` names the preset file, if any.
    """

    def __init__(
        self, message: str, *, problems: Sequence[object] = (), source: str | None = None
    ) -> None:
        super().__init__(message)
        self.problems = tuple(problems)
        self.source = source


@dataclass(frozen=True)
class UnsupportedFeature:
    """One setting that asks for a feature pytest-karenina does not run yet."""

    field: str
    """Where it is set, e.g. ``deep_judgment_mode`` or ``answering_models[0].interface``."""
    value: Any
    feature: str
    """What it would switch on, e.g. "template deep judgment"."""
    hint: str
    """How to configure without it."""

    def __str__(self) -> str:
        return f"{self.field}={self.value!r}: {self.feature} {NOT_SUPPORTED} ({self.hint})"


class QuestionFewShotConfig(BaseModel):
    """Few-shot settings of one question; ``inherit`` takes the pool mode and k.

    Selections and exclusions are example positions in the question's pool or
    the MD5 hex digest of an example's question text.
    """

    model_config = ConfigDict(extra="forbid")

    mode: Literal["all", "k-shot", "custom", "inherit"] = "inherit"
    k: int | None = None
    selected_examples: list[str | int] | None = None
    excluded_examples: list[str | int] | None = None


class FewShotConfig(BaseModel):
    """Which few-shot examples precede the question sent to the answering model.

    ``source``: examples from the question's own pool (``question_pool``), the
    ``global_examples`` (``global``), ``both``, or none (``disabled``).
    """

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    source: Literal["disabled", "question_pool", "global", "both"] = "both"
    pool_mode: Literal["all", "k-shot", "custom"] = "all"
    """How a question's pool is used unless its own config says otherwise."""
    pool_k: int = 3
    """Examples drawn in ``k-shot`` mode (seeded by the question id)."""
    question_configs: dict[str, QuestionFewShotConfig] = Field(default_factory=dict)
    """Per question id."""
    global_examples: list[dict[str, str]] = Field(default_factory=list)
    """``{"question": ..., "answer": ...}`` entries appended for every question."""

    @property
    def enabled(self) -> bool:
        """Whether few-shot prompting is on (``source`` is not ``disabled``)."""
        return self.source != "disabled"


PromptTaskField = Literal[
    "generation",
    "parsing",
    "abstention_detection",
    "sufficiency_detection",
    "rubric_evaluation",
    "agentic_parsing",
    "deep_judgment",
]
_TASK_FAMILIES = (
    ("rubric_", "rubric_evaluation"),
    ("agentic_parsing_", "agentic_parsing"),
    ("dj_", "deep_judgment"),
)


class PromptConfig(BaseModel):
    """Extra instructions appended to the system text of particular LLM calls (spec 4.7)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    generation: str | None = None
    """Appended to the answering model's system prompt."""
    parsing: str | None = None
    abstention_detection: str | None = None
    sufficiency_detection: str | None = None
    rubric_evaluation: str | None = None
    """For every ``rubric_*`` call without instructions of its own."""
    agentic_parsing: str | None = None
    """For every ``agentic_parsing_*`` call without instructions of its own."""
    deep_judgment: str | None = None
    """For every ``dj_*`` call without instructions of its own."""

    def get_for_task(self, task: str) -> str | None:
        """The instructions for call ``task``: its own field, else its family's field."""
        if task in type(self).model_fields:
            own: str | None = getattr(self, task)
            if own is not None:
                return own
        for prefix, family in _TASK_FAMILIES:
            if task.startswith(prefix):
                text: str | None = getattr(self, family)
                return text
        return None


class DeepJudgmentTraitConfig(BaseModel):
    """Deep judgment of one rubric trait in ``custom`` mode; None values take the
    ``deep_judgment_rubric_*_default`` settings."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    excerpt_enabled: bool = True
    max_excerpts: int | None = None
    fuzzy_match_threshold: float | None = None
    excerpt_retry_attempts: int | None = None
    search_enabled: bool = False


class DeepJudgmentRubricCustomConfig(BaseModel):
    """Per-trait rubric deep judgment for ``deep_judgment_rubric_mode="custom"``.

    A question-specific entry wins over the global one; in JSON the global map
    is spelled ``global`` (``global_traits`` is accepted too).
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    global_traits: dict[str, DeepJudgmentTraitConfig] = Field(default_factory=dict, alias="global")
    question_specific: dict[str, dict[str, DeepJudgmentTraitConfig]] = Field(default_factory=dict)
