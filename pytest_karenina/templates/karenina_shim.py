"""``karenina.*`` import paths for template code, without Karenina installed.

Templates written for Karenina import from ``karenina.schemas.entities`` and
friends. Template code runs with its own ``__import__`` (see
:func:`template_builtins`) that serves those names from module objects built
here and defers everything else to the real import system. Nothing is added to
``sys.modules``, so an installed Karenina is neither shadowed nor used.
"""

from __future__ import annotations

import builtins
import functools
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

from pytest_karenina.templates.base_answer import BaseAnswer
from pytest_karenina.templates.composition import (
    AllOf,
    AnyOf,
    AtLeastN,
    FieldCheck,
    evaluate_strategy,
)
from pytest_karenina.templates.conditional import ConditionalGroundTruth, GroundTruthCase
from pytest_karenina.templates.normalizers import (
    Normalizer,
    SynonymMap,
    apply_normalizer,
    apply_normalizers,
)
from pytest_karenina.templates.primitives import (
    COMPARISON_PRIMITIVES,
    TRACE_PRIMITIVES,
    TracePrimitive,
    VerificationPrimitive,
)
from pytest_karenina.templates.verified_field import VerificationMeta, VerifiedField

_NAMED: tuple[Any, ...] = (
    BaseAnswer, VerifiedField, VerificationMeta, ConditionalGroundTruth, GroundTruthCase,
    VerificationPrimitive, TracePrimitive, *COMPARISON_PRIMITIVES, *TRACE_PRIMITIVES,
    AllOf, AnyOf, AtLeastN, FieldCheck, evaluate_strategy,
    SynonymMap, apply_normalizer, apply_normalizers,
)  # fmt: skip
_OBJECTS: dict[str, Any] = {obj.__name__: obj for obj in _NAMED}
_OBJECTS["Normalizer"] = Normalizer  # a type alias: it has no __name__
_COMPOSITION = ("AllOf", "AnyOf", "AtLeastN", "FieldCheck", "evaluate_strategy")
_NORMALIZERS = ("Normalizer", "SynonymMap", "apply_normalizer", "apply_normalizers")
_COMPARISONS = tuple(cls.__name__ for cls in COMPARISON_PRIMITIVES)
_TRACE = tuple(cls.__name__ for cls in TRACE_PRIMITIVES)
_PRIMITIVES = ("VerificationPrimitive", "TracePrimitive", *_COMPARISONS, *_TRACE, *_NORMALIZERS)
_ENTITIES = (
    "BaseAnswer",
    "VerifiedField",
    "VerificationMeta",
    "ConditionalGroundTruth",
    "GroundTruthCase",
    *_PRIMITIVES,
    *_COMPOSITION,
)

MODULE_EXPORTS: Mapping[str, Sequence[str]] = {
    "karenina": (),
    "karenina.schemas": _ENTITIES,
    "karenina.schemas.entities": _ENTITIES,
    "karenina.schemas.entities.answer": ("BaseAnswer",),
    "karenina.schemas.entities.verified_field": ("VerifiedField", "VerificationMeta"),
    "karenina.schemas.entities.composition": _COMPOSITION,
    "karenina.schemas.entities.conditional": ("ConditionalGroundTruth", "GroundTruthCase"),
    "karenina.schemas.primitives": _PRIMITIVES,
    "karenina.schemas.primitives.comparisons": ("VerificationPrimitive", *_COMPARISONS),
    "karenina.schemas.primitives.trace": ("TracePrimitive", *_TRACE),
    "karenina.schemas.primitives.normalizers": _NORMALIZERS,
    "karenina.schemas.primitives.composition": _COMPOSITION,
}
"""Each shim module and the names it provides (Karenina's own layout)."""


def _vocabulary() -> dict[str, Any]:
    return {name: _OBJECTS[name] for name in _ENTITIES}


@functools.cache
def shim_modules() -> Mapping[str, ModuleType]:
    """The shim module objects by dotted name (built once)."""
    vocabulary = _vocabulary()
    modules: dict[str, ModuleType] = {}
    for dotted, exported in MODULE_EXPORTS.items():
        module = ModuleType(dotted, f"pytest-karenina stand-in for Karenina's {dotted}")
        module.__all__ = list(exported)  # type: ignore[attr-defined]
        for name in exported:
            setattr(module, name, vocabulary[name])
        modules[dotted] = module
    for dotted, module in modules.items():
        parent, _, child = dotted.rpartition(".")
        if parent:
            setattr(modules[parent], child, module)
    return modules


def _template_import(
    name: str,
    globals: Mapping[str, Any] | None = None,
    locals: Mapping[str, Any] | None = None,
    fromlist: Sequence[str] | None = (),
    level: int = 0,
) -> ModuleType:
    if level == 0 and (name == "karenina" or name.startswith("karenina.")):
        modules = shim_modules()
        module = modules.get(name)
        if module is None:
            raise ModuleNotFoundError(
                f"No module named {name!r}: template code can import {', '.join(sorted(modules))}",
                name=name,
            )
        return module if fromlist else modules["karenina"]
    return builtins.__import__(name, globals, locals, fromlist or (), level)


@functools.cache
def template_builtins() -> Mapping[str, Any]:
    """The builtins of template code: the real ones with the shim's ``__import__``."""
    namespace = dict(vars(builtins))
    namespace["__import__"] = _template_import
    return namespace
