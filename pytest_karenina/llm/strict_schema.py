"""OpenAI ``response_format`` for a reply schema: strict where strict mode can say it.

Strict structured output (OpenAI, vLLM and other guided-decoding servers) guarantees the
reply's shape, but only for a subset of JSON Schema: every object lists all of its
properties as required, forbids additional properties, and uses a limited set of keywords.
:func:`strict_variant` rewrites a pydantic schema into that subset when the rewrite keeps
every reply it allows valid for the original class, and returns ``None`` otherwise; the
caller then sends the schema with ``strict: false``.

The rewrite:

* objects get ``additionalProperties: false`` (an ``extra="allow"`` class reads extra keys
  but never needs them) and every property becomes required with its type unchanged: an
  optional property whose type admits ``null`` (a judge's "not stated") can still be left
  empty with ``null``; one whose type does not must be given a value, which then validates
  (adding ``null`` to it would let the model send what the class refuses);
* ``default`` values are dropped (strict mode does not take them; pydantic fills them in);
* a ``$ref`` with sibling keywords (pydantic's ``{"$ref": ..., "description": ...}``) is
  inlined with its siblings, since strict mode takes a bare ``$ref`` only.

Anything else strict mode cannot express (a mapping field's ``additionalProperties``
schema, ``allOf``, ``not``, conditionals, a recursive model behind an inlined ``$ref``, a
root that is not an object) makes the schema non-strict.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

_ALLOWED = frozenset(
    {
        "type", "properties", "required", "additionalProperties", "items", "enum", "const",
        "anyOf", "$ref", "$defs", "description", "title", "pattern", "format", "minimum",
        "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems",
        "maxItems", "default",
    }
)  # fmt: skip
"""Keywords strict mode accepts (``default`` is accepted here only to be dropped)."""

_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
_MAX_INLINE_DEPTH = 16


class _NotStrict(Exception):
    """The schema uses something strict mode cannot express."""


def strict_variant(schema: dict[str, Any]) -> dict[str, Any] | None:
    """``schema`` rewritten for strict mode, or ``None`` when strict mode cannot express it.

    ``schema`` is not modified.
    """
    if schema.get("type") != "object":
        return None
    definitions = schema.get("$defs") or {}
    try:
        rewritten = _rewrite(schema, definitions, depth=0)
        if definitions:
            rewritten["$defs"] = {
                name: _rewrite(node, definitions, depth=0) for name, node in definitions.items()
            }
    except _NotStrict:
        return None
    return rewritten


def _rewrite(node: Any, definitions: dict[str, Any], *, depth: int) -> dict[str, Any]:
    if not isinstance(node, dict):
        raise _NotStrict
    unknown = node.keys() - _ALLOWED
    if unknown or ("format" in node and node["format"] not in _FORMATS):
        raise _NotStrict
    if "$ref" in node and node.keys() - {"$ref", "default"}:
        return _rewrite(_inlined(node, definitions, depth), definitions, depth=depth + 1)
    result: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("default", "$defs"):
            continue
        if key == "properties":
            result[key] = {
                name: _rewrite(sub, definitions, depth=depth) for name, sub in value.items()
            }
        elif key == "items":
            result[key] = _rewrite(value, definitions, depth=depth)
        elif key == "anyOf":
            result[key] = [_rewrite(sub, definitions, depth=depth) for sub in value]
        else:
            result[key] = value
    if node.get("type") == "object" or "properties" in node:
        if node.get("additionalProperties") not in (None, True, False):
            raise _NotStrict  # a mapping field: its value schema has no strict form
        result["additionalProperties"] = False
        result["required"] = list(result.get("properties", {}))
    return result


def _inlined(node: dict[str, Any], definitions: dict[str, Any], depth: int) -> dict[str, Any]:
    """A ``$ref`` with siblings as the referenced schema with those siblings merged in."""
    if depth >= _MAX_INLINE_DEPTH:
        raise _NotStrict  # a recursive model cannot be inlined
    reference = node["$ref"]
    prefix = "#/$defs/"
    if not isinstance(reference, str) or not reference.startswith(prefix):
        raise _NotStrict
    target = definitions.get(reference.removeprefix(prefix))
    if not isinstance(target, dict):
        raise _NotStrict
    siblings = {key: value for key, value in node.items() if key != "$ref"}
    return {**target, **siblings}


def response_format(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The chat-completions ``response_format`` asking for ``schema``: strict when it can be."""
    strict = strict_variant(schema)
    return {
        "type": "json_schema",
        "json_schema": {
            "name": name,
            "schema": strict if strict is not None else schema,
            "strict": strict is not None,
        },
    }


class ResponseFormats:
    """:func:`response_format` remembered per schema object (reply schemas are built once per
    class, so the same dict comes back for every question). Thread-safe; holds at most
    ``size`` schemas, keeping them alive so their ids stay theirs."""

    def __init__(self, size: int = 256) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._by_id: OrderedDict[tuple[int, str], tuple[dict[str, Any], dict[str, Any]]] = (
            OrderedDict()
        )

    def get(self, name: str, schema: dict[str, Any]) -> dict[str, Any]:
        key = (id(schema), name)
        with self._lock:
            found = self._by_id.get(key)
            if found is not None and found[0] is schema:
                self._by_id.move_to_end(key)
                return found[1]
        built = response_format(name, schema)
        with self._lock:
            self._by_id[key] = (schema, built)
            while len(self._by_id) > self._size:
                self._by_id.popitem(last=False)
        return built
