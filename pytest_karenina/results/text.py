"""Text that every writer can encode.

JSON allows a lone UTF-16 surrogate (``"\\ud800"``) in a string; Python decodes it into a
``str`` that no UTF-8 writer (files, execnet, terminals) can encode. Text from models and from
checkpoints passes through :func:`encodable` where it enters, so nothing downstream can raise
on it; lone surrogates become U+FFFD.
"""

from __future__ import annotations

import re
from typing import Any

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
"""A JSON escape of a surrogate code point (valid in pairs, harmful alone)."""


def encodable(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (``text`` itself when clean)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def encodable_tree(value: Any) -> Any:
    """``value`` (parsed JSON) with :func:`encodable` applied to every string and key."""
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, list):
        return [encodable_tree(item) for item in value]
    if isinstance(value, dict):
        return {encodable(str(key)): encodable_tree(item) for key, item in value.items()}
    return value


def may_hold_surrogates(json_text: str) -> bool:
    """Whether JSON source text escapes a surrogate anywhere (a cheap test before a walk)."""
    return _SURROGATE_ESCAPE.search(json_text) is not None
