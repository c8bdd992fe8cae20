"""Step 2 of an agentic rubric trait: its value, read out of the investigation's report.

Boolean, score and literal traits take one structured call each (Karenina's reply shapes;
scores clamped into the trait's range with a warning, literal class names matched as for LLM
traits, an unknown class stored as index -1 with an error). A template-kind trait's record is
first looked for as a JSON object in the report itself, then asked of the judge; which way
it came is the trait's ``agentic_trait_extraction_metadata`` entry (``method``: ``local_json``,
``parser_after_local_json_failed`` or ``failed``, with ``local_json_error`` and
``parser_error``), as Karenina records it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from pytest_karenina.llm.json_extract import JsonExtractionError, extract_json
from pytest_karenina.llm.ports import StructuredPort, Usage
from pytest_karenina.llm.replay import ReplayMiss
from pytest_karenina.prompts.agentic_rubric import (
    EXTRACTION_TASK,
    extraction_messages,
    score_range,
)
from pytest_karenina.prompts.rubric import BooleanTraitReply, ScoreTraitReply
from pytest_karenina.prompts.rubric_literal import LiteralSingleReply
from pytest_karenina.prompts.rubric_template import template_reply_model
from pytest_karenina.rubrics.scoring import (
    TraitValueError,
    boolean_value,
    literal_index,
    score_value,
)
from pytest_karenina.rubrics.traits import AgenticRubricTrait

Instructions = Callable[[str], str | None]
"""A task id -> the user's PromptConfig text for it."""


@dataclass
class Extraction:
    """What the extraction of one trait found: its value(s) (``trait`` or, for the template
    kind, ``trait.field`` keys), Karenina's extraction metadata (template kind), why it has
    no value, warnings and the usage of its call."""

    scores: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, str | None] | None = None
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    usage: Usage | None = None


FAILED = "the extraction of the investigation's finding failed: {reason}"
REPLIES: dict[str, type[BaseModel]] = {
    "boolean": BooleanTraitReply, "score": ScoreTraitReply, "literal": LiteralSingleReply,
}  # fmt: skip
"""The reply class of each scalar kind (Karenina's shapes)."""


def _ask(
    port: StructuredPort, trait: AgenticRubricTrait, report: str, instructions: Instructions,
    schema: type[BaseModel], found: Extraction,
) -> BaseModel | str:  # fmt: skip
    """The reply, or why the call failed (``found.error`` then says so)."""
    messages = extraction_messages(trait, report, instructions=instructions(EXTRACTION_TASK))
    try:
        reply = port.parse(messages, schema, call_kind=EXTRACTION_TASK)
    except ReplayMiss:
        raise
    except Exception as exc:
        reason = str(getattr(exc, "reason", None) or f"{type(exc).__name__}: {exc}")
        found.error = FAILED.format(reason=reason)
        return reason
    found.usage = reply.usage
    return reply.value


def extract(
    trait: AgenticRubricTrait,
    port: StructuredPort,
    report: str,
    final_response: str,
    instructions: Instructions,
) -> Extraction:
    """The value of ``trait`` from the investigation ``report`` (its final response is where
    a template-kind record's JSON is looked for first). Never raises but for a strict-replay
    miss."""
    found = Extraction()
    if trait.kind == "template":
        return _template(trait, port, report, final_response, instructions, found)
    schema = REPLIES[trait.kind]
    reply = _ask(port, trait, report, instructions, schema, found)
    try:
        if isinstance(reply, BooleanTraitReply):
            found.scores[trait.name] = boolean_value(reply.result)
        elif isinstance(reply, ScoreTraitReply):
            low, high = score_range(trait)
            value, original = score_value(reply.score, low, high)
            found.scores[trait.name] = value
            if original is not None:
                found.warnings.append(
                    f"agentic rubric trait {trait.name!r}: the score {original} read from the "
                    f"investigation is outside {low}-{high} and was clamped to {value}"
                )
        elif isinstance(reply, LiteralSingleReply):
            index, label = literal_index(reply.classification, trait.classes or {})
            found.scores[trait.name] = index
            if index < 0:
                found.error = (
                    f"the investigation's class {label!r} is not one of {list(trait.classes or {})}"
                )
    except TraitValueError as exc:
        found.error = f"unreadable extraction reply: {exc}"
    return found


def _template(
    trait: AgenticRubricTrait, port: StructuredPort, report: str, final_response: str,
    instructions: Instructions, found: Extraction,
) -> Extraction:  # fmt: skip
    schema = template_reply_model(trait)
    local_error: str | None = None
    try:
        data = extract_json(final_response)
        if not isinstance(data, dict):
            raise ValueError(f"the report's JSON is a {type(data).__name__}, not an object")
        record: BaseModel | None = schema.model_validate(data)
    except (JsonExtractionError, ValueError) as exc:
        local_error, record = str(exc), None
    else:
        found.metadata = {"method": "local_json", "local_json_error": None, "parser_error": None}
    if record is None:
        reply = _ask(port, trait, report, instructions, schema, found)
        parser_error = reply if isinstance(reply, str) else None
        found.metadata = {
            "method": "failed" if parser_error is not None else "parser_after_local_json_failed",
            "local_json_error": local_error, "parser_error": parser_error,
        }  # fmt: skip
        record = None if isinstance(reply, str) else reply
    if record is not None:
        for name, value in record.model_dump(mode="json").items():
            found.scores[f"{trait.name}.{name}"] = value
    return found
