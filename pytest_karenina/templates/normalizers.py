"""Text normalizers applied by string and list primitives before comparing.

A normalizer is either one of the names in :data:`NORMALIZER_NAMES` or a
:class:`SynonymMap`. They are applied left to right to ``str(value)``, so order
matters (``["lowercase", SynonymMap(...)]`` looks up the lower-cased text).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterable
from typing import Annotated, Any, TypeAlias

from pydantic import BaseModel, BeforeValidator, ConfigDict

_PUNCTUATION_TABLE = str.maketrans("", "", string.punctuation)
_WHITESPACE_RUN = re.compile(r"\s+")


def _collapse_whitespace(text: str) -> str:
    return _WHITESPACE_RUN.sub(" ", text).strip()


_NAMED: dict[str, Callable[[str], str]] = {
    "lowercase": str.lower,
    "strip": str.strip,
    "remove_punctuation": lambda text: text.translate(_PUNCTUATION_TABLE),
    "collapse_whitespace": _collapse_whitespace,
}

NORMALIZER_NAMES: tuple[str, ...] = tuple(_NAMED)


class SynonymMap(BaseModel):
    """Replace the whole text by ``mapping[text]`` when present (exact lookup)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mapping: dict[str, str]

    def apply(self, text: str) -> str:
        return self.mapping.get(text, text)


def _check_normalizer(value: Any) -> Any:
    if isinstance(value, str) and value not in _NAMED:
        known = ", ".join(NORMALIZER_NAMES)
        raise ValueError(f"unknown normalizer {value!r}; expected one of {known} or a SynonymMap")
    return value


Normalizer: TypeAlias = Annotated[str | SynonymMap, BeforeValidator(_check_normalizer)]
"""A normalizer name or a :class:`SynonymMap` (validated when a primitive is built)."""


def apply_normalizer(normalizer: str | SynonymMap, text: str) -> str:
    """Apply one normalizer; unknown names raise ``ValueError``."""
    if isinstance(normalizer, SynonymMap):
        return normalizer.apply(text)
    _check_normalizer(normalizer)
    return _NAMED[normalizer](text)


def apply_normalizers(normalizers: Iterable[str | SynonymMap], value: Any) -> str:
    """Apply ``normalizers`` left to right to ``str(value)``."""
    text = str(value)
    for normalizer in normalizers:
        text = apply_normalizer(normalizer, text)
    return text
