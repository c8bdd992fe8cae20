"""Regular expressions written by benchmark authors, matched with a time limit.

A pattern such as ``(a|aa)+$`` backtracks exponentially, and Python's ``re`` does so inside
C while holding the GIL: no thread, signal or Ctrl-C gets through until it returns. Patterns
from templates (``self.regex``, ``RegexMatch``, ``TraceRegex``) and regex rubric traits are
therefore matched with the ``regex`` package, which checks a timeout as it goes and releases
the GIL while matching. Its default (version 0) syntax is that of ``re``; flags are passed
by name. A pattern that only ``re`` accepts is matched by ``re``, without a limit; one that only
``regex`` accepts is an error, as it was.

The limit is the time left in the enclosing template time limit, or
:data:`DEFAULT_TEMPLATE_TIME_LIMIT` outside one; past it :class:`TemplateTimeout` says which
pattern ran on how much text.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import regex

from pytest_karenina.templates.time_limit import (
    DEFAULT_TEMPLATE_TIME_LIMIT,
    TemplateTimeout,
    seconds_left,
)

_FLAG_NAMES = ("ASCII", "IGNORECASE", "LOCALE", "MULTILINE", "DOTALL", "VERBOSE", "UNICODE")


def _regex_flags(re_flags: int) -> int:
    """The ``regex`` package's value for a combination of ``re`` flags (the bits differ)."""
    value = 0
    for name in _FLAG_NAMES:
        if re_flags & getattr(re, name):
            value |= getattr(regex, name)
    return value


@functools.lru_cache(maxsize=1024)
def _compiled(pattern: str, re_flags: int) -> Any:
    """The pattern compiled by ``regex`` (or by ``re`` where ``regex`` refuses it).

    ``re`` compiles it first: a pattern ``re`` rejects raises ``re.error`` as it always did,
    although ``regex`` would accept some of them. No ``warnings.catch_warnings`` here: it
    swaps the process's warning filters, and pipeline threads would race pytest's own.
    """
    fallback = re.compile(pattern, re_flags)
    try:
        return regex.compile(pattern, _regex_flags(re_flags))
    except (regex.error, ValueError, Warning):  # a warning turned into an error: re's pattern
        return fallback


def _limit(seconds: float | None) -> float:
    if seconds is not None:
        return seconds
    left = seconds_left()
    if left is None:
        return DEFAULT_TEMPLATE_TIME_LIMIT
    # Short of the block's own limit, so that the error names the pattern.
    return max(left - max(0.1 * left, 0.2), 0.001)


def _timeout(pattern: str, text: str, seconds: float) -> TemplateTimeout:
    return TemplateTimeout(
        f"the regex {pattern!r} did not finish within {seconds:.2g}s on {len(text)} characters "
        "(a pattern that backtracks catastrophically?)"
    )


def search(pattern: str, text: str, flags: int = 0, *, seconds: float | None = None) -> bool:
    """Whether ``pattern`` is found in ``text`` (``re.search`` semantics, ``re`` flags)."""
    compiled = _compiled(pattern, flags)
    if isinstance(compiled, re.Pattern):
        return compiled.search(text) is not None
    limit = _limit(seconds)
    try:
        return compiled.search(text, concurrent=True, timeout=limit) is not None
    except TimeoutError:
        raise _timeout(pattern, text, limit) from None


def findall(pattern: str, text: str, flags: int = 0, *, seconds: float | None = None) -> list[Any]:
    """Every match of ``pattern`` in ``text`` (``re.findall`` semantics: groups when the
    pattern has them)."""
    compiled = _compiled(pattern, flags)
    if isinstance(compiled, re.Pattern):
        return compiled.findall(text)
    limit = _limit(seconds)
    try:
        found: list[Any] = compiled.findall(text, concurrent=True, timeout=limit)
    except TimeoutError:
        raise _timeout(pattern, text, limit) from None
    return found
