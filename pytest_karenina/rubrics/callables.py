"""Loading and running callable traits.

Karenina stores a callable trait as base64 of cloudpickle bytes. Unpickling runs
code, so a checkpoint must be trusted like a test file; it happens only when a
run evaluates the trait, once per distinct payload per process. Payloads pickled
by cloudpickle need the ``cloudpickle`` package (``pip install
pytest-karenina[callable]``). Every problem is a :class:`CallableTraitError`
naming the cause, which the evaluation records against the trait.
"""

from __future__ import annotations

import functools
import math
import pickle
from collections.abc import Callable
from typing import Any

from pytest_karenina.rubrics.scoring import TraitValueError, literal_index
from pytest_karenina.rubrics.traits import CallableTrait

SOURCE_MARKERS = ("def ", "lambda", "import ", "return ")


class CallableTraitError(ValueError):
    """A callable trait could not be loaded, or its function failed or returned nonsense."""


def _looks_like_source(code: bytes) -> bool:
    try:
        text = code.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return any(marker in text for marker in SOURCE_MARKERS)


@functools.lru_cache(maxsize=256)
def load_callable(code: bytes) -> Callable[[str], Any]:
    """The function pickled in ``code`` (cached per payload); ``CallableTraitError`` otherwise."""
    if not code:
        raise CallableTraitError("the trait has no callable_code")
    try:
        function = pickle.loads(code)  # the checkpoint is trusted like a test file
    except ModuleNotFoundError as exc:
        hint = " (pip install pytest-karenina[callable])" if exc.name == "cloudpickle" else ""
        raise CallableTraitError(f"the pickled callable needs module {exc.name!r}{hint}") from exc
    except Exception as exc:
        if _looks_like_source(code):
            raise CallableTraitError(
                "callable_code holds Python source text, not a pickled function "
                "(Karenina stores cloudpickle bytes and cannot load it either)"
            ) from exc
        raise CallableTraitError(
            f"callable_code cannot be unpickled: {type(exc).__name__}: {exc}"
        ) from exc
    if not callable(function):
        raise CallableTraitError(f"callable_code holds a {type(function).__name__}, not a function")
    return function  # type: ignore[no-any-return]


def run_callable(trait: CallableTrait, text: str) -> bool | int:
    """The trait's value for ``text``: bool (boolean kind, inversion applied), int (score
    kind, within the bounds when set) or class index (literal kind)."""
    function = load_callable(trait.callable_code)
    try:
        value = function(text)
    except Exception as exc:
        raise CallableTraitError(f"the function raised {type(exc).__name__}: {exc}") from exc
    try:
        return _check_return(trait, value)
    except TraitValueError as exc:
        raise CallableTraitError(str(exc)) from exc


def _check_return(trait: CallableTrait, value: Any) -> bool | int:
    if trait.kind == "boolean":
        if not isinstance(value, bool):
            raise TraitValueError(f"a boolean callable must return a bool, got {value!r}")
        return not value if trait.invert_result else value
    if trait.kind == "literal":
        index, label = literal_index(value, trait.classes or {})
        if index < 0:
            raise TraitValueError(
                f"returned {label!r}, which is not one of the classes {list(trait.classes or {})}"
            )
        return index
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise TraitValueError(f"a score callable must return a number, got {value!r}")
    low, high = trait.min_score, trait.max_score
    if (low is not None and value < low) or (high is not None and value > high):
        raise TraitValueError(f"returned {value}, outside the range {low}..{high}")
    return int(value)
