"""JSON through orjson (several times faster than the standard library), falling back to
the standard library where orjson refuses: a lone surrogate escape, which ``json`` reads and
writes (escaped)."""

from __future__ import annotations

import json
from typing import Any

import orjson


def loads(data: bytes) -> Any:
    """Parse JSON bytes; ``ValueError`` (orjson's or json's) when they are not JSON."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)


def dumps(value: Any) -> str:
    """Compact JSON text of builtins; lone surrogates come out escaped."""
    try:
        return orjson.dumps(value).decode("utf-8")
    except TypeError:  # orjson.JSONEncodeError: a lone surrogate
        return json.dumps(value, ensure_ascii=True)
