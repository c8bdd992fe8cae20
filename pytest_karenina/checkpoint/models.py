"""In-memory form of a Karenina checkpoint: ``Benchmark``, ``Question`` and their parts.

The models are frozen; derive changed copies with ``model_copy(update=...)``.
Constructing them directly validates every field. ``load_checkpoint`` checks the file
itself (so that errors can name JSON paths) and then builds the models without a
second validation pass.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator, model_validator

from pytest_karenina.checkpoint.ids import generate_question_id
from pytest_karenina.rubrics.traits import Rubric

#: Question additionalProperty names that map to Question fields.
QUESTION_PROPERTY_NAMES = frozenset(
    {"finished", "author", "sources", "few_shot_examples", "answer_notes", "workspace_path"}
)


def _now() -> str:
    # Karenina stamps naive local time with microseconds.
    return datetime.now().isoformat()


class Person(BaseModel):
    """A schema.org Person, used as a benchmark ``creator``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    url: str | None = None
    email: str | None = None


class JsonLdIds(BaseModel):
    """The ``@id`` of a question's Question, Answer and SoftwareSourceCode nodes.

    Karenina ignores them; they are kept so that saving does not drop them.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    question: str | None = None
    answer: str | None = None
    template: str | None = None


def _default_template_name(text: str) -> str:
    # The name Karenina gives the template of a new question.
    return f"{text[:30]}... Answer Template"


def _check_dynamic_members(rubric: Rubric | None) -> None:
    """Every dynamic-rubric trait needs a summary or a description (for the presence check)."""
    if rubric is None:
        return
    for trait in rubric.traits():
        if trait.summary is None and trait.description is None:
            raise ValueError(
                f"dynamic rubric trait {trait.name!r} needs a summary or a description"
            )


def _none_if_empty(rubric: Rubric | None) -> Rubric | None:
    return None if rubric is None or rubric.is_empty else rubric


class Question(BaseModel):
    """One question of a benchmark (a checkpoint ``DataFeedItem``).

    ``id`` is the DataFeedItem ``@id`` or, when the file has none (or an empty one), the id
    generated from the text (``generate_question_id``); constructing a Question without an
    id (or with ``""``) does the same. ``rubric`` holds the question-specific traits (None
    when there are none).
    ``author``, ``sources`` and ``few_shot_examples`` hold the decoded JSON values of the
    file's JSON-encoded strings (or the raw string when it is not JSON). ``custom_metadata``
    maps the keys of ``custom_<key>`` properties to their values. ``extra_properties``
    keeps properties with other names; ``ignored_ratings`` keeps the raw ratings that
    Karenina does not load at question level (global or dynamic types). Both are written
    back on save unchanged.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = ""
    text: str
    raw_answer: str
    template_code: str
    template_name: str = Field(default_factory=lambda data: _default_template_name(data["text"]))
    finished: bool = False
    keywords: list[str] = Field(default_factory=list)
    author: JsonValue = None
    sources: JsonValue = None
    few_shot_examples: JsonValue = None
    custom_metadata: dict[str, JsonValue] = Field(default_factory=dict)
    answer_notes: str | None = None
    workspace_path: str | None = None
    rubric: Rubric | None = None
    extra_properties: dict[str, JsonValue] = Field(default_factory=dict)
    ignored_ratings: list[dict[str, Any]] = Field(default_factory=list)
    date_created: str = Field(default_factory=_now)
    date_modified: str = Field(default_factory=_now)
    code_repository: str | None = None
    jsonld_ids: JsonLdIds = Field(default_factory=JsonLdIds)

    @model_validator(mode="after")
    def _generate_id(self) -> Question:
        if not self.id:
            # Frozen model: the generated id is derived data, so assign past the freeze.
            object.__setattr__(self, "id", generate_question_id(self.text))
        return self

    @field_validator("rubric")
    @classmethod
    def _drop_empty_rubric(cls, rubric: Rubric | None) -> Rubric | None:
        return _none_if_empty(rubric)

    @field_validator("extra_properties")
    @classmethod
    def _check_extra_names(cls, extra: dict[str, JsonValue]) -> dict[str, JsonValue]:
        # Such names would be read back into other fields, not into extra_properties.
        for name in extra:
            if name in QUESTION_PROPERTY_NAMES or name.startswith("custom_"):
                raise ValueError(
                    f"extra property {name!r} clashes with a property Karenina reads itself"
                )
        return extra


class Benchmark(BaseModel):
    """A Karenina benchmark: metadata, global rubrics and the questions in file order.

    ``properties`` holds the root ``additionalProperty`` values by name (except the
    legacy global-trait properties, which are read into ``global_rubric``).
    ``global_dynamic_rubric`` holds the global dynamic-rubric traits. ``scenarios`` is
    the raw root ``hasPart`` list (multi-turn scenarios), kept only to be written back.
    Dates are the strings from the file and are never parsed.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str | None = None
    name: str
    description: str | None = None
    version: str | None = None
    creator: str | Person | None = None
    date_created: str = Field(default_factory=_now)
    date_modified: str = Field(default_factory=_now)
    global_rubric: Rubric | None = None
    global_dynamic_rubric: Rubric | None = None
    questions: list[Question] = Field(default_factory=list)
    properties: dict[str, JsonValue] = Field(default_factory=dict)
    scenarios: list[JsonValue] | None = None

    @field_validator("global_rubric", "global_dynamic_rubric")
    @classmethod
    def _drop_empty_rubric(cls, rubric: Rubric | None) -> Rubric | None:
        return _none_if_empty(rubric)

    @field_validator("global_dynamic_rubric")
    @classmethod
    def _check_dynamic(cls, rubric: Rubric | None) -> Rubric | None:
        _check_dynamic_members(rubric)
        return rubric

    @field_validator("questions")
    @classmethod
    def _unique_ids(cls, questions: list[Question]) -> list[Question]:
        seen: set[str] = set()
        for question in questions:
            if question.id in seen:
                raise ValueError(f"question id {question.id!r} is used twice")
            seen.add(question.id)
        return questions

    def question(self, question_id: str) -> Question:
        """The question with id ``question_id``; ``KeyError`` names the id if there is none."""
        for question in self.questions:
            if question.id == question_id:
                return question
        raise KeyError(f"benchmark {self.name!r} has no question with id {question_id!r}")

    def finished_questions(self) -> list[Question]:
        """The questions marked finished (those Karenina verifies by default), in order."""
        return [question for question in self.questions if question.finished]
