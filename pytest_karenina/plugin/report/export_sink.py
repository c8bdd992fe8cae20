"""The run's ``--karenina-results`` export, written so that a failing write costs only itself.

A full disk, a file system gone read-only or a path that vanished must not stop the run, nor
the JUnit file and the HTML report written after it: the first failure is remembered, every
result that could not be written is counted, writing goes on (the disk may free up), the
export says it is incomplete, and the session reports it (a warning line, a non-zero exit: the
lost-export gate of :mod:`..gates.completeness`).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.plugin.report.statements import Line
from pytest_karenina.results.writer import ExportWriter, sidecar_path

if sys.platform != "win32":
    import fcntl


class ExportSink:
    """An :class:`ExportWriter` that never raises ``OSError``: see :attr:`problem`."""

    def __init__(
        self,
        path: Path,
        verification_config: Mapping[str, Any],
        run: Mapping[str, Any] | None = None,
    ) -> None:
        self.path = path
        self.problem: str | None = None
        self.lost = 0
        self._writer: ExportWriter | None = None
        self.recovered: Path | None = None
        self._lock = _ExclusiveRun(path)  # before recovering: a live run's sidecar is not ours
        try:
            self.recovered = _recover_earlier_run(path)
            self._writer = ExportWriter(path, verification_config=verification_config, run=run)
        except OSError as exc:
            self._fail(exc)

    def add(self, results: Iterable[Mapping[str, Any]]) -> None:
        for result in results:
            if self._writer is None:
                self.lost += 1
                continue
            try:
                self._writer.add(result)
            except OSError as exc:
                self.lost += 1
                self._fail(exc)

    def add_item(self, record: Mapping[str, Any]) -> None:
        """Record one test item (see :func:`~.item_record.item_record`)."""
        if self._writer is None:
            return
        try:
            self._writer.add_item(record)
        except OSError as exc:
            self._fail(exc)

    def close(
        self,
        *,
        complete: bool,
        run: Mapping[str, Any] | None = None,
        scenario_results: Sequence[Mapping[str, Any]] | None = None,
        errors: list[tuple[str, str]] | None = None,
    ) -> None:
        """Close the export; ``scenario_results`` and ``errors`` (the scenario items') follow
        its results."""
        try:
            if self._writer is not None:
                self._writer.close(
                    complete=complete and self.problem is None, run=run,
                    scenario_results=scenario_results, errors=errors,
                )  # fmt: skip
        except OSError as exc:
            self._fail(exc)
        finally:
            self._lock.release()

    def _fail(self, exc: OSError) -> None:
        if self.problem is None:  # the first failure says why; later ones are counted
            self.problem = f"{type(exc).__name__}: {exc}"

    def failure(self) -> str | None:
        """What the terminal says of a failed export (None when nothing failed); the
        lost-export gate fails the run then (:class:`~..gates.completeness.LostExportGate`)."""
        if self.problem is None:
            return None
        lost = f"; {self.lost} results not written" if self.lost else ""
        return f"karenina: the export to {self.path} failed ({self.problem}){lost}"

    def report_lines(self) -> list[Line]:
        """What else the terminal should say: an earlier run's results recovered."""
        if self.recovered is None:
            return []
        return [
            Line(
                f"karenina: an earlier run to {self.path.name} did not finish; its results are "
                f"in {self.recovered}",
                red=True,
            )
        ]


class _ExclusiveRun:
    """An exclusive lock on ``<path>.lock`` for the life of a run: a second run writing the
    same export would overwrite this one's sidecar, and both would end without an export."""

    def __init__(self, path: Path) -> None:
        self.lock_path = path.with_name(path.name + ".lock")
        self._fd: int | None = None
        if sys.platform == "win32":  # no flock: runs there are not told apart
            return
        try:
            self.lock_path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            return  # reported by the writer, which meets the same problem
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise pytest.UsageError(
                f"--karenina-results {path}: another run is writing this export now; "
                "give this run another path"
            ) from None
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            self.lock_path.unlink(missing_ok=True)
            os.close(self._fd)
            self._fd = None


def _recover_earlier_run(path: Path) -> Path | None:
    """An unfinished earlier run's results into ``<stem>.recovered-<time><suffix>`` before this
    run's writer truncates its sidecar (None when there was none)."""
    if not sidecar_path(path).exists():
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return ExportWriter.recover(
        path, target=path.with_name(f"{path.stem}.recovered-{stamp}{path.suffix}")
    )
