"""Rubric trait models: the five trait kinds of a Karenina rubric, and ``Rubric``.

The models mirror Karenina's trait classes (field names, defaults, validation
rules) so that a checkpoint means the same thing to both tools. They are frozen:
change one with ``trait.model_copy(update=...)`` and re-validate if needed.

The rules that span several fields live in :mod:`.rules`.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, ClassVar, Literal, TypeAlias

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from pytest_karenina.rubrics.rules import (
    TRAIT_TYPES,
    CallableTraitKind,
    ContextMode,
    EvaluationMode,
    LLMTraitKind,
    TraitConfigError,
    check_agentic_config,
    check_classes,
    check_metric_config,
    check_pattern,
    check_template_kind,
    check_trait_name,
    json_or_raw,
    literal_bounds,
)

#: Literal classes: name -> description, in index order (a JSON string is accepted).
ClassMap: TypeAlias = Annotated[dict[str, str], BeforeValidator(json_or_raw)]
#: A list of strings (a JSON string holding one is accepted).
StringList: TypeAlias = Annotated[list[str], BeforeValidator(json_or_raw)]


class BaseRubricTrait(BaseModel):
    """Fields shared by every trait kind.

    ``extra_properties`` holds checkpoint properties this library does not know; they
    are kept so that saving a loaded checkpoint does not lose them.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: Fields not stored as a checkpoint property of the same name (template_schema
    #: travels inside ``kind``; include_ground_truth is never stored).
    NON_PROPERTY_FIELDS: ClassVar[frozenset[str]] = frozenset(
        {"name", "description", "extra_properties", "trait_type", "template_schema"}
        | {"include_ground_truth"}
    )

    name: str
    description: str | None = None
    summary: str | None = None
    extra_properties: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check_common(self) -> BaseRubricTrait:
        check_trait_name(self.name)
        clashes = sorted(self.property_names().intersection(self.extra_properties))
        if clashes:
            raise TraitConfigError(
                "extra_properties", f"extra_properties repeats known properties: {clashes}"
            )
        return self

    @classmethod
    def property_names(cls) -> frozenset[str]:
        """The checkpoint property names this kind reads into its own fields."""
        return frozenset(cls.model_fields) - cls.NON_PROPERTY_FIELDS

    def _check_classes(self, kind: str, classes: Mapping[str, str] | None) -> None:
        """Validate ``classes`` and, for the literal kind, derive the score bounds."""
        if classes is not None:
            check_classes(classes)
        bounds = literal_bounds(kind, classes)
        if bounds is not None:
            # Frozen model: the bounds are derived data, so assign past the freeze.
            object.__setattr__(self, "min_score", bounds[0])
            object.__setattr__(self, "max_score", bounds[1])


class LLMRubricTrait(BaseRubricTrait):
    """A trait judged by an LLM: boolean, score (min..max), literal (class index) or template.

    For ``literal`` the bounds are always 0 and ``len(classes) - 1``. For ``template``
    the judge fills ``template_schema`` (a JSON schema) and ``higher_is_better`` is None.
    ``include_ground_truth`` lives in memory only: checkpoints never store it.
    """

    trait_type: Literal["llm"] = "llm"
    kind: LLMTraitKind
    min_score: int | None = 1
    max_score: int | None = 5
    classes: ClassMap | None = None
    template_schema: dict[str, Any] | None = None
    higher_is_better: bool | None = True
    deep_judgment_enabled: bool = False
    deep_judgment_excerpt_enabled: bool = True
    deep_judgment_search_enabled: bool = False
    deep_judgment_max_excerpts: int | None = None
    deep_judgment_fuzzy_match_threshold: float | None = None
    deep_judgment_excerpt_retry_attempts: int | None = None
    include_ground_truth: bool = False

    @model_validator(mode="after")
    def _check_kind(self) -> LLMRubricTrait:
        self._check_classes(self.kind, self.classes)
        check_template_kind(self.kind, self.template_schema)
        if self.kind == "template":
            object.__setattr__(self, "higher_is_better", None)
        elif self.higher_is_better is None:
            object.__setattr__(self, "higher_is_better", True)
        return self


class RegexTrait(BaseRubricTrait):
    """A boolean trait: does ``pattern`` match the text (``re.search``), optionally inverted?"""

    trait_type: Literal["regex"] = "regex"
    pattern: str = ""
    case_sensitive: bool = True
    invert_result: bool = False
    higher_is_better: bool = True

    @model_validator(mode="after")
    def _check_pattern(self) -> RegexTrait:
        check_pattern(self.pattern)
        return self


class CallableTrait(BaseRubricTrait):
    """A trait scored by a serialized Python callable (Karenina stores cloudpickle bytes).

    ``callable_code`` holds the raw bytes; nothing here ever unpickles them. A string
    given to the constructor is read as base64, as in the checkpoint file.
    """

    trait_type: Literal["callable"] = "callable"
    callable_code: bytes = b""
    kind: CallableTraitKind = "boolean"
    invert_result: bool = False
    min_score: int | None = None
    max_score: int | None = None
    classes: ClassMap | None = None
    higher_is_better: bool = True

    @field_validator("callable_code", mode="before")
    @classmethod
    def _decode_base64(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return base64.b64decode(value, validate=True)
            except binascii.Error as exc:
                raise ValueError(f"callable_code is not valid base64: {exc}") from exc
        return value

    @model_validator(mode="after")
    def _check_kind(self) -> CallableTrait:
        self._check_classes(self.kind, self.classes)
        return self


class MetricRubricTrait(BaseRubricTrait):
    """A confusion-matrix trait: an LLM sorts the answer into TP/FN(/TN/FP) buckets."""

    trait_type: Literal["metric"] = "metric"
    metrics: StringList
    evaluation_mode: EvaluationMode = "tp_only"
    tp_instructions: StringList = Field(default_factory=list)
    tn_instructions: StringList = Field(default_factory=list)
    repeated_extraction: bool = True
    higher_is_better: bool | None = None

    @model_validator(mode="after")
    def _check_metrics(self) -> MetricRubricTrait:
        check_metric_config(
            self.metrics, self.evaluation_mode, self.tp_instructions, self.tn_instructions
        )
        return self


class AgenticRubricTrait(BaseRubricTrait):
    """A trait judged by a tool-using agent that may inspect the answer's workspace.

    ``model_override`` is kept as the raw ModelConfig mapping from the checkpoint.
    For the template kind ``higher_is_better`` defaults to None and must stay None.
    """

    trait_type: Literal["agentic"] = "agentic"
    kind: LLMTraitKind = "boolean"
    template_schema: dict[str, Any] | None = None
    higher_is_better: bool | None = True
    context_mode: ContextMode = "trace_and_workspace"
    materialize_trace: bool = False
    persist_trace: bool = False
    max_turns: int = 15
    timeout_seconds: int = 120
    classes: ClassMap | None = None
    model_override: dict[str, Any] | None = None
    min_score: int | None = 1
    max_score: int | None = 5

    @model_validator(mode="before")
    @classmethod
    def _template_direction(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("kind") == "template":
            return {"higher_is_better": None, **data}
        return data

    @model_validator(mode="after")
    def _check_kind(self) -> AgenticRubricTrait:
        check_agentic_config(
            self.description,
            self.context_mode,
            self.materialize_trace,
            self.max_turns,
            self.timeout_seconds,
        )
        self._check_classes(self.kind, self.classes)
        check_template_kind(self.kind, self.template_schema)
        if self.kind == "template" and self.higher_is_better is not None:
            raise TraitConfigError(
                "higher_is_better", "higher_is_better must be null for a template-kind trait"
            )
        if self.kind != "template" and self.higher_is_better is None:
            object.__setattr__(self, "higher_is_better", True)
        return self


RubricTrait: TypeAlias = (
    LLMRubricTrait | RegexTrait | CallableTrait | MetricRubricTrait | AgenticRubricTrait
)


def check_unique_names(traits: Iterable[RubricTrait]) -> None:
    """Trait names must be unique within one rubric, across all kinds."""
    seen: set[str] = set()
    for trait in traits:
        if trait.name in seen:
            raise TraitConfigError("name", f"trait name {trait.name!r} is used twice")
        seen.add(trait.name)


def group_traits(traits: Iterable[RubricTrait]) -> dict[str, list[Any]]:
    """``Rubric`` keyword arguments (``llm_traits``...) holding ``traits`` grouped by kind."""
    groups: dict[str, list[Any]] = {f"{kind}_traits": [] for kind in TRAIT_TYPES}
    for trait in traits:
        groups[f"{trait.trait_type}_traits"].append(trait)
    return groups


class Rubric(BaseModel):
    """The traits of one scope (global, one question, or the dynamic set), grouped by kind."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    llm_traits: list[LLMRubricTrait] = Field(default_factory=list)
    regex_traits: list[RegexTrait] = Field(default_factory=list)
    callable_traits: list[CallableTrait] = Field(default_factory=list)
    metric_traits: list[MetricRubricTrait] = Field(default_factory=list)
    agentic_traits: list[AgenticRubricTrait] = Field(default_factory=list)

    @model_validator(mode="after")
    def _check_names(self) -> Rubric:
        check_unique_names(self.traits())
        return self

    @classmethod
    def from_traits(cls, traits: Iterable[RubricTrait]) -> Rubric:
        """Group ``traits`` by kind, keeping their relative order within each kind."""
        return cls(**group_traits(traits))

    def traits(self) -> list[RubricTrait]:
        """All traits: LLM, regex, callable, metric, then agentic."""
        return [
            *self.llm_traits,
            *self.regex_traits,
            *self.callable_traits,
            *self.metric_traits,
            *self.agentic_traits,
        ]

    def trait_names(self) -> list[str]:
        """Names of all traits, in ``traits()`` order."""
        return [trait.name for trait in self.traits()]

    @property
    def is_empty(self) -> bool:
        """True when the rubric holds no trait at all."""
        return not self.traits()


def has_traits(*rubrics: Rubric | None) -> bool:
    """Whether any of ``rubrics`` holds a trait."""
    return any(rubric is not None and not rubric.is_empty for rubric in rubrics)
