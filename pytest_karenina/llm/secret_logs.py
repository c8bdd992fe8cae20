"""Keeping configured secrets out of log records, whoever logs them.

HTTP clients log the URLs they call (``httpx``: ``HTTP Request: POST <url>``; the MCP client:
``Connecting to StreamableHTTP endpoint: <url>``), so a credential in a URL (an MCP server's
``?token=``, ``user:password@``) would reach a ``--log-file``, pytest's captured-log sections
and so JUnit and the HTML report. :func:`scrub_logs` wraps the process's log record factory
once: from then on every record whose message (or exception text) holds one of the values
given so far has them replaced by ``***``. Records without a secret are left untouched.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any

_lock = threading.Lock()
_secrets: tuple[str, ...] = ()
_installed = False


def scrub_logs(secrets: Iterable[str]) -> None:
    """Replace these values by ``***`` in every log record made from now on, in this
    process (values of earlier calls stay scrubbed too)."""
    global _secrets, _installed
    with _lock:
        merged = {*_secrets, *secrets} - {""}
        _secrets = tuple(sorted(merged, key=len, reverse=True))
        if not _installed and _secrets:
            logging.setLogRecordFactory(_scrubbing(logging.getLogRecordFactory()))
            _installed = True


def _scrubbing(make: Callable[..., logging.LogRecord]) -> Callable[..., logging.LogRecord]:
    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = make(*args, **kwargs)
        secrets = _secrets
        if secrets:
            _scrub_record(record, secrets)
        return record

    return factory


def _replaced(text: str, secrets: tuple[str, ...]) -> str:
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, "***")
    return text


def _scrub_record(record: logging.LogRecord, secrets: tuple[str, ...]) -> None:
    try:
        message = record.getMessage()
    except Exception:  # a bad format: logging reports it when the record is handled
        return
    clean = _replaced(message, secrets)
    if clean is not message:
        record.msg, record.args = clean, None
    if record.exc_info and record.exc_info[0] is not None:
        # Formatters use a record's exc_text when it is set: give them the scrubbed one.
        text = logging.Formatter().formatException(record.exc_info)
        scrubbed = _replaced(text, secrets)
        if scrubbed is not text:
            record.exc_text = scrubbed
