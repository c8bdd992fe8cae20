"""What a workspace holds, for saving it: its entries under the exclude patterns, the links
that stay inside it, and how it differs from what it held before the run.

Exclude patterns are globs (``fnmatch``, case-sensitive) matched against an entry's path
relative to the workspace (``/``-separated) and against its name; a pattern ending in ``/``
matches directories only, and leaves out everything under them. Nothing here follows a link,
opens a file through one or opens anything but a regular file (a FIFO would block).
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import BinaryIO, Literal

Kind = Literal["dir", "file", "link", "special"]
CHUNK = 1024 * 1024
PRODUCED_EXCLUDES = (
    ".venv/", "venv/", "__pycache__/", ".pytest_cache/", ".ruff_cache/", ".mypy_cache/",
    ".ipynb_checkpoints/", "*.pyc",
)  # fmt: skip
"""Left out of ``produced`` saves before the user's patterns (Karenina's defaults)."""
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass(frozen=True)
class Entry:
    """One entry of a workspace: its relative path, where it is, what it is."""

    rel: str
    path: Path
    kind: Kind
    mode: int
    size: int


@dataclass(frozen=True)
class Seen:
    """What an entry was before the run: a link's target, a file's size and either its
    SHA-256 (a snapshot) or the file to compare it with (the original of a copy)."""

    kind: Kind
    size: int = 0
    target: str | None = None
    digest: str | None = None
    original: Path | None = None


def kind_of(mode: int) -> Kind:
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "dir"
    return "file" if stat.S_ISREG(mode) else "special"


def excluded(rel: str, is_dir: bool, patterns: Sequence[str]) -> bool:
    """Whether ``patterns`` leave out the entry at ``rel`` (see the module docstring)."""
    name = rel.rsplit("/", 1)[-1]
    for pattern in patterns:
        glob = pattern.rstrip("/")
        if pattern.endswith("/") and not is_dir:
            continue
        if glob and (fnmatchcase(rel, glob) or fnmatchcase(name, glob)):
            return True
    return False


def walk(root: Path, patterns: Sequence[str]) -> Iterator[Entry]:
    """Every entry under ``root`` that ``patterns`` keep, each directory before its contents
    (sorted by name); links are entries, never followed."""
    pending = [(root, "")]
    while pending:
        directory, prefix = pending.pop()
        with os.scandir(directory) as scan:
            found = sorted(scan, key=lambda item: item.name)
        below: list[tuple[Path, str]] = []
        for item in found:
            info = item.stat(follow_symlinks=False)
            rel, kind = prefix + item.name, kind_of(info.st_mode)
            if excluded(rel, kind == "dir", patterns):
                continue
            yield Entry(rel, Path(item.path), kind, info.st_mode, info.st_size)
            if kind == "dir":
                below.append((Path(item.path), rel + "/"))
        pending.extend(reversed(below))  # popped last in, first out: name order


def link_inside(root: Path, entry: Entry) -> str | None:
    """The target to save for the link ``entry``: where it resolves in the workspace (every
    link on the way followed), relative to the link's directory; None when it resolves out
    of the workspace. A saved link so never leads out of the saved copy."""
    base = Path(os.path.realpath(root))
    real = Path(os.path.realpath(base / entry.rel))
    if not real.is_relative_to(base):
        return None
    return os.path.relpath(real, (base / entry.rel).parent)


def digest(path: Path) -> str:
    """SHA-256 of a regular file (OSError when it is not one any more)."""
    found = hashlib.sha256()
    with _regular(path) as handle:
        for block in iter(lambda: handle.read(CHUNK), b""):
            found.update(block)
    return found.hexdigest()


def same_content(left: Path, right: Path) -> bool:
    """Whether two regular files hold the same bytes."""
    with _regular(left) as one, _regular(right) as two:
        while True:
            first, second = one.read(CHUNK), two.read(CHUNK)
            if first != second:
                return False
            if not first:
                return True


def _regular(path: Path) -> BinaryIO:
    handle = os.open(path, _READ)
    if not stat.S_ISREG(os.fstat(handle).st_mode):
        os.close(handle)
        raise OSError(errno.EINVAL, "not a regular file any more", str(path))
    return os.fdopen(handle, "rb")


def snapshot(root: Path, patterns: Sequence[str], *, hashed: bool) -> dict[str, Seen]:
    """What ``root`` holds now: with ``hashed``, each file's SHA-256 (a workspace the agent
    will change in place); without, the file itself, compared later (the original of a
    copy, which the run never changes)."""
    seen: dict[str, Seen] = {}
    for entry in walk(root, patterns):
        if entry.kind == "link":
            seen[entry.rel] = Seen("link", target=os.readlink(entry.path))
        elif entry.kind == "file":
            found = digest(entry.path) if hashed else None
            seen[entry.rel] = Seen("file", entry.size, digest=found,
                                   original=None if hashed else entry.path)  # fmt: skip
        else:
            seen[entry.rel] = Seen(entry.kind)
    return seen


def unchanged(entry: Entry, before: Seen | None) -> bool:
    """Whether ``entry`` is what the workspace held there before the run."""
    if before is None or before.kind != entry.kind:
        return False
    if entry.kind == "link":
        return os.readlink(entry.path) == before.target
    if entry.kind != "file":
        return True
    if entry.size != before.size:
        return False
    if before.digest is not None:
        return digest(entry.path) == before.digest
    return before.original is not None and same_content(entry.path, before.original)


def deleted(before: Mapping[str, Seen], now: set[str]) -> list[str]:
    """The entries gone since the run started, outermost only (a directory ends in ``/``);
    special files are never saved, so never missed (a copy leaves them out)."""
    gone = sorted(rel for rel, seen in before.items() if rel not in now and seen.kind != "special")
    found: list[str] = []
    for rel in gone:
        if any(rel.startswith(parent) for parent in found if parent.endswith("/")):
            continue
        found.append(rel + "/" if before[rel].kind == "dir" else rel)
    return found
