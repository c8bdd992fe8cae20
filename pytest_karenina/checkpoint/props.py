"""Typed reading of trait properties: ``Props`` and the ``take_*`` helpers.

Each helper removes the property it reads from ``Props.values``, so that what is left
afterwards are the properties nobody knows (kept as the trait's extra properties).
An absent property gives the default; a value of the wrong type is a ``DecodeFailure``
naming the property's JSON path.
"""

from __future__ import annotations

from typing import Any

from pytest_karenina.checkpoint.access import join, wrong_type
from pytest_karenina.rubrics.rules import json_or_raw

#: Marks an absent property where None (JSON null) is a meaningful value.
ABSENT: Any = object()


class Props:
    """Property values of one trait, with the JSON path of each for error messages.

    ``positions`` maps a property name to its index in the rating's
    ``additionalProperty`` array; without it (legacy trait objects) properties are
    plain keys of the object at ``base``.
    """

    __slots__ = ("base", "positions", "values")

    def __init__(self, values: dict[str, Any], base: str, positions: dict[str, int] | None):
        self.values = values
        self.base = base
        self.positions = positions

    def path(self, name: str) -> str:
        """Where property ``name`` is (the trait itself when the property is absent)."""
        if self.positions is None or name in ("name", "description"):
            return join(self.base, name)
        position = self.positions.get(name)
        if position is None:
            return self.base
        return f"{self.base}.additionalProperty[{position}].value"


def _integer(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def take_bool(props: Props, name: str, default: bool) -> bool:
    value = props.values.pop(name, None)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    raise wrong_type(props.path(name), "a boolean", value)


def take_opt_bool(props: Props, name: str, default: bool | None) -> bool | None:
    value = props.values.pop(name, ABSENT)
    if value is ABSENT:
        return default
    if value is None or isinstance(value, bool):
        return value
    raise wrong_type(props.path(name), "a boolean or null", value)


def take_int(props: Props, name: str, default: int | None) -> int | None:
    """An integer property; absent gives ``default``, null gives None."""
    value = props.values.pop(name, ABSENT)
    if value is ABSENT:
        return default
    if value is None:
        return None
    number = _integer(value)
    if number is None:
        raise wrong_type(props.path(name), "an integer", value)
    return number


def take_float(props: Props, name: str) -> float | None:
    value = props.values.pop(name, None)
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    raise wrong_type(props.path(name), "a number", value)


def take_str(props: Props, name: str, default: str | None) -> str | None:
    value = props.values.pop(name, None)
    if value is None:
        return default
    if isinstance(value, str):
        return value
    raise wrong_type(props.path(name), "a string", value)


def take_choice(props: Props, name: str, choices: tuple[str, ...], default: str) -> str:
    value = props.values.pop(name, None)
    if value is None:
        return default
    if value in choices:
        return str(value)
    expected = " or ".join(repr(choice) for choice in choices)
    raise wrong_type(props.path(name), expected, value)


def take_classes(props: Props) -> dict[str, str] | None:
    raw = props.values.pop("classes", None)
    if raw is None:
        return None
    value = json_or_raw(raw)
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise wrong_type(
            props.path("classes"),
            "an object mapping class names to descriptions (or a JSON string of one)",
            raw,
        )
    return value


def take_str_list(props: Props, name: str) -> list[str]:
    raw = props.values.pop(name, None)
    if raw is None:
        return []
    value = json_or_raw(raw)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise wrong_type(props.path(name), "an array of strings (or a JSON string of one)", raw)
    return value


def take_kind(props: Props, choices: tuple[str, ...], default: str) -> tuple[str, Any]:
    """A kind string, or ``{"type": "template", "schema": {...}}``: (kind, schema or None)."""
    value = props.values.pop("kind", None)
    if value is None:
        return default, None
    if value in choices:
        return str(value), None
    if isinstance(value, dict) and value.get("type") == "template":
        schema = value.get("schema")
        if isinstance(schema, dict):
            return "template", schema
    expected = ", ".join(repr(choice) for choice in choices)
    raise wrong_type(
        props.path("kind"), f'{expected} or {{"type": "template", "schema": {{...}}}}', value
    )
