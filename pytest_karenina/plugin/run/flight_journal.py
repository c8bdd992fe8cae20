"""Which pipelines a crashed xdist worker had in flight, and what becomes of its items.

With look-ahead a worker runs many pipelines at once while pytest's loop reports one item
at a time, so the item xdist names as "running" when a worker dies is rarely the one that
killed it. Each worker therefore appends to its own journal, in a directory the controller
makes: ``+<nodeid>`` when a pipeline starts and ``-<nodeid>`` when it ends, each line one
unbuffered ``write`` (it survives the process dying; not the machine). When the worker dies
the controller reads the journal and splits the worker's unfinished items
(:func:`split_crashed`): pipelines in flight are the suspects, reported as
``error:worker_crashed`` and never run again; items already reported keep their reports;
the rest had nothing to do with it and run on another worker.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

JOURNAL_SUFFIX = ".inflight"


class FlightJournal:
    """A worker's append-only record of its pipelines starting and ending."""

    def __init__(self, directory: Path, worker_id: str) -> None:
        self.path = directory / f"{worker_id}{JOURNAL_SUFFIX}"
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

    def _write(self, mark: str, nodeid: str) -> None:
        if self._fd is None:
            return
        try:  # one write per line: O_APPEND keeps concurrent threads' lines whole
            os.write(self._fd, f"{mark}{json.dumps(nodeid)}\n".encode())
        except OSError:
            self.close()  # a full disk costs the crash attribution, never the run

    def started(self, nodeid: str) -> None:
        self._write("+", nodeid)

    def ended(self, nodeid: str) -> None:
        self._write("-", nodeid)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def in_flight(path: Path | None) -> list[str] | None:
    """Node ids started and not ended in the journal at ``path``, in start order; None when
    there is no journal (the worker ran elsewhere, or never started a pipeline)."""
    if path is None:
        return None
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    running: dict[str, None] = {}
    for line in text.splitlines():
        try:
            nodeid = json.loads(line[1:])
        except ValueError:
            continue  # a line cut short by the crash
        if line.startswith("+"):
            running[nodeid] = None
        elif line.startswith("-"):
            running.pop(nodeid, None)
    return list(running)


@dataclass(frozen=True)
class CrashSplit:
    """A dead worker's unfinished items: ``crashed`` are reported as crashes, ``rerun`` go
    to another worker, and items already reported are in neither."""

    crashed: list[str]
    rerun: list[str]


def split_crashed(
    pending: Sequence[str], flying: Iterable[str] | None, reported: set[str]
) -> CrashSplit:
    """Split ``pending`` (the worker's unfinished items, in run order).

    Pipelines in flight are the suspects. With none in flight (the crash came from pytest's
    own loop, or nothing is known), the item pytest was running, the first one not yet
    reported, is, as xdist itself would have it.
    """
    suspects = set(flying or ())
    unreported = [nodeid for nodeid in pending if nodeid not in reported]
    crashed = [nodeid for nodeid in unreported if nodeid in suspects]
    if not crashed and unreported:
        crashed = unreported[:1]
    return CrashSplit(crashed, [nodeid for nodeid in unreported if nodeid not in crashed])


class JournalDirectory:
    """The controller's directory of worker journals: made when first asked for (under
    ``parent``, else the system's temporary directory), removed when the session ends."""

    def __init__(self, parent: Path | None = None) -> None:
        self._parent = parent
        self._path: Path | None = None

    @property
    def path(self) -> Path:
        if self._path is None:
            self._path = Path(tempfile.mkdtemp(prefix="karenina-flight-", dir=self._parent))
        return self._path

    def journal_of(self, worker_id: str) -> Path | None:
        """Where ``worker_id`` journals (None: no worker was ever told of the directory)."""
        if self._path is None:
            return None
        return self._path / f"{worker_id}{JOURNAL_SUFFIX}"

    def remove(self) -> None:
        if self._path is not None:
            shutil.rmtree(self._path, ignore_errors=True)
