"""What counts as a secret in model settings, and how settings are written without them.

Used when configs are dumped for artifacts (the export's ``verification_config``): field and
header names that look like credentials have their values masked, every header value is
masked (``api-key``, ``X-Custom-Auth``...: a header's name rarely says it is a secret),
``user:password@`` leaves URLs and credential-like query parameters (``?token=``, ``key``,
``sig``...) are masked. :func:`setting_secrets` and :func:`url_secrets` list the values
themselves, so that text quoting them (a reply, an error) can be scrubbed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote_plus, urlsplit, urlunsplit

MASK = "**********"
"""What pydantic writes for a SecretStr in a JSON dump (and so every Karenina preset)."""

_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_SECRET_ANYWHERE = ("apikey", "secret", "password", "passwd", "authorization", "bearer", "cookie")
_SECRET_LAST = {"key", "token", "auth", "credential", "credentials", *_SECRET_ANYWHERE}
# Query parameters also carry credentials under short names (signed URLs: ``sig``,
# ``X-Amz-Signature``; ``?jwt=``, ``?pwd=``): judged by the last word, as for ``key``.
_PARAM_LAST = {"sig", "signature", "jwt", "pwd", "pass", "session"}
MIN_FOUND_SECRET = 4
"""Values shorter than this, found in settings (a header, a URL's credentials, a secret-named
setting), are masked in dumps but not scrubbed from text: a name can misjudge (``X-Auth-Mode:
on``), and scrubbing ``on`` from every reply would garble answers."""
_TOKEN_LIKE = re.compile(r"^(?=.*[A-Za-z])(?=.*[0-9])\S{16,}$")


def is_secret_name(name: str) -> bool:
    """Whether a field or header name looks like it holds a credential, judged by its words.

    ``api_key``, ``apiKey``, ``X-Auth-Token``, ``Authorization`` are; ``max_tokens``,
    ``token_limit`` are not (``key``/``token``/``auth`` count only as the last word).
    """
    words = [word.lower() for word in _WORD.findall(name)] or [""]
    joined = "".join(words)
    return words[-1] in _SECRET_LAST or any(word in joined for word in _SECRET_ANYWHERE)


def is_secret_param(name: str) -> bool:
    """Whether a URL query parameter looks like it carries a credential (case-insensitive):
    a secret name (``token``, ``key``, ``api_key``, ``access_token``, ``password``...) or one
    of ``sig``, ``signature``, ``jwt``, ``pwd``, ``pass``, ``session`` as its last word."""
    words = [word.lower() for word in _WORD.findall(name)] or [""]
    return is_secret_name(name) or words[-1] in _PARAM_LAST


def without_userinfo(url: str) -> str:
    """``url`` without ``user:password@`` (unchanged when it has none)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def _masked_params(text: str, mask: str) -> str:
    pairs = text.split("&")
    for index, pair in enumerate(pairs):
        name, equals, value = pair.partition("=")
        if equals and value and is_secret_param(unquote_plus(name)):
            pairs[index] = f"{name}={mask}"
    return "&".join(pairs)


def masked_url(url: str, mask: str = MASK) -> str:
    """``url`` without ``user:password@`` and with the value of every credential-like query
    (or fragment) parameter replaced by ``mask``; the rest is left exactly as written."""
    parts = urlsplit(url)
    query, fragment = _masked_params(parts.query, mask), _masked_params(parts.fragment, mask)
    if "@" not in parts.netloc and (query, fragment) == (parts.query, parts.fragment):
        return url
    netloc = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=netloc, query=query, fragment=fragment))


def url_secrets(url: str) -> list[str]:
    """The credentials in ``url``, as written and percent-decoded: its ``user:password`` and
    password (a user alone, as in ``https://TOKEN@host``, counts whole) and the values of
    credential-like query and fragment parameters (values shorter than
    :data:`MIN_FOUND_SECRET` left out)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found: list[str] = []
    userinfo = parts.netloc.rpartition("@")[0]
    if userinfo:
        found += [userinfo, userinfo.partition(":")[2]]
    for text in (parts.query, parts.fragment):
        for pair in text.split("&"):
            name, equals, value = pair.partition("=")
            if equals and is_secret_param(unquote_plus(name)):
                found.append(value)
    return [value for value in _with_decoded(found) if len(value) >= MIN_FOUND_SECRET]


def _with_decoded(values: list[str]) -> list[str]:
    decoded = [unquote_plus(value) for value in values]
    return list(dict.fromkeys(v for v in [*values, *decoded] if v))


def _credential_parts(value: str) -> list[str]:
    """``value`` and, for ``Bearer <token>``-like values, the token alone."""
    scheme, _, rest = value.strip().partition(" ")
    return [value, rest.strip()] if rest.strip() and scheme.isalpha() else [value]


def setting_secrets(value: Any, *, secret: bool = False, headers: bool = False) -> list[str]:
    """The secret values inside model settings (``extra_kwargs``), at any depth: strings
    under a secret-looking name (``api_key``, ``client_secret``...), header values whose name
    looks secret (``X-Custom-Auth``, ``Authorization``) or whose value looks like a token (16
    or more characters, letters and digits, no space), and URL credentials. Values shorter
    than :data:`MIN_FOUND_SECRET` are left out."""
    found: list[str] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            name = str(key)
            named = secret or is_secret_name(name)
            if headers and isinstance(item, str) and not named and _TOKEN_LIKE.match(item):
                named = True
            inner = headers or "headers" in name.lower()
            found += setting_secrets(item, secret=named, headers=inner)
    elif isinstance(value, list | tuple):
        for item in value:
            found += setting_secrets(item, secret=secret, headers=headers)
    elif isinstance(value, str):
        if secret:
            found += _credential_parts(value)
        if "://" in value:
            found += url_secrets(value)
    return _with_decoded([v for v in found if len(v) >= MIN_FOUND_SECRET])


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
        return masked_url(value)
    return value
