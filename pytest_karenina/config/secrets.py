"""What counts as a secret in model settings, and how settings are written without them.

Used when configs are dumped for artifacts (the export's ``verification_config``): field and
header names that look like credentials have their values masked, every header value is
masked (``api-key``, ``X-Custom-Auth``...: a header's name rarely says it is a secret), and
``user:password@`` leaves URLs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

MASK = "**********"
"""What pydantic writes for a SecretStr in a JSON dump (and so every Karenina preset)."""

_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_SECRET_ANYWHERE = ("apikey", "secret", "password", "passwd", "authorization", "bearer", "cookie")
_SECRET_LAST = {"key", "token", "auth", "credential", "credentials", *_SECRET_ANYWHERE}


def is_secret_name(name: str) -> bool:
    """Whether a field or header name looks like it holds a credential, judged by its words.

    ``api_key``, ``apiKey``, ``X-Auth-Token``, ``Authorization`` are; ``max_tokens``,
    ``token_limit`` are not (``key``/``token``/``auth`` count only as the last word).
    """
    words = [word.lower() for word in _WORD.findall(name)] or [""]
    joined = "".join(words)
    return words[-1] in _SECRET_LAST or any(word in joined for word in _SECRET_ANYWHERE)


def without_userinfo(url: str) -> str:
    """``url`` without ``user:password@`` (unchanged when it has none)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def masked_settings(value: Any, *, headers: bool = False) -> Any:
    """``value`` (model settings such as ``extra_kwargs``) with secret-named fields, every
    header value and URL credentials masked, at any depth."""
    if isinstance(value, Mapping):
        masked: dict[str, Any] = {}
        for key, item in value.items():
            name = str(key)
            if headers or is_secret_name(name):
                masked[name] = MASK if item is not None else None
            else:
                masked[name] = masked_settings(item, headers="headers" in name.lower())
        return masked
    if isinstance(value, list | tuple):
        return [masked_settings(item, headers=headers) for item in value]
    if isinstance(value, str) and "://" in value:
        return without_userinfo(value)
    return value
