"""Build a throwaway instance of a template to run its ground-truth hook.

Karenina fills fields with dummy values derived from annotations and rejects
templates whose optional fields get an invalid dummy (``""`` for ``int |
None``). We build the instance with ``model_construct`` (no validation) and
type-appropriate placeholders, so valid templates are never rejected.
"""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel

from pytest_karenina.templates.base_answer import BaseAnswer

_SCALARS: dict[Any, Any] = {int: 0, float: 0.0, str: "", bool: False, bytes: b""}
_CONTAINERS: dict[Any, Any] = {list: list, set: set, frozenset: frozenset, tuple: tuple, dict: dict}


def placeholder(annotation: Any) -> Any:
    """A harmless value of roughly the annotated type."""
    if annotation in _SCALARS:
        return _SCALARS[annotation]
    origin = typing.get_origin(annotation) or annotation
    if origin in _CONTAINERS:
        return _CONTAINERS[origin]()
    args = typing.get_args(annotation)
    if origin is typing.Literal and args:
        return args[0]
    if origin in (typing.Union, types.UnionType):
        return None if type(None) in args else placeholder(args[0])
    if origin is typing.Annotated and args:
        return placeholder(args[0])
    if isinstance(origin, type) and issubclass(origin, BaseModel):
        return origin.model_construct()
    return None


def probe_instance(answer_class: type[BaseAnswer]) -> BaseAnswer:
    """An instance built without validation; its ``model_post_init`` runs."""
    values = {
        name: placeholder(field.annotation)
        for name, field in answer_class.model_fields.items()
        if name != "id"
    }
    return answer_class.model_construct(**values)
