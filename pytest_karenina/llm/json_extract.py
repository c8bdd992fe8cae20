"""Reading JSON out of a model's text reply (spec 6.3), plus the texts that ask for it.

:func:`extract_json` tries, in order: (a) the whole stripped reply when it
starts with ``{`` or ``[``; (b) the first fenced block (```` ```json ```` or
```` ``` ````) whose body starts with ``{`` or ``[``; (c) the last balanced
``{...}`` span (quotes and escapes respected) that parses. Only when all of
those fail does a conservative repair run: trailing commas before ``}``/``]``
are dropped, the Python literals ``True``/``False``/``None`` outside strings
become JSON's, and brackets still open at the end are closed. All scanning is
linear in the reply length; at most :data:`MAX_CANDIDATES` spans are parsed.
"""

from __future__ import annotations

import json
import re
from types import MappingProxyType
from typing import Any

from pytest_karenina.llm.ports import ChatMessage

MAX_CANDIDATES = 64
"""How many balanced spans (last first) are parsed or repaired at most."""
MAX_DEPTH = 500
"""Deeper nesting than this is not repaired (real judge replies are shallow)."""
ERROR_LIMIT = 500
"""Characters of an error quoted back to the model in a correction message."""

FENCE = "```"
_SPECIAL = re.compile(r'[{}"\\]')
_OBJECT_START = re.compile(r'\{\s*["}]')
_TOKEN = re.compile(
    r'(?P<string>"(?:[^"\\]|\\.)*(?P<end>")?)'
    r"|(?P<comma>,(?=\s*[}\]]))"
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<open>[{\[])"
    r"|(?P<close>[}\]])"
    r'|(?P<other>[^"A-Za-z_,{}\[\]]+|,)',
    re.DOTALL,
)
_PYTHON_LITERALS = MappingProxyType({"True": "true", "False": "false", "None": "null"})
_CLOSERS = MappingProxyType({"{": "}", "[": "]"})

SCHEMA_REQUEST = """\
Reply with a single JSON object that conforms to this JSON schema:
```json
{schema}
```
Send only the JSON object, with no text before or after it."""

CORRECTION = """\
Your previous reply could not be used: {error}
Send the corrected JSON object only, with no other text."""


class JsonExtractionError(ValueError):
    """A reply holds no JSON that can be read, even after repair."""


def _loads(text: str) -> tuple[bool, Any]:
    try:
        return True, json.loads(text)
    except (ValueError, RecursionError):
        return False, None


def _first_fenced(text: str) -> str | None:
    """Body of the first fenced block starting with ``{``/``[`` (an unclosed fence runs
    to the end of the text)."""
    position = 0
    while (opening := text.find(FENCE, position)) >= 0:
        closing = text.find(FENCE, opening + len(FENCE))
        body = text[opening + len(FENCE) : closing if closing >= 0 else len(text)]
        if body[:4].lower() == "json":
            body = body[4:]
        body = body.strip()
        if body[:1] in ("{", "["):
            return body
        if closing < 0:
            return None
        position = closing + len(FENCE)
    return None


def _object_spans(text: str) -> tuple[list[tuple[int, int]], list[int]]:
    """Outermost balanced ``{...}`` spans (start, end) in order, and the positions
    of braces never closed. Quotes only count inside braces."""
    spans: list[tuple[int, int]] = []
    opened: list[int] = []
    in_string = False
    skip_to = -1
    for match in _SPECIAL.finditer(text):
        index = match.start()
        if index < skip_to:
            continue
        char = text[index]
        if in_string:
            if char == "\\":
                skip_to = index + 2
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = bool(opened)
        elif char == "{":
            opened.append(index)
        elif char == "}" and opened:
            start = opened.pop()
            while spans and spans[-1][0] > start:
                spans.pop()
            spans.append((start, index + 1))
    return spans, opened


def _repair(text: str) -> Any:
    """Repair the JSON value starting at ``text[0]``; raise JsonExtractionError."""
    out: list[str] = []
    expected: list[str] = []
    for match in _TOKEN.finditer(text):
        kind, token = match.lastgroup, match.group()
        if kind == "string" and match.group("end") is None:
            raise JsonExtractionError("a string is never closed")
        if kind == "comma":
            continue
        if kind == "word":
            token = _PYTHON_LITERALS.get(token, token)
        elif kind == "open":
            expected.append(_CLOSERS[token])
            if len(expected) > MAX_DEPTH:
                raise JsonExtractionError("the JSON is nested too deeply")
        elif kind == "close":
            if not expected or expected.pop() != token:
                raise JsonExtractionError(f"unexpected {token!r} at offset {match.start()}")
        out.append(token)
        if kind == "close" and not expected:
            break
    body = "".join(out)
    if expected:
        body = body.rstrip().rstrip(",") + "".join(reversed(expected))
    ok, value = _loads(body)
    if not ok:
        raise JsonExtractionError("still not valid JSON after repair")
    return value


def _repair_candidates(
    stripped: str, fenced: str | None, spans: list[tuple[int, int]], unclosed: list[int]
) -> list[str]:
    """What repair tries, in order: the fenced body, the whole reply, the text from
    the outermost brace never closed, then the balanced spans (last first)."""
    candidates = [fenced] if fenced is not None else []
    if stripped[0] in "{[":
        candidates.append(stripped)
    candidates += [stripped[start:] for start in unclosed[:1]]
    candidates += [stripped[start:end] for start, end in reversed(spans[-MAX_CANDIDATES:])]
    return list(dict.fromkeys(candidates))


def extract_json(text: str) -> Any:
    """The JSON value in a model reply (usually an object), found as the module describes.

    Raises :class:`JsonExtractionError` with a short reason when the reply is
    empty, holds no ``{``/``[`` at all, or holds nothing that parses even after
    the conservative repair.
    """
    stripped = text.strip()
    if not stripped:
        raise JsonExtractionError("the reply is empty")
    if stripped[0] in "{[":
        ok, value = _loads(stripped)
        if ok:
            return value
    fenced = _first_fenced(stripped)
    if fenced is not None:
        ok, value = _loads(fenced)
        if ok:
            return value
    spans, unclosed = _object_spans(stripped)
    for start, end in reversed(spans[-MAX_CANDIDATES:]):
        if _OBJECT_START.match(stripped, start):
            ok, value = _loads(stripped[start:end])
            if ok:
                return value
    candidates = _repair_candidates(stripped, fenced, spans, unclosed)
    if not candidates:
        raise JsonExtractionError("the reply contains no JSON object")
    reasons: list[str] = []
    for candidate in candidates:
        try:
            return _repair(candidate)
        except JsonExtractionError as exc:
            reasons.append(str(exc))
    raise JsonExtractionError(f"the reply contains no valid JSON ({reasons[0]})")


def schema_request_block(schema: dict[str, Any]) -> str:
    """Text appended to the last user message to ask for JSON matching ``schema``
    (shown with ``json.dumps(indent=2)`` in a json fence)."""
    return SCHEMA_REQUEST.format(schema=json.dumps(schema, indent=2))


def correction_message(error: str) -> ChatMessage:
    """User message after an unusable reply: names ``error`` (cut to
    :data:`ERROR_LIMIT` characters, marked when cut) and asks for corrected JSON only."""
    shown = error if len(error) <= ERROR_LIMIT else f"{error[:ERROR_LIMIT]} [...]"
    return ChatMessage(role="user", content=CORRECTION.format(error=shown))
