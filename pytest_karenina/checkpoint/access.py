"""Typed, path-aware access to parsed JSON: each helper names the JSON path on failure.

Paths are only built when something is wrong, so the happy path costs a dict lookup
and an ``isinstance`` check per key.
"""

from __future__ import annotations

from typing import Any

from pytest_karenina.checkpoint.errors import DecodeFailure, describe


def join(path: str, key: str) -> str:
    """The path of ``key`` inside the object at ``path``."""
    return f"{path}.{key}" if path else key


def at(path: str, index: int) -> str:
    """The path of element ``index`` of the array at ``path``."""
    return f"{path}[{index}]"


def wrong_type(path: str, expected: str, value: Any) -> DecodeFailure:
    """A failure for a value of the wrong JSON type."""
    return DecodeFailure(path, f"expected {expected}, found {describe(value)}")


def missing(path: str, key: str, expected: str) -> DecodeFailure:
    """A failure for a required key that is absent."""
    return DecodeFailure(join(path, key), f"required key {key!r} is missing (expected {expected})")


def as_object(value: Any, path: str, what: str = "an object") -> dict[str, Any]:
    """``value`` if it is a JSON object."""
    if not isinstance(value, dict):
        raise wrong_type(path, what, value)
    return value


def req_str(obj: dict[str, Any], key: str, path: str, what: str = "a string") -> str:
    """A required string member; ``what`` describes it in the missing-key message."""
    value = obj.get(key)
    if isinstance(value, str):
        return value
    if key not in obj:
        raise missing(path, key, what)
    raise wrong_type(join(path, key), "a string", value)


def opt_str(obj: dict[str, Any], key: str, path: str) -> str | None:
    """An optional string member (absent or null gives None)."""
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    raise wrong_type(join(path, key), "a string", value)


def req_object(obj: dict[str, Any], key: str, path: str, what: str) -> dict[str, Any]:
    """A required object member."""
    value = obj.get(key)
    if isinstance(value, dict):
        return value
    if key not in obj:
        raise missing(path, key, what)
    raise wrong_type(join(path, key), "an object", value)


def req_list(obj: dict[str, Any], key: str, path: str, what: str) -> list[Any]:
    """A required array member."""
    value = obj.get(key)
    if isinstance(value, list):
        return value
    if key not in obj:
        raise missing(path, key, what)
    raise wrong_type(join(path, key), "an array", value)


def opt_list(obj: dict[str, Any], key: str, path: str) -> list[Any]:
    """An optional array member (absent or null gives an empty list)."""
    value = obj.get(key)
    if value is None:
        return []
    if isinstance(value, list):
        return value
    raise wrong_type(join(path, key), "an array", value)


def req_number(obj: dict[str, Any], key: str, path: str) -> float:
    """A required number member (JSON booleans are not numbers)."""
    value = obj.get(key)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    if key not in obj:
        raise missing(path, key, "a number")
    raise wrong_type(join(path, key), "a number", value)


def str_list(value: Any, path: str) -> list[str]:
    """``value`` if it is an array of strings."""
    if not isinstance(value, list):
        raise wrong_type(path, "an array of strings", value)
    for index, element in enumerate(value):
        if not isinstance(element, str):
            raise wrong_type(at(path, index), "a string", element)
    return value


def check_type_tag(obj: dict[str, Any], path: str, expected: str) -> None:
    """An ``@type``, when present, must be the literal Karenina writes for this node."""
    tag = obj.get("@type")
    if tag is not None and tag != expected:
        raise DecodeFailure(
            join(path, "@type"), f"expected @type {expected!r}, found {describe(tag)}"
        )


def property_values(obj: dict[str, Any], path: str) -> list[tuple[str, Any]]:
    """The ``additionalProperty`` list of ``obj`` as (name, value) pairs, in file order.

    A PropertyValue without a ``value`` key has the value None.
    """
    entries = opt_list(obj, "additionalProperty", path)
    if not entries:
        return []
    base = join(path, "additionalProperty")
    pairs: list[tuple[str, Any]] = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise wrong_type(at(base, index), "a PropertyValue object", entry)
        name = entry.get("name")
        if not isinstance(name, str):
            entry_path = at(base, index)
            if "name" not in entry:
                raise missing(entry_path, "name", "a string: the property name")
            raise wrong_type(join(entry_path, "name"), "a string", name)
        if "@type" in entry:
            check_type_tag(entry, at(base, index), "PropertyValue")
        pairs.append((name, entry.get("value")))
    return pairs
