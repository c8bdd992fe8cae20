"""Copying a question's workspace, and the working directories a process has in use.

What a copy holds: directories, regular files and symbolic links (copied as links, never
followed). The holes of a sparse file stay holes: only its data extents are copied
(``SEEK_DATA``/``SEEK_HOLE``), so a 300 MB file of zeros costs no disk. FIFOs, sockets and
device nodes are left out and named in a warning (opening a FIFO blocks, reading
``/dev/zero`` never ends). A copy that fails (a full disk, an unreadable file) or is
cancelled is removed before the error is raised: no partial copy stays next to the original.

Every working directory (a copy or a fresh directory) is registered from its creation until
it is released. :func:`discard_live_workspaces`, called when a run ends (the plugin calls it
at the end of the session, also after Ctrl-C or SIGTERM), cancels the copies under way and
removes the registered directories that cleanup would have removed.
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
import stat
import threading
from dataclasses import dataclass, field
from pathlib import Path

logger = logging.getLogger("pytest_karenina.pipeline")
CHUNK = 8 * 1024 * 1024
"""Bytes copied per call: a cancelled copy stops within one chunk."""
SETTLE_SECONDS = 10.0
"""How long :func:`discard_live_workspaces` waits for a cancelled copy to remove itself."""
_NO_KERNEL_COPY = {errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EPERM}
_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))  # fmt: skip


class WorkspaceCopyCancelled(RuntimeError):
    """The run ended while the workspace was being copied."""


@dataclass(eq=False)
class LiveWorkspace:
    """A working directory in use: removed at the end of the run when ``removable``."""

    path: Path
    removable: bool
    cancelled: threading.Event = field(default_factory=threading.Event)
    settled: threading.Event = field(default_factory=threading.Event)


_lock = threading.Lock()
_live: dict[Path, LiveWorkspace] = {}


def register(path: Path, removable: bool, *, settled: bool = True) -> LiveWorkspace:
    """Record ``path`` as in use; ``settled=False`` while it is still being copied."""
    entry = LiveWorkspace(path, removable)
    if settled:
        entry.settled.set()
    with _lock:
        _live[path] = entry
    return entry


def unregister(path: Path) -> None:
    """``path`` is no longer in use (removed, or kept on purpose)."""
    with _lock:
        _live.pop(path, None)


def live_workspaces() -> list[Path]:
    """The working directories registered now."""
    with _lock:
        return list(_live)


def discard_live_workspaces() -> list[str]:
    """Cancel the copies under way and remove every registered working directory whose
    cleanup is on; the directories that could not be removed, as messages."""
    with _lock:
        entries = list(_live.values())
        _live.clear()
    for entry in entries:
        entry.cancelled.set()
    problems: list[str] = []
    for entry in entries:
        entry.settled.wait(SETTLE_SECONDS)  # a cancelled copy removes itself
        if entry.removable:
            problem = remove_tree(entry.path)
            if problem is not None:
                problems.append(problem)
    return problems


def remove_tree(path: Path) -> str | None:
    """Remove ``path`` (already gone is fine); a message when that failed."""
    try:
        shutil.rmtree(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"Failed to clean up workspace {path}: {exc}"
    return None


def special_kind(mode: int) -> str:
    """What a non-regular, non-directory, non-link file is, for messages."""
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def copy_tree(source: Path, target: Path, cancelled: threading.Event) -> list[str]:
    """Copy the directory ``source`` into ``target``, which must exist and be empty; the
    entries left out, as ``"<relative path> (<kind>)"``. Raises OSError, or
    WorkspaceCopyCancelled when ``cancelled`` is set."""
    skipped: list[str] = []
    finished: list[tuple[Path, Path]] = []
    pending = [(source, target)]
    while pending:
        src_dir, dst_dir = pending.pop()
        finished.append((src_dir, dst_dir))
        with os.scandir(src_dir) as scan:
            entries = list(scan)
        for entry in entries:
            if cancelled.is_set():
                raise WorkspaceCopyCancelled(f"the copy of {source} was cancelled")
            src = Path(entry.path)
            try:
                copied = _copy_entry(entry, src, dst_dir / entry.name, pending, cancelled)
            except OSError as exc:
                if exc.filename is None:  # the kernel copy calls name no file
                    exc.filename = str(src)
                raise
            if not copied:
                kind = special_kind(entry.stat(follow_symlinks=False).st_mode)
                skipped.append(f"{src.relative_to(source)} ({kind})")
    for src_dir, dst_dir in reversed(finished):  # modes last: a read-only directory is filled
        shutil.copystat(src_dir, dst_dir)
    return skipped


def _copy_entry(
    entry: os.DirEntry[str],
    src: Path,
    dst: Path,
    pending: list[tuple[Path, Path]],
    cancelled: threading.Event,
) -> bool:
    """Copy one directory entry (a directory's contents come later, from ``pending``);
    False when it is not a directory, a regular file or a link."""
    if entry.is_symlink():
        os.symlink(os.readlink(src), dst)
    elif entry.is_dir(follow_symlinks=False):
        os.mkdir(dst, 0o700)
        pending.append((src, dst))
    else:
        return entry.is_file(follow_symlinks=False) and copy_file(src, dst, cancelled)
    return True


def copy_file(source: Path, target: Path, cancelled: threading.Event) -> bool:
    """Copy a regular file, keeping its holes; False (nothing created) when ``source`` is
    not a regular file any more (never opened through a link, never blocked on a FIFO)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    fd_in = os.open(source, flags)
    try:
        info = os.fstat(fd_in)
        if not stat.S_ISREG(info.st_mode):
            return False
        out = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd_out = os.open(target, out, 0o600)
        try:
            for start, end in data_extents(fd_in, info.st_size):
                copy_range(fd_in, fd_out, start, end, cancelled)
            os.ftruncate(fd_out, info.st_size)  # a trailing hole
        finally:
            os.close(fd_out)
    finally:
        os.close(fd_in)
    shutil.copystat(source, target, follow_symlinks=False)
    return True


def data_extents(fd: int, size: int) -> list[tuple[int, int]]:
    """The ``[start, end)`` ranges of ``fd`` that hold data (the whole file where the
    filesystem cannot tell holes apart)."""
    seek_data, seek_hole = getattr(os, "SEEK_DATA", None), getattr(os, "SEEK_HOLE", None)
    if seek_data is None or seek_hole is None:
        return [(0, size)] if size else []
    extents: list[tuple[int, int]] = []
    offset = 0
    while offset < size:
        try:
            start = os.lseek(fd, offset, seek_data)
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # nothing but a hole from offset on
                break
            if exc.errno not in (errno.EINVAL, errno.EOPNOTSUPP):
                raise
            extents.append((offset, size))  # no hole support: the rest as data
            break
        end = min(os.lseek(fd, start, seek_hole), size)
        if end <= start:
            break
        extents.append((start, end))
        offset = end
    return extents


def copy_range(fd_in: int, fd_out: int, start: int, end: int, cancelled: threading.Event) -> None:
    """Copy bytes ``[start, end)`` to the same offsets, in the kernel where it can."""
    position = start
    kernel = hasattr(os, "copy_file_range")
    while position < end:
        if cancelled.is_set():
            raise WorkspaceCopyCancelled("the workspace copy was cancelled")
        count = min(CHUNK, end - position)
        if kernel:
            try:
                done = os.copy_file_range(fd_in, fd_out, count, position, position)
            except OSError as exc:
                if exc.errno not in _NO_KERNEL_COPY:
                    raise
                kernel = False
                continue
        else:
            data = os.pread(fd_in, count, position)
            done = os.pwrite(fd_out, data, position) if data else 0
        if done == 0:  # the file shrank meanwhile
            return
        position += done
