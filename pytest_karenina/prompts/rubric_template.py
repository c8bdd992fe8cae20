"""Call 8, template-kind LLM traits: the judge fills the trait's own schema from the answer.

The reply class is rebuilt from the trait's JSON schema the way Karenina does it:
only top-level ``properties`` count; ``integer``, ``number``, ``string``,
``boolean``, arrays of those and ``anyOf[T, null]`` keep their type, anything else
becomes a string; ``required`` decides which fields may be left out.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from pytest_karenina.llm.ports import ChatMessage
from pytest_karenina.prompts.messages import system_and_user
from pytest_karenina.prompts.rubric import describe, material
from pytest_karenina.rubrics.traits import AgenticRubricTrait, LLMRubricTrait

TEMPLATE_TASK = "rubric_llm_trait_template"

_SCALARS: dict[str, type] = {"integer": int, "number": float, "string": str, "boolean": bool}

TEMPLATE_SYSTEM = """\
You fill in a small structured record about a model's answer, following the field \
descriptions of a JSON schema that a benchmark author wrote.

How to fill it in:
- Give every field a value taken from what the answer says, in the declared type.
- Where the answer gives no evidence for a field, choose the most cautious value \
(false, 0, an empty list or null where allowed) rather than a generous guess.

Reply with the JSON object only: no markdown code fence and no text around it."""

TEMPLATE_USER = """\
Fill in the record for the trait "{name}".

## Trait
{description}

## Fields
{fields}

{material}"""


def _field_type(spec: Any) -> Any:
    if not isinstance(spec, Mapping):
        return str
    options = spec.get("anyOf")
    if isinstance(options, list):
        kinds = [option for option in options if option != {"type": "null"}]
        if len(kinds) == 1 and len(options) == 2:
            return _field_type(kinds[0]) | None
        return str
    kind = spec.get("type")
    if kind == "array":
        return list[_field_type(spec.get("items"))]  # type: ignore[misc]
    return _SCALARS.get(kind, str) if isinstance(kind, str) else str


@functools.lru_cache(maxsize=128)
def _cached_model(name: str, schema_json: str) -> type[BaseModel]:
    schema = json.loads(schema_json)
    properties = schema.get("properties") if isinstance(schema, dict) else None
    required = set(schema.get("required") or []) if isinstance(schema, dict) else set()
    fields: dict[str, Any] = {}
    for field_name, spec in (properties or {}).items():
        description = spec.get("description") if isinstance(spec, Mapping) else None
        annotation = _field_type(spec)
        default: Any = ... if field_name in required else None
        if field_name not in required and type(None) not in getattr(annotation, "__args__", ()):
            annotation = annotation | None
        fields[field_name] = (annotation, Field(default, description=description))
    model_name = "".join(part.capitalize() for part in name.split()) or "TraitRecord"
    return create_model(f"{model_name}Record", __config__=ConfigDict(extra="ignore"), **fields)


def template_reply_model(trait: LLMRubricTrait | AgenticRubricTrait) -> type[BaseModel]:
    """The pydantic class of ``trait``'s record (built once per name and schema); an
    agentic template-kind trait's record is built the same way."""
    schema = json.dumps(trait.template_schema or {}, sort_keys=True)
    return _cached_model(trait.name, schema)


def template_messages(
    trait: LLMRubricTrait,
    question: str | None,
    answer: str,
    *,
    reference: str | None = None,
    instructions: str | None = None,
) -> list[ChatMessage]:
    """``[system, user]`` asking for ``trait``'s record about ``answer``."""
    schema = template_reply_model(trait).model_json_schema()
    lines = [
        f"- **{name}** ({spec.get('type', 'value')}): {spec.get('description', '')}".rstrip(": ")
        for name, spec in schema.get("properties", {}).items()
    ]
    user = TEMPLATE_USER.format(
        name=trait.name,
        description=describe(trait),
        fields="\n".join(lines) or "(none)",
        material=material(question, answer, reference),
    )
    return system_and_user(TEMPLATE_SYSTEM, user, instructions)
