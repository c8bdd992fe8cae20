"""The JSON schema a judge sees for a template.

Pydantic's schema of the template with every ``__verification__`` entry
removed and trace-primitive fields deleted (also inside ``$defs``): trace
fields are checked on the raw trace, not extracted. ``correct`` and ``regex``
never appear because they are instance attributes, not fields. ``id`` stays,
as in Karenina's prompts.
"""

from __future__ import annotations

from typing import Any, cast

from pydantic.json_schema import model_json_schema

from pytest_karenina.templates.base_answer import BaseAnswer, strip_verification
from pytest_karenina.templates.primitives.base import TracePrimitive, primitive_types
from pytest_karenina.templates.verified_field import VERIFICATION_KEY


def _is_trace_property(prop: Any) -> bool:
    if not isinstance(prop, dict):
        return False
    stored = prop.get(VERIFICATION_KEY)
    if not isinstance(stored, dict) or not isinstance(stored.get("verify_with"), dict):
        return False
    cls = primitive_types().get(stored["verify_with"].get("type", ""))
    return cls is not None and issubclass(cls, TracePrimitive)


def _drop_trace_properties(obj: dict[str, Any]) -> None:
    properties = obj.get("properties")
    if not isinstance(properties, dict):
        return
    trace_names = [name for name, prop in properties.items() if _is_trace_property(prop)]
    for name in trace_names:
        del properties[name]
    required = obj.get("required")
    if isinstance(required, list) and trace_names:
        obj["required"] = [name for name in required if name not in trace_names]
        if not obj["required"]:
            del obj["required"]


def judge_schema(answer_class: type[BaseAnswer]) -> dict[str, Any]:
    """The schema embedded in the parsing prompt: no ground truth, no trace fields."""
    schema = model_json_schema(answer_class)
    _drop_trace_properties(schema)
    for definition in schema.get("$defs", {}).values():
        if isinstance(definition, dict):
            _drop_trace_properties(definition)
    result: dict[str, Any] = strip_verification(schema)
    return result


_CACHE = "__karenina_judge_schema__"


def shared_judge_schema(answer_class: type[BaseAnswer]) -> dict[str, Any]:
    """:func:`judge_schema` made once per class and kept on it: every call returns the same
    dict, which callers must not modify. A template asked again (replicates, more answering
    models, deep judgment's several prompts) pays pydantic's schema generation once."""
    cached = answer_class.__dict__.get(_CACHE)
    if cached is None:
        cached = judge_schema(answer_class)
        type.__setattr__(answer_class, _CACHE, cached)
    return cast(dict[str, Any], cached)
