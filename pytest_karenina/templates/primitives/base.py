"""The primitive protocol, the name registry and (de)serialisation.

A primitive compares one extracted value with its ground truth. It is stored in
a template's field metadata as its JSON dump plus its class name under
``"type"`` (Karenina's layout) and rebuilt from that by name.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, TypeAlias, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict


def _compiles(pattern: str) -> str:
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as exc:  # deep nesting overflows the parser
        shown = pattern if len(pattern) <= 80 else f"{pattern[:77]}..."
        raise ValueError(
            f"invalid regular expression {shown!r}: {exc or type(exc).__name__}"
        ) from exc
    return pattern


RegexPattern: TypeAlias = Annotated[str, AfterValidator(_compiles)]
"""A regular expression, checked to compile when the primitive is built."""

_REGISTRY: dict[str, type[VerificationPrimitive]] = {}
_ABSTRACT = frozenset({"VerificationPrimitive", "TracePrimitive"})


class VerificationPrimitive(BaseModel):
    """Compare an extracted value with the expected value.

    Subclasses implement :meth:`check`; graded primitives also override
    :meth:`score`. Exceptions from ``check`` (e.g. ``float("forty-six")``) are
    deliberately not caught here: the template's verification reports them.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    builtin: ClassVar[bool] = False

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        name = cls.__name__
        if name in _ABSTRACT:
            return
        existing = _REGISTRY.get(name)
        if existing is not None and existing.builtin and existing is not cls:
            raise TypeError(f"primitive name {name!r} is reserved by a built-in primitive")
        _REGISTRY[name] = cls

    def check(self, extracted: Any, expected: Any) -> bool:
        """Return True when ``extracted`` matches ``expected`` under this rule."""
        raise NotImplementedError(f"{type(self).__name__} does not implement check()")

    def score(self, extracted: Any, expected: Any) -> float:
        """Partial credit in [0, 1]; binary primitives give 1.0 or 0.0."""
        return 1.0 if self.check(extracted, expected) else 0.0


_P = TypeVar("_P", bound=type[VerificationPrimitive])


class TracePrimitive(VerificationPrimitive):
    """A primitive that inspects the raw answer trace, not an extracted value.

    Fields using one are typed ``bool``, hidden from the judge, and pass when
    ``check_trace(raw_trace) == bool(ground_truth)``.
    """

    def check_trace(self, trace: str) -> bool:
        raise NotImplementedError(f"{type(self).__name__} does not implement check_trace()")

    def check(self, extracted: Any, expected: Any) -> bool:
        raise TypeError(
            f"{type(self).__name__} is a trace primitive: it checks the raw trace "
            "(check_trace), not an extracted value"
        )


def builtin_primitive(cls: _P) -> _P:
    """Mark a primitive class as built in, so templates cannot shadow its name."""
    cls.builtin = True
    return cls


def primitive_types() -> dict[str, type[VerificationPrimitive]]:
    """A snapshot of the registered primitive classes by name."""
    return dict(_REGISTRY)


def serialize_primitive(primitive: VerificationPrimitive) -> dict[str, Any]:
    """Karenina's storage layout: the JSON dump plus ``"type": <class name>``."""
    data = primitive.model_dump(mode="json")
    data["type"] = type(primitive).__name__
    return data


def primitive_from_dict(data: dict[str, Any]) -> VerificationPrimitive:
    """Rebuild a primitive from :func:`serialize_primitive` output."""
    params = dict(data)
    type_name = params.pop("type", None)
    if not isinstance(type_name, str):
        raise ValueError(f"a stored primitive needs a 'type' naming its class, got {data!r}")
    cls = _REGISTRY.get(type_name)
    if cls is None:
        known = ", ".join(sorted(_REGISTRY))
        raise ValueError(f"unknown verification primitive {type_name!r} (known: {known})")
    return cls.model_validate(params)
