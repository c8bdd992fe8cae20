"""Log records of the pipelines, each under its own item.

Pipelines run in background threads while pytest reports items one by one, and pytest's
log capture takes every record of the process during an item's phase: a warning of question
7's pipeline would show under whichever item was in setup. :class:`PipelineLogs` keeps the
records of pipeline threads apart, by the item each thread is working on, and
:data:`NOT_FROM_PIPELINES` keeps them out of pytest's per-item capture. The item adds its
own records to its setup report (``Captured log setup``), where it waits for its pipeline.
Records often quote a question id, a model's reply or a judge's quote: each line is made
terminal-safe (:func:`~..safe_text.terminal_safe_lines`).
"""

from __future__ import annotations

import logging
import threading

import pytest

from pytest_karenina.plugin.safe_text import terminal_safe_lines

PIPELINE_THREAD_PREFIX = "karenina"
"""Names of the threads that run pipelines or their calls start with this."""


class _NotFromPipelines(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.threadName or "").startswith(PIPELINE_THREAD_PREFIX)


NOT_FROM_PIPELINES = _NotFromPipelines()
"""A filter for pytest's capture handlers: records of pipeline threads do not belong to the
item in progress."""


CAPTURE_HANDLER = "LogCaptureHandler"
"""The class name of pytest's per-phase capture handlers (reports and ``caplog``). Matched by
name, not imported: the live-log and log-file handlers keep every record."""


def shield_capture_handlers() -> None:
    """Keep pipeline records out of pytest's per-item log capture. pytest installs its
    capture handlers on the root logger per phase, so call this at the start of each."""
    for handler in logging.getLogger().handlers:
        if type(handler).__name__ == CAPTURE_HANDLER:
            handler.addFilter(NOT_FROM_PIPELINES)


class PipelineLogs(logging.Handler):
    """Formatted log records of pipeline threads, by the node id of the item they work on.

    Installed on the root logger while the prefetcher runs; records of threads that are not
    working on an item are left to the other handlers.
    """

    def __init__(self, config: pytest.Config) -> None:
        super().__init__()
        self.setFormatter(
            logging.Formatter(config.getini("log_format"), config.getini("log_date_format"))
        )
        self._current = threading.local()
        self._lock = threading.Lock()
        self._records: dict[str, list[str]] = {}

    def working_on(self, nodeid: str | None) -> None:
        """Records of the calling thread belong to ``nodeid`` from now on (None: to none)."""
        self._current.nodeid = nodeid

    def emit(self, record: logging.LogRecord) -> None:
        nodeid = getattr(self._current, "nodeid", None)
        if nodeid is None:
            return
        text = terminal_safe_lines(self.format(record))  # a model's or benchmark's text
        with self._lock:
            self._records.setdefault(nodeid, []).append(text)

    def take(self, nodeid: str) -> str:
        """The records of ``nodeid``'s pipeline so far, one per line, handed over."""
        with self._lock:
            return "\n".join(self._records.pop(nodeid, ()))

    def install(self) -> None:
        logging.getLogger().addHandler(self)

    def uninstall(self) -> None:
        logging.getLogger().removeHandler(self)
