"""The files a run or a merge writes: checks before anything is written there, and writing
through a temporary file.

Every output (``--karenina-results``, ``--karenina-baseline-update``, ``pytest-karenina
merge OUT`` and its ``--baseline-update``) replaces its path when it is written. Pointing one
at an input of the same run (a checkpoint, a shard being merged, the baseline being read), at
another kind of file, or at something that is not a regular file (a device node, a FIFO, a
directory) would destroy it, so each of those is refused by name before anything runs.
"""

from __future__ import annotations

import contextlib
import os
import stat
import uuid
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TextIO

import pytest

EXPORT_MARKERS = (b'"format_version"', b'"job_summary"')
"""Either appears near the start of an export (format 2.2 or an older one)."""
BASELINE_MARKERS = (b'"pytest-karenina-baseline"',)
HEAD_BYTES = 4096


class OutputPathError(ValueError):
    """An output path that must not be written; the message names the option and the path."""


def check_output_path(
    path: Path,
    flag: str,
    inputs: Iterable[tuple[Path, str]],
    kind: str,
    markers: Sequence[bytes],
) -> None:
    """Raise :class:`OutputPathError` when ``path`` must not be replaced by an output.

    ``inputs``: the run's inputs with what each is (``"a checkpoint of this run"``); the
    output must be none of them, nor a directory, a path under a file, or anything but a
    regular file. An existing file must be empty or a ``kind`` (one of ``markers`` in its
    first bytes): the output replaces it.
    """
    resolved = path.resolve()
    for source, what in inputs:
        if _same_file(resolved, source):
            raise OutputPathError(f"{flag} {path}: that is {what}")
    for parent in resolved.parents:
        if parent.exists() and not parent.is_dir():
            raise OutputPathError(f"{flag} {path}: {parent} is a file, not a directory")
    try:
        mode = resolved.stat().st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise OutputPathError(f"{flag} {path}: cannot check the path ({exc})") from None
    if stat.S_ISDIR(mode):
        raise OutputPathError(f"{flag} {path}: that is a directory; name a file in it")
    if not stat.S_ISREG(mode):
        raise OutputPathError(
            f"{flag} {path}: that is {_file_kind(mode)}, not a regular file; the output would "
            "replace it (choose another path)"
        )
    if not _looks_like(resolved, markers):
        raise OutputPathError(
            f"{flag} {path}: the file exists and is not a {kind}; the output would replace it "
            "(delete it or choose another path)"
        )


def check_results_path(path: Path, checkpoints: Sequence[Path]) -> None:
    """Raise :class:`pytest.UsageError` when the run must not write its export to ``path``."""
    inputs = [(checkpoint, "a checkpoint of this run") for checkpoint in checkpoints]
    try:
        check_output_path(path, "--karenina-results", inputs, "results export", EXPORT_MARKERS)
    except OutputPathError as exc:
        raise pytest.UsageError(str(exc)) from None


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[TextIO]:
    """A UTF-8 text stream whose content replaces ``path`` when the block ends normally.

    It is a new file beside ``path`` with a name no other writer uses (created exclusively),
    synced, then renamed over ``path``: readers see the old file or the new one, never a
    part, and concurrent writers never share a temporary file. It is removed when the block
    raises. The file gets the permissions a new file gets (the umask applies).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    while True:
        temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")
        try:
            descriptor = os.open(temporary, flags, 0o666)
            break
        except FileExistsError:  # pragma: no cover - a clash of 48 random bits
            continue
    try:
        with open(descriptor, "w", encoding="utf-8", newline="") as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def _same_file(resolved: Path, other: Path) -> bool:
    try:
        return os.path.samefile(resolved, other)  # hard links and symlinks too
    except OSError:
        return resolved == other.resolve()


def _file_kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
    ):  # fmt: skip
        if test(mode):
            return name
    return "a special file"


def _looks_like(path: Path, markers: Sequence[bytes]) -> bool:
    try:
        with path.open("rb") as file:
            head = file.read(HEAD_BYTES)
    except OSError:
        return False
    return not head.strip() or any(marker in head for marker in markers)
