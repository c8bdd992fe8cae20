"""SIGTERM ends a run the way Ctrl-C does.

CI cancellations, ``timeout`` and ``docker stop`` send SIGTERM, whose default action kills the
process on the spot: no export, no JUnit file, no HTML report. Raised as KeyboardInterrupt in
the main thread instead, it makes pytest stop the session in order: finished results are
written (the export marked incomplete) and pytest exits with code 2 (interrupted). On the way
out, the working copies of workspaces that unfinished pipelines still use are removed.
"""

from __future__ import annotations

import logging
import signal
import threading
from types import FrameType

import pytest


def interrupt_on_sigterm(config: pytest.Config) -> None:
    """For the life of ``config``, turn SIGTERM into KeyboardInterrupt; a handler someone
    else installed is left alone, and the previous one comes back at the end."""
    if threading.current_thread() is not threading.main_thread():
        return  # signal handlers can only be set from the main thread
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return

    def stop(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt("SIGTERM")

    previous = signal.signal(signal.SIGTERM, stop)

    def restore() -> None:
        signal.signal(signal.SIGTERM, previous)

    config.add_cleanup(restore)


def remove_workspaces_in_use() -> None:
    """Remove the workspace copies and fresh directories pipelines still use when the run
    ends early (SIGTERM, Ctrl-C, ``-x``), and cancel copies under way; a failure is logged."""
    from pytest_karenina.pipeline.workspace_copy import discard_live_workspaces

    for problem in discard_live_workspaces():
        logging.getLogger("pytest_karenina.plugin").warning("%s", problem)
