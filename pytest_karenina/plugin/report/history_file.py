"""The run history file (``--karenina-history``): one JSON line per run, appended.

A record holds the run's time, git commit and branch, settings digest, and per answering
model its items in columns (``ids``, a ``verdict`` string of one mark per item, ``score``,
``cost``, ``seconds``, the non-pass ``category`` by position): a run of 5,000 questions is
one line that parses in a few milliseconds.

The file is only ever appended to (one ``write`` under an exclusive ``flock`` on the file,
ending a torn last line first), except when pruning is asked for, which rewrites it
atomically and keeps every line it cannot judge (damaged ones, other benchmarks', newer
formats'). Reading never fails on content: a line that is not a record of this benchmark
in a format this version reads is a :class:`Problem` naming the file and line.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

if sys.platform != "win32":
    import fcntl

FORMAT = "pytest-karenina-history"
VERSION = 1
MARKS = {"p": "pass", "f": "fail", "e": "error", "s": "skipped"}
"""A verdict mark and what it stands for."""


@dataclass(frozen=True, slots=True)
class Problem:
    """A line of the history file that reading skipped, and why."""

    path: Path
    line: int
    why: str

    def __str__(self) -> str:
        where = f" line {self.line}" if self.line else ""  # 0: the file as a whole
        return f"{self.path.name}{where}: {self.why}"


@dataclass(slots=True)
class ModelColumns:
    """One answering model's items in one run, column by column."""

    ids: list[str]
    verdict: str
    score: list[float | None]
    cost: list[float | None] | None
    seconds: list[float]
    category: dict[str, str] = field(default_factory=dict)
    _index: dict[str, int] | None = None

    def position(self, key: str) -> int | None:
        """Where ``key`` is in the columns (the index is built on first use)."""
        if self._index is None:
            self._index = {name: at for at, name in enumerate(self.ids)}
        return self._index.get(key)


@dataclass(slots=True)
class HistoryRun:
    """One run of the history (several shard records of one run joined)."""

    time: str
    commit: str | None
    branch: str | None
    settings: str
    models: dict[str, ModelColumns]
    lines: list[int]
    """The line numbers of its records."""
    shard: tuple[int, int] | None = None
    shards: set[int] = field(default_factory=set)

    @property
    def short_commit(self) -> str:
        return (self.commit or "")[:8] or "(no commit)"


@dataclass
class HistoryRead:
    """The runs of one benchmark in a history file, oldest first, and the lines skipped."""

    runs: list[HistoryRun] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def _columns(data: Any) -> ModelColumns:
    if not isinstance(data, dict):
        raise TypeError("a model's items must be an object")
    ids, verdict = data.get("ids"), data.get("verdict")
    if not isinstance(ids, list) or not isinstance(verdict, str) or len(ids) != len(verdict):
        raise TypeError('"ids" and "verdict" must be a list and a string of one length')
    score, seconds, cost = data.get("score"), data.get("seconds"), data.get("cost")
    if not isinstance(score, list) or not isinstance(seconds, list):
        raise TypeError('"score" and "seconds" must be lists')
    if len(score) != len(ids) or len(seconds) != len(ids):
        raise TypeError('"score" and "seconds" must have one entry per item')
    if cost is not None and (not isinstance(cost, list) or len(cost) != len(ids)):
        raise TypeError('"cost" must be null or a list with one entry per item')
    category = data.get("category") or {}
    if not isinstance(category, dict):
        raise TypeError('"category" must be an object')
    return ModelColumns(ids, verdict, score, cost, seconds, category)


def history_run(data: Mapping[str, Any], line: int) -> HistoryRun:
    models = data.get("models")
    if not isinstance(models, dict):
        raise TypeError('no "models" object')
    shard = data.get("shard")
    return HistoryRun(
        time=str(data.get("time") or ""),
        commit=data.get("commit") if isinstance(data.get("commit"), str) else None,
        branch=data.get("branch") if isinstance(data.get("branch"), str) else None,
        settings=str(data.get("settings") or ""),
        models={str(name): _columns(columns) for name, columns in models.items()},
        lines=[line],
        shard=(int(shard[0]), int(shard[1]))
        if isinstance(shard, list) and len(shard) == 2
        else None,
    )


def _benchmark_name(benchmark: Sequence[str]) -> str:
    return ", ".join(benchmark) or "(no checkpoint)"


def _join(runs: list[HistoryRun], run: HistoryRun) -> None:
    """Append ``run``, or fold it into the last run when both are shards of one run (the
    same commit, settings and shard count, a shard index not seen yet)."""
    last = runs[-1] if runs else None
    shard = run.shard
    if (
        shard is not None and last is not None and last.shard is not None
        and last.shard[1] == shard[1] and shard[0] not in last.shards
        and (last.commit, last.settings) == (run.commit, run.settings)
    ):  # fmt: skip
        last.shards.add(shard[0])
        last.lines += run.lines
        for name, columns in run.models.items():
            found = last.models.get(name)
            if found is None:
                last.models[name] = columns
                continue
            offset = len(found.ids)
            found.ids += columns.ids
            found.verdict += columns.verdict
            found.score += columns.score
            found.seconds += columns.seconds
            found.cost = (
                None if found.cost is None or columns.cost is None else found.cost + columns.cost
            )
            found.category.update({str(int(k) + offset): v for k, v in columns.category.items()})
            found._index = None
        return
    if shard is not None:
        run.shards = {shard[0]}
    runs.append(run)


def parse_history(content: bytes, path: Path, benchmark: Sequence[str]) -> HistoryRead:
    """The runs of ``benchmark`` (its checkpoints' file names, sorted) in ``content``."""
    read = HistoryRead()
    lines = content.split(b"\n")
    torn = len(lines) - 1  # the last piece: a torn append when not empty
    wanted = list(benchmark)
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            if number - 1 == torn:
                continue  # an append cut short: the next append ends it
            read.problems.append(Problem(path, number, f"not JSON ({exc})"))
            continue
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            read.problems.append(Problem(path, number, "not a pytest-karenina history record"))
            continue
        version = data.get("version")
        if not isinstance(version, int) or version > VERSION:
            read.problems.append(Problem(
                path, number, f"format version {version!r}, newer than this pytest-karenina "
                f"reads ({VERSION}): upgrade pytest-karenina to read it",
            ))  # fmt: skip
            continue
        if data.get("benchmark") != wanted:
            other = data.get("benchmark")
            name = _benchmark_name(other) if isinstance(other, list) else repr(other)
            read.problems.append(Problem(
                path, number, f"a run of another benchmark ({name}, not {_benchmark_name(wanted)})"
            ))  # fmt: skip
            continue
        try:
            _join(read.runs, history_run(data, number))
        except (TypeError, ValueError) as exc:
            read.problems.append(Problem(path, number, f"a damaged record ({exc})"))
    return read


def read_history(path: Path, benchmark: Sequence[str]) -> HistoryRead:
    """:func:`parse_history` of the file (a missing file has no runs; one that cannot be
    read is one problem, line 0)."""
    try:
        content = path.read_bytes()
    except FileNotFoundError:
        return HistoryRead()
    except OSError as exc:
        return HistoryRead(
            problems=[Problem(path, 0, f"cannot be read ({type(exc).__name__}: {exc})")]
        )
    return parse_history(content, path, benchmark)


def dump_record(record: Mapping[str, Any]) -> bytes:
    """One record as one line (compact JSON, a newline at the end)."""
    return orjson.dumps(record) + b"\n"


@contextmanager
def _locked(path: Path) -> Iterator[int]:
    """An appending descriptor of ``path`` under an exclusive lock; reopened when pruning
    replaced the file while this one waited for the lock."""
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            if sys.platform != "win32":
                fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                yield fd
                return
        finally:
            os.close(fd)  # releases the lock


def _read_at(fd: int, offset: int, size: int) -> bytes:
    """``size`` bytes from ``offset`` (``os.pread`` is not on every platform; appends go to
    the end whatever the position)."""
    os.lseek(fd, offset, os.SEEK_SET)
    chunks, left = [], size
    while left:
        chunk = os.read(fd, left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def append_record(path: Path, record: Mapping[str, Any]) -> None:
    """Append ``record`` as one line in one write (OSError when it cannot be written)."""
    line = dump_record(record)
    with _locked(path) as fd:
        size = os.fstat(fd).st_size
        if size and _read_at(fd, size - 1, 1) != b"\n":
            line = b"\n" + line  # a torn last line would fuse with this record
        written = 0
        while written < len(line):
            written += os.write(fd, line[written:])


def prune_history(path: Path, benchmark: Sequence[str], keep: int) -> int:
    """Keep the last ``keep`` runs of ``benchmark`` (the shard records of one run count as
    one) and every other line as it is (damaged lines, other benchmarks' and newer formats'
    records, a torn last line); returns how many lines were removed."""
    with _locked(path) as fd:
        size = os.fstat(fd).st_size
        content = _read_at(fd, 0, size) if size else b""
        runs = parse_history(content, path, benchmark).runs
        drop = {number for run in runs[: max(len(runs) - keep, 0)] for number in run.lines}
        if not drop:
            return 0
        pieces = content.split(b"\n")
        ended = [raw + b"\n" for raw in pieces[:-1]] + [pieces[-1]]  # a torn end stays torn
        text = b"".join(raw for number, raw in enumerate(ended, 1) if number not in drop)
        temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            with open(temp, "wb") as out:
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temp, path)
        finally:
            temp.unlink(missing_ok=True)
        return len(drop)
