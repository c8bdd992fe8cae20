"""Saving an answer's final workspace before it is cleaned up (``workspace_output_mode``).

Each answer (question x answering model x replicate) that had a workspace is saved once, after
its last judge, to ``<workspace_output_dir>/<question>__<model>[__rep<n>]/``, with a record
of the save beside it (``<same name>.json``: who, the mode, the patterns, what was left out
and, in ``produced`` mode, what was deleted). ``full`` saves every entry the exclude patterns
keep; ``produced`` only the new and changed ones (compared with what the workspace held
before the run), after Karenina's default patterns (:data:`.workspace_tree.PRODUCED_EXCLUDES`).

Nothing outside the workspace is read or written: links are saved as links, pointing where
they resolved inside the workspace, and a link that resolves out of it is left out; FIFOs,
sockets and devices are left out; the save never goes into a workspace, nor replaces one. It
is built in a temporary directory beside its place and renamed there when complete (an older
save of the same name is replaced); a save that fails leaves nothing behind and raises
:class:`WorkspaceSaveError` naming the path, which errors that answer only.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import shutil
import stat
import threading
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pytest_karenina.pipeline.workspace_copy import (
    WorkspaceCopyCancelled,
    copy_file,
    register,
    remove_tree,
    special_kind,
    unregister,
)
from pytest_karenina.pipeline.workspace_tree import (
    PRODUCED_EXCLUDES,
    Entry,
    Seen,
    deleted,
    link_inside,
    unchanged,
    walk,
)

if TYPE_CHECKING:
    from pytest_karenina.config.verification import VerificationConfig

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
MAX_NAME = 80
"""Characters of a question id or model id kept in a folder name."""


class WorkspaceSaveError(RuntimeError):
    """A workspace could not be saved; the message names the path and why."""


@dataclass(frozen=True)
class OutputSettings:
    """Where and how the run saves final workspaces."""

    mode: Literal["full", "produced"]
    directory: Path
    exclude: tuple[str, ...] = ()

    @property
    def patterns(self) -> tuple[str, ...]:
        """The exclude patterns applied: the user's, after Karenina's defaults in
        ``produced`` mode."""
        return (*PRODUCED_EXCLUDES, *self.exclude) if self.mode == "produced" else self.exclude


def output_settings(config: VerificationConfig | None) -> OutputSettings | None:
    """The run's :class:`OutputSettings`; None when it saves no workspace."""
    if config is None or config.workspace_output_mode == "none":
        return None
    if config.workspace_output_dir is None:
        return None  # refused when the config is validated
    mode: Literal["full", "produced"] = config.workspace_output_mode
    patterns = tuple(config.workspace_output_exclude_patterns)
    return OutputSettings(mode, Path(config.workspace_output_dir), patterns)


def folder_name(question_id: str, model: str, replicate: int | None) -> str:
    """``<question>__<model>[__rep<n>]``; an id that is not a plain file name is made one,
    with a hash of the id so that two ids never share a folder."""
    parts = [_component(question_id), _component(model)]
    if replicate is not None:
        parts.append(f"rep{replicate}")
    return "__".join(parts)


def _component(text: str) -> str:
    safe = _UNSAFE.sub("_", text).strip("._")[:MAX_NAME]
    if safe == text:
        return safe
    return f"{safe or 'id'}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


@dataclass
class _Save:
    """One save under way: the tree being built and what it left out."""

    source: Path
    target: Path
    cancelled: threading.Event
    files: int = 0
    left_out: list[str] = field(default_factory=list)
    dirs: list[tuple[Path, Path]] = field(default_factory=list)
    made: set[str] = field(default_factory=set)

    def add(self, entry: Entry) -> None:
        """Copy one entry (its directory exists)."""
        if self.cancelled.is_set():
            raise WorkspaceCopyCancelled("the run ended while the workspace was being saved")
        target = self.target / entry.rel
        if entry.kind == "dir":
            os.mkdir(target, 0o700)
            self.dirs.append((entry.path, target))
            self.made.add(entry.rel)
        elif entry.kind == "file":
            if copy_file(entry.path, target, self.cancelled):
                self.files += 1
            else:
                self.left_out.append(f"{entry.rel} (not a regular file any more)")
        elif entry.kind == "link":
            inside = link_inside(self.source, entry)
            if inside is None:
                self.left_out.append(f"{entry.rel} (a link out of the workspace)")
            else:
                os.symlink(inside, target)
        else:
            self.left_out.append(f"{entry.rel} ({special_kind(entry.mode)})")

    def parents(self, rel: str) -> None:
        """Make the directories above ``rel`` that the save lacks (``produced`` mode)."""
        parts = rel.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            above = "/".join(parts[:depth])
            if above not in self.made:
                os.mkdir(self.target / above, 0o700)
                self.dirs.append((self.source / above, self.target / above))
                self.made.add(above)

    def settle_dirs(self) -> None:
        """Directory modes and times last (a read-only directory is filled first), each
        kept writable by its owner so that a later save can replace it."""
        for source, target in reversed([(self.source, self.target), *self.dirs]):
            shutil.copystat(source, target, follow_symlinks=False)
            os.chmod(target, stat.S_IMODE(os.lstat(target).st_mode) | stat.S_IRWXU)


def save_workspace(
    workspace: Path,
    output: OutputSettings,
    folder: str,
    *,
    before: Mapping[str, Seen] | None = None,
    original: Path | None = None,
    root: Path | None = None,
    about: Mapping[str, Any] | None = None,
) -> Path:
    """Save ``workspace`` as ``folder`` under the output directory; its path.

    ``before``: what the workspace held before the run (``produced`` mode; None saves it
    whole). ``original``: the directory it is a copy of, which the save must neither go into
    nor replace, nor ``workspace`` itself; ``root``: the workspace root, which it must not
    replace; ``about``: who the workspace belongs to, for the record."""
    directory = output.directory.absolute()
    target = directory / folder
    workspaces = [workspace] if original is None else [workspace, original]
    _check_place(target, workspace, workspaces, [] if root is None else [root])
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WorkspaceSaveError(
            f"Could not save the workspace {workspace}: cannot make workspace_output_dir "
            f"{directory}: {_why(exc)}"
        ) from None
    _check_replaceable(target)
    temporary = directory / f".{folder}.{uuid.uuid4().hex[:12]}.tmp"
    entry = register(temporary, True, settled=False)  # a run cut short removes it
    try:
        os.mkdir(temporary, 0o700)
        save = _Save(workspace, temporary, entry.cancelled)
        gone = _fill(save, output, before)
        save.settle_dirs()
        _swap(temporary, target)
        record = {
            **(about or {}), "mode": output.mode, "workspace": str(workspace),
            "saved": str(target), "exclude_patterns": list(output.patterns),
            "files_saved": save.files, "left_out": save.left_out,
        }  # fmt: skip
        if gone is not None:
            record["deleted"] = gone
        try:
            _write_record(directory / f"{folder}.json", record)
        except OSError:
            remove_tree(target)  # no save without its record
            raise
    except (OSError, WorkspaceCopyCancelled) as exc:
        remove_tree(temporary)
        why = _why(exc).replace(str(temporary), str(target))
        raise WorkspaceSaveError(
            f"Could not save the workspace {workspace} to {target}: {why}"
        ) from None
    finally:
        entry.settled.set()
        unregister(temporary)
    return target


def _fill(
    save: _Save, output: OutputSettings, before: Mapping[str, Seen] | None
) -> list[str] | None:
    """Copy what the mode saves; the deleted entries in ``produced`` mode."""
    if output.mode == "full" or before is None:
        for entry in walk(save.source, output.patterns):
            _named(save.add, entry, save.target)
        return None
    now: set[str] = set()
    for entry in walk(save.source, output.patterns):
        now.add(entry.rel)
        if unchanged(entry, before.get(entry.rel)):
            continue
        save.parents(entry.rel)
        _named(save.add, entry, save.target)
    return deleted(before, now)


def _named(add: Any, entry: Entry, target: Path) -> None:
    try:
        add(entry)
    except OSError as exc:
        if exc.filename is None:  # the kernel copy calls name no file
            exc.filename = str(target / entry.rel)
        raise


def _check_place(
    target: Path, workspace: Path, workspaces: Sequence[Path], others: Sequence[Path]
) -> None:
    """A save goes into none of ``workspaces`` and replaces none of them nor ``others``."""
    place = target.resolve()
    for directory in (*workspaces, *others):
        if directory.resolve().is_relative_to(place):
            raise WorkspaceSaveError(
                f"Could not save the workspace {workspace}: saving it to {target} would "
                f"replace {directory}; choose another workspace_output_dir"
            )
    for directory in workspaces:
        if place.is_relative_to(directory.resolve()):
            raise WorkspaceSaveError(
                f"Could not save the workspace {workspace}: {target} is inside the workspace "
                f"{directory}; choose a workspace_output_dir outside it"
            )


def _check_replaceable(target: Path) -> None:
    """Only an earlier save (a directory) is replaced."""
    try:
        mode = target.lstat().st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise WorkspaceSaveError(f"Could not save the workspace to {target}: {_why(exc)}") from None
    if not stat.S_ISDIR(mode):
        kind = "a symbolic link" if stat.S_ISLNK(mode) else (
            "a file" if stat.S_ISREG(mode) else special_kind(mode)
        )  # fmt: skip
        raise WorkspaceSaveError(
            f"Could not save the workspace to {target}: that is {kind}, not a saved workspace, "
            "and is not replaced (remove it or choose another workspace_output_dir)"
        )


def _swap(temporary: Path, target: Path) -> None:
    """Move the finished save to ``target``, replacing an older save there."""
    try:
        os.rename(temporary, target)  # absent, or an empty directory
        return
    except OSError as exc:
        if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY):
            raise
    old = target.with_name(f".{target.name}.{uuid.uuid4().hex[:12]}.old")
    os.rename(target, old)
    os.rename(temporary, target)
    remove_tree(old)


def _write_record(path: Path, record: Mapping[str, Any]) -> None:
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        with open(temporary, "x", encoding="utf-8") as stream:
            json.dump(record, stream, indent=2)
            stream.write("\n")
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror} ({exc.filename})" if exc.filename else exc.strerror
    return str(exc)
