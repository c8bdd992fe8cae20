"""Reading the JSON files the plugin writes and reads back (baselines, shard exports) with
strict pydantic models, and saying what is wrong with a damaged one in words: which field,
what it must be, what it is.

Strict means: no coercion (``"5"`` is no integer, ``true`` is no number), finite floats, no
fields the writer never writes, every field the writer always writes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import ConfigDict, ValidationError
from pydantic_core import ErrorDetails

STRICT = ConfigDict(strict=True, extra="forbid", frozen=True)
"""The configuration of every record model: no coercion, no unknown fields."""
SHOWN = 60
"""Characters of a wrong value that a message quotes."""
_PHRASES = {
    "missing": "is missing",
    "extra_forbidden": "is unknown (not a field of this record)",
    "string_type": "must be a string",
    "int_type": "must be an integer",
    "float_type": "must be a number",
    "finite_number": "must be a finite number",
    "bool_type": "must be true or false",
    "list_type": "must be a list",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "none_required": "must be null",
}


def location(loc: Sequence[int | str], prefix: str = "") -> str:
    """``items[3].score`` from pydantic's ``("items", 3, "score")``."""
    text = prefix
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return text


def phrase(error: ErrorDetails) -> str:
    """What is wrong with one field, in words, with the wrong value when there is one."""
    kind = error["type"]
    if kind == "value_error":  # a record's own check: its message says it all
        return str(error["msg"]).removeprefix("Value error, ")
    words = _PHRASES.get(kind)
    if words is None:
        message = error["msg"]
        lead = "Input should be "
        words = f"must be {message[len(lead) :]}" if message.startswith(lead) else message
        if len(words) > 2 * SHOWN:  # an enumeration of many values (outcome categories)
            words = "is not one of the values it can take"
    if kind in ("missing", "extra_forbidden"):
        return words
    return f"{words}, got {shown(error['input'])}"


def shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= SHOWN else text[:SHOWN] + "..."


Labeler = Callable[[tuple[int | str, ...]], tuple[int, str | None]]
"""Given a problem's location: how many of its leading parts name the record it is in (an
entry, an item), and a name for that record (its question, its node id) or None."""


LISTED = 3
"""Problems a message lists; it counts the others."""


def problems(error: ValidationError, prefix: str = "", labeler: Labeler | None = None) -> str:
    """The problems pydantic found, as ``<record> (<name>): field '<field>' <what is
    wrong>`` (the first few, counting the others; a record named once for its problems in a
    row); ``prefix``: where the validated data sits in its file."""
    errors = error.errors(include_url=False)
    parts: list[str] = []
    last = None
    for found in errors[:LISTED]:
        record, text = _problem(found, prefix, labeler)
        parts.append(text if record == last or not record else f"{record}: {text}")
        last = record
    text = "; ".join(parts)
    if len(errors) > LISTED:
        text += f" (and {len(errors) - LISTED} more problems)"
    return text


def _problem(error: ErrorDetails, prefix: str, labeler: Labeler | None) -> tuple[str, str]:
    """The record a problem is in (``""`` for none) and the problem."""
    loc = tuple(error["loc"])
    size, name = labeler(loc) if labeler is not None else (0, None)
    record = location(loc[:size], prefix) + (f" ({name})" if name else "")
    field = location(loc[size:])
    return record, f"field {field!r} {phrase(error)}" if field else phrase(error)


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` for :func:`json.loads`: an object that names a key twice is an
    error (``json`` would keep the last value silently)."""
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(f"the key {key!r} appears twice in one object")
        found[key] = value
    return found
