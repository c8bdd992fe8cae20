"""``ExportWriter``: stream results into a format-2.2 export that survives interruptions.

The export's header needs the final counts, so the file itself cannot be written as results
arrive. Instead every result is appended to a sidecar file as it arrives and the export is
assembled from the sidecar at the end.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

from pytest_karenina.results.export import (
    default_karenina_version,
    export_header,
    is_successful,
    result_line,
    write_export,
)
from pytest_karenina.results.result import VerificationResult
from pytest_karenina.results.text import encodable

SIDECAR_SUFFIX = ".results.jsonl"
_SIDECAR_MARK = "pytest_karenina_export_sidecar"
_ITEM_PREFIX = '{"pytest_karenina_item":'
"""How an item record's sidecar line starts (a result's line starts with another key)."""


def sidecar_path(path: str | os.PathLike[str]) -> Path:
    """Where the writer for ``path`` keeps its sidecar: ``<path>.results.jsonl``."""
    target = Path(path)
    return target.with_name(target.name + SIDECAR_SUFFIX)


class ExportWriter:
    """Write results to ``path`` in export format 2.2, incrementally and crash-safely.

    Contract:

    * Opening creates (or truncates) the sidecar ``<path>.results.jsonl``. Its first line holds
      the run's header data (job id, versions, configs, start time); each :meth:`add` appends
      one result line and flushes, so every result added before a crash is on disk.
    * :meth:`close` assembles ``<path>`` from the sidecar: it writes ``<path>.tmp``, then
      atomically replaces ``<path>`` and deletes the sidecar. ``<path>`` is therefore either
      absent, the previous file, or a complete valid export, never half written.
      ``complete=False`` (the default when the ``with`` block exits with an exception, e.g.
      KeyboardInterrupt) records ``job_summary.is_complete = false``.
    * After a hard kill (no :meth:`close`), :meth:`recover` builds the export from the sidecar
      left behind, skipping a torn last line.
    * :meth:`add` is thread-safe; it accepts a :class:`VerificationResult` or its JSON-native
      ``model_dump(mode="json")`` dict. Closing twice is a no-op; adding after close raises.
    * With ``run`` (a pytest run's settings), :meth:`add_item` records one test item; the
      export then ends with ``pytest_karenina: {run, items}``. Items are not results: they
      count nowhere in ``job_summary``.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        job_id: str | None = None,
        karenina_version: str | None = None,
        verification_config: Mapping[str, Any] | None = None,
        rubric_definition: Mapping[str, Any] | None = None,
        start_time: float | None = None,
        run: Mapping[str, Any] | None = None,
    ) -> None:
        self.path = Path(path)
        self.sidecar = sidecar_path(self.path)
        self._record = {
            _SIDECAR_MARK: 1,
            "job_id": job_id or str(uuid.uuid4()),
            "karenina_version": karenina_version or default_karenina_version(),
            "verification_config": verification_config,
            "rubric_definition": rubric_definition,
            "start_time": time.time() if start_time is None else start_time,
            "run": dict(run) if run is not None else None,
        }
        self._lock = threading.Lock()
        self._total = 0
        self._successful = 0
        self._torn = False  # the last write may have stopped mid-line
        self._has_torn_lines = False  # so close() must skip invalid lines
        self._closed = False
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: TextIO = self.sidecar.open("w", encoding="utf-8", newline="")
        self._file.write(json.dumps(self._record, ensure_ascii=False) + "\n")
        self._file.flush()

    @property
    def count(self) -> int:
        """How many results were added."""
        return self._total

    def add(self, result: VerificationResult | Mapping[str, Any]) -> None:
        """Append one result to the sidecar and flush it."""
        self._append(result_line(result) + "\n", result)

    def add_item(self, record: Mapping[str, Any]) -> None:
        """Append one test item's record (JSON-native) to the sidecar and flush it."""
        line = json.dumps(record, ensure_ascii=False)
        if encodable(line) is not line:
            line = json.dumps(record, ensure_ascii=True)
        self._append(f"{_ITEM_PREFIX}{line}}}\n", None)

    def _append(self, line: str, result: VerificationResult | Mapping[str, Any] | None) -> None:
        with self._lock:
            if self._closed:
                raise RuntimeError(f"export writer for {self.path} is closed")
            if self._torn:
                # Terminate the partial line of an interrupted write so this one stays whole.
                line = "\n" + line
            try:
                self._file.write(line)
                self._file.flush()
            except BaseException:
                self._torn = self._has_torn_lines = True
                raise
            self._torn = False
            if result is not None:
                self._total += 1
                self._successful += is_successful(result)

    def close(
        self,
        *,
        complete: bool = True,
        end_time: float | None = None,
        scenario_results: Iterable[Any] | None = None,
        run: Mapping[str, Any] | None = None,
        errors: Iterable[tuple[str, str]] | None = None,
    ) -> Path:
        """Assemble the export at :attr:`path` and remove the sidecar; returns the path.
        ``run`` replaces the run settings given when the writer opened; ``scenario_results``
        and ``errors`` (failed scenario executions) follow the results."""
        with self._lock:
            if self._closed:
                return self.path
            self._closed = True
            self._file.close()
            counts = None if self._has_torn_lines else (self._total, self._successful)
        _assemble(
            self.sidecar, self.path, complete, end_time, scenario_results, counts, run, errors
        )
        return self.path

    def __enter__(self) -> ExportWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close(complete=exc_type is None)

    @staticmethod
    def recover(
        path: str | os.PathLike[str],
        *,
        end_time: float | None = None,
        target: str | os.PathLike[str] | None = None,
    ) -> Path | None:
        """Build the export at ``target`` (default ``path``) from the sidecar an unclosed
        writer for ``path`` left behind.

        Returns the export's path, or None when there is no sidecar. The export is marked
        incomplete.
        """
        sidecar = sidecar_path(path)
        if not sidecar.exists():
            return None
        written = Path(target) if target is not None else Path(path)
        _assemble(sidecar, written, False, end_time, None, None)
        return written


def _assemble(
    sidecar: Path,
    target: Path,
    complete: bool,
    end_time: float | None,
    scenario_results: Iterable[Any] | None,
    counts: tuple[int, int] | None,
    run: Mapping[str, Any] | None = None,
    errors: Iterable[tuple[str, str]] | None = None,
) -> None:
    """Write ``target`` from ``sidecar``; ``counts`` None means lines must be checked;
    ``run``: the run settings, instead of those the sidecar opened with."""
    with sidecar.open(encoding="utf-8", newline="") as source:
        record = json.loads(source.readline())
        items: list[str] = []
        lines: Iterable[str] = _without_items(_lines(source), items, checked=counts is None)
        if counts is None:
            checked = list(_parsed(lines))
            lines = [line for line, _ in checked]
            counts = (len(checked), sum(is_successful(data) for _, data in checked))
        header = export_header(
            total=counts[0],
            successful=counts[1],
            job_id=record.get("job_id"),
            karenina_version=record.get("karenina_version"),
            verification_config=record.get("verification_config"),
            rubric_definition=record.get("rubric_definition"),
            start_time=record.get("start_time"),
            end_time=time.time() if end_time is None else end_time,
            is_complete=complete,
        )
        temporary = target.with_name(target.name + ".tmp")
        with temporary.open("w", encoding="utf-8", newline="") as out:
            run = record.get("run") if run is None else run
            write_export(
                out,
                header,
                lines,
                scenario_results,
                (run, items) if run is not None else None,
                errors=errors,
            )
            out.flush()
            os.fsync(out.fileno())
    os.replace(temporary, target)
    sidecar.unlink()


def _without_items(lines: Iterable[str], items: list[str], *, checked: bool) -> Iterator[str]:
    """The result lines of ``lines``; item records go to ``items`` (whole JSON only when
    ``checked``: a torn write may have left one unreadable)."""
    for line in lines:
        if not line.startswith(_ITEM_PREFIX):
            yield line
            continue
        record = line[len(_ITEM_PREFIX) : -1]
        if checked:
            try:
                json.loads(record)
            except ValueError:
                continue
        items.append(record)


def _lines(source: TextIO) -> Iterator[str]:
    """The non-blank lines left in ``source``, without their newline."""
    for raw in source:
        line = raw.rstrip("\n")
        if line:
            yield line


def _parsed(lines: Iterable[str]) -> Iterator[tuple[str, Any]]:
    """``(line, parsed JSON)`` for every line that is whole JSON (torn lines are skipped)."""
    for line in lines:
        try:
            data = json.loads(line)
        except ValueError:
            continue
        yield line, data
