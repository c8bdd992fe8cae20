"""Classifying LLM call failures, reading Retry-After, and keeping secrets out of text.

The classes follow the RetryPolicy categories of Karenina (spec 4.5) plus two
non-retryable ones that make error reports clearer: ``auth`` (401/403, bad key)
and ``client_error`` (any other 4xx but 429: the request itself is wrong).

Classification looks at exception *type names* along the MRO rather than at
imported classes, so it works for ``openai``, ``anthropic``, ``httpx`` and
``httpx2`` exceptions alike without importing any of them; then at an HTTP
status code (``exc.status_code`` or ``exc.response.status_code``); then at
the explicit cause chain (``raise ... from exc``); then at the message.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, Literal, TypeGuard

if TYPE_CHECKING:
    from pytest_karenina.config.model_sections import ErrorPatternConfig

ErrorClass = Literal[
    "rate_limit", "server_error", "timeout", "connection", "auth", "client_error", "permanent"
]

RetryCategory = Literal["connection", "timeout", "rate_limit", "server_error"]
RETRYABLE_CLASSES: tuple[RetryCategory, ...] = (
    "connection",
    "timeout",
    "rate_limit",
    "server_error",
)

# First match along the MRO wins, so subclasses (APITimeoutError under
# APIConnectionError, OAuthError under AuthenticationError) are seen first.
_BY_TYPE_NAME: dict[str, ErrorClass] = {
    "RateLimitError": "rate_limit",
    "OverloadedError": "rate_limit",
    "APITimeoutError": "timeout",
    "StreamingTimeoutError": "timeout",
    "TimeoutException": "timeout",  # httpx ReadTimeout, ConnectTimeout, PoolTimeout, ...
    "ReadTimeout": "timeout",  # requests
    "Timeout": "timeout",  # requests
    "TimeoutError": "timeout",  # builtin, socket.timeout, asyncio
    "APIConnectionError": "connection",
    "ConnectError": "connection",
    "NetworkError": "connection",  # httpx ConnectError, ReadError, WriteError, ...
    "RemoteProtocolError": "connection",  # server closed the connection mid-response
    "ConnectionError": "connection",  # builtin and requests
    "InternalServerError": "server_error",
    "MalformedReplyError": "server_error",  # openai_endpoint: a 200 that is no completion
    "ServiceUnavailableError": "server_error",
    "AuthenticationError": "auth",
    "PermissionDeniedError": "auth",
    "BadRequestError": "client_error",
    "NotFoundError": "client_error",
    "UnprocessableEntityError": "client_error",
    "ConflictError": "client_error",
}

# Spec 4.5: a bare ``HTTPError`` (requests) counts as a server error, but only
# after the status code had its say (httpx's HTTPError is the base of everything).
_GENERIC_TYPE_NAMES: dict[str, ErrorClass] = {"HTTPError": "server_error"}

_BY_MESSAGE: tuple[tuple[ErrorClass, re.Pattern[str]], ...] = (
    ("rate_limit", re.compile(r"rate.?limit|too many requests|\b429\b|overloaded|\b529\b", re.I)),
    (
        "auth",
        re.compile(r"\b40[13]\b|unauthori[sz]ed|invalid.{0,20}api.?key|authentication", re.I),
    ),
    ("timeout", re.compile(r"timed? ?out|timeout|deadline exceeded", re.I)),
    ("connection", re.compile(r"connection|network|\bdns\b|name resolution|unreachable", re.I)),
    (
        "server_error",
        re.compile(r"\b50[0234]\b|internal server error|bad gateway|service unavailable", re.I),
    ),
)

_SECRET_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{6,}"),
    re.compile(
        r"(?i)\b([\w-]{0,40}(?:api[_-]?key|token|secret|password|authorization))"
        r"(\"?\s*[=:]\s*[\"']?)[^\s\"',;}&)]+"
    ),
    re.compile(r"\bsk-[A-Za-z0-9_-]{12,}"),
)

_SECRET_ENV_NAME = re.compile(r"(?i)(api_?key|token|secret|password)")


def _status_code(exc: BaseException) -> int | None:
    """The HTTP status of an exception, from ``status_code`` or ``response.status_code``."""
    for holder in (exc, getattr(exc, "response", None)):
        code = getattr(holder, "status_code", None)
        if isinstance(code, int) and not isinstance(code, bool):
            return code
    return None


def _class_for_status(code: int) -> ErrorClass | None:
    if code == 429 or code == 529:
        return "rate_limit"
    if code == 408:
        return "timeout"
    if code in (401, 403):
        return "auth"
    if 500 <= code <= 599:
        return "server_error"
    if 400 <= code <= 499:
        return "client_error"
    return None


def _classify_one(exc: BaseException) -> ErrorClass | None:
    names = [cls.__name__ for cls in type(exc).__mro__]
    for name in names:
        if name in _BY_TYPE_NAME:
            return _BY_TYPE_NAME[name]
    code = _status_code(exc)
    if code is not None and (found := _class_for_status(code)) is not None:
        return found
    for name in names:
        if name in _GENERIC_TYPE_NAMES:
            return _GENERIC_TYPE_NAMES[name]
    return None


def classify_error(exc: BaseException, patterns: Sequence[ErrorPatternConfig] = ()) -> ErrorClass:
    """Classify a failed call: by the user's ``patterns`` (``custom_error_patterns``), then by
    type name, status code, cause chain, then message.

    As in Karenina, the user's rules come first and look at ``exc`` itself: the exact type
    name (``type_name``), then a case-insensitive message substring (``message_substring``).
    Never raises; anything unrecognised is ``"permanent"`` (not retried).
    """
    custom = _classify_custom(exc, patterns)
    if custom is not None:
        return custom
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(seen) < 8:
        seen.add(id(current))
        found = _classify_one(current)
        if found is not None:
            return found
        current = current.__cause__
    message = str(exc)
    for error_class, pattern in _BY_MESSAGE:
        if pattern.search(message):
            return error_class
    return "permanent"


def _classify_custom(
    exc: BaseException, patterns: Sequence[ErrorPatternConfig]
) -> ErrorClass | None:
    name = type(exc).__name__
    for rule in patterns:
        if rule.match_type == "type_name" and rule.pattern == name:
            return rule.category
    message = str(exc).lower()
    for rule in patterns:
        if rule.match_type == "message_substring" and rule.pattern.lower() in message:
            return rule.category
    return None


def is_retryable(error_class: ErrorClass) -> TypeGuard[RetryCategory]:
    """Whether a call failing with ``error_class`` may be retried (transient classes only)."""
    return error_class in RETRYABLE_CLASSES


def retry_after_seconds(exc: BaseException) -> float | None:
    """Seconds to wait according to the ``Retry-After`` header of ``exc.response``.

    Accepts delta-seconds and HTTP dates (a date in the past gives ``0.0``).
    ``None`` when there is no response, no header or the value is unreadable.
    """
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    try:
        value = headers.get("retry-after") or headers.get("Retry-After")
    except Exception:
        return None
    if not isinstance(value, str) or not value.strip():
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    if seconds != seconds:  # NaN
        return None
    return max(0.0, seconds)


def env_secrets(min_length: int = 8) -> list[str]:
    """Values of environment variables whose names look secret (``*API_KEY*``, ``*TOKEN*``...).

    Used as a default redaction list so provider messages that echo a key never
    reach reports even when the caller did not pass its secrets explicitly.
    """
    return [
        value
        for name, value in os.environ.items()
        if _SECRET_ENV_NAME.search(name) and len(value) >= min_length
    ]


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every secret value and every credential-looking span replaced by ``***``.

    Replaces the given ``secrets`` verbatim (longest first; empty strings are
    ignored), then ``Bearer <token>``, ``api_key=<value>``/``"token": "<value>"``
    style assignments (keeping the name) and ``sk-...`` keys.
    """
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, "***")
    text = _SECRET_PATTERNS[0].sub(lambda m: f"{m.group(1)} ***", text)
    text = _SECRET_PATTERNS[1].sub(lambda m: f"{m.group(1)}{m.group(2)}***", text)
    return _SECRET_PATTERNS[2].sub("***", text)


class Scrubber:
    """Replaces exact secret values by ``***`` in text and in JSON-like values (model replies,
    agent traces): the configured ``secrets`` and, when ``environment`` is true, the
    secret-named environment values as they are now. Exact values only (no patterns), so an
    answer is otherwise left as it is; longer values first, so no part of one is left over."""

    def __init__(self, secrets: Iterable[str] = (), *, environment: bool = True) -> None:
        found = {*secrets, *(env_secrets() if environment else ())} - {""}
        self.values: tuple[str, ...] = tuple(sorted(found, key=len, reverse=True))

    def text(self, text: str) -> str:
        """``text`` with every secret replaced (the same object when it holds none)."""
        for secret in self.values:
            if secret in text:
                text = text.replace(secret, "***")
        return text

    def value(self, value: Any) -> Any:
        """``value`` with every string inside it (mapping keys too) scrubbed, at any depth;
        mappings and sequences come back as dicts and lists, other values unchanged."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {
                (self.text(k) if isinstance(k, str) else k): self.value(v) for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return [self.value(item) for item in value]
        return value
