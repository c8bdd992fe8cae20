"""Workspaces for agentic evaluation (seed 004, sections 2 and 5).

A question may name a directory (``Question.workspace_path``) under the run's workspace root.
With ``workspace_copy`` (the default) the answering agent works on a copy of it, next to the
original, named ``<path>_run_<time>_pid<pid>_<random>[_rep<n>]``; without, on the original
itself. A question without one gets a fresh empty ``<question id>_run_...`` directory. The
random part keeps concurrent runs (threads, xdist workers) of one question apart.

The workspace is resolved once per *answer* (question x answering model x replicate), so
every judge of a shared answer investigates the files the answering agent left, and it is
removed after the last of those judges (when ``workspace_cleanup`` is on and it is a copy or
a fresh directory: an original is never deleted). A question path that leaves the root is
refused, and so is the root itself (``"."``: its copy would sit next to the root, outside
it). ``workspace_copy`` and ``workspace_cleanup`` are read from the contexts of the answer's
judges (their fields of those names), not kept here. How a copy is made, and how copies in
use are removed when a run is cut short: :mod:`.workspace_copy`. With ``workspace_output_mode``
the last judge saves the workspace before it is removed: :mod:`.workspace_save`.
"""

from __future__ import annotations

import logging
import os
import re
import stat
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pytest_karenina.pipeline.workspace_copy import (
    copy_tree,
    register,
    remove_tree,
    special_kind,
    unregister,
)
from pytest_karenina.pipeline.workspace_save import OutputSettings, folder_name, save_workspace
from pytest_karenina.pipeline.workspace_tree import Seen, snapshot

logger = logging.getLogger("pytest_karenina.pipeline")
SAVE_WORKSPACE = "save_workspace"
"""Artifact set on the last judge's context of an answer group: its FinalizeResult saves the
group's workspace (``workspace_output_mode``)."""
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class Workspace:
    """A resolved workspace: where the agent works, and whether it may be deleted after."""

    path: Path
    is_copy: bool
    root: Path
    skipped: tuple[str, ...] = ()
    """Entries of the original left out of the copy (FIFOs, sockets, devices)."""
    source: Path | None = None
    """The question's own directory (the original of a copy); None for a fresh directory."""


def _suffix(replicate: int | None) -> str:
    stamp = time.strftime("%Y%m%d%H%M%S")
    suffix = f"run_{stamp}_pid{os.getpid()}_{uuid.uuid4().hex[:8]}"
    return suffix if replicate is None else f"{suffix}_rep{replicate}"


def resolve_workspace(
    root: Path | None,
    question_id: str,
    question_path: str | None,
    *,
    replicate: int | None = None,
    copy: bool = True,
    cleanup: bool = True,
) -> Workspace:
    """The workspace of one answer; raises RuntimeError when there is no root, when the
    question's directory is missing, is the root itself or leaves the root, or when its copy
    fails (the partial copy removed). A copy or fresh directory stays registered as in use
    (removed at the end of an interrupted run when ``cleanup``) until it is cleaned up."""
    if root is None:
        raise RuntimeError(
            "workspace_root must be set for the answer's workspace (agentic_parsing, or "
            "agentic rubric traits that read it): --karenina-workspace-root, or "
            "run_verification(..., workspace_root=...)"
        )
    base = root.resolve()
    if question_path:
        source = (base / question_path).resolve()
        if not source.is_relative_to(base):
            raise RuntimeError(
                f"Question workspace {question_path!r} is outside the workspace root {base}"
            )
        if source == base:
            raise RuntimeError(
                f"Question workspace {question_path!r} is the workspace root {base} itself: "
                "name a directory under it"
            )
        if not source.is_dir():
            raise RuntimeError(
                f"Question workspace not found: {source} (workspace_root={base}, "
                f"question_workspace_path={question_path})"
            )
        if not copy:
            return Workspace(source, False, base, source=source)
        working = source.with_name(f"{source.name}_{_suffix(replicate)}")
        return _copied(source, working, base, cleanup)
    name = _UNSAFE.sub("_", question_id).strip("_") or "question"
    working = base / f"{name}_{_suffix(replicate)}"
    working.mkdir(parents=True)
    register(working, cleanup)
    return Workspace(working, True, base)


def _copied(source: Path, working: Path, base: Path, cleanup: bool) -> Workspace:
    working.mkdir(0o700)  # exclusive: never into an existing directory or through a link
    entry = register(working, cleanup, settled=False)
    try:
        skipped = copy_tree(source, working, entry.cancelled)
    except BaseException as exc:
        unregister(working)
        problem = remove_tree(working)
        if not isinstance(exc, Exception):
            raise
        removed = f"; {problem}" if problem else " (the partial copy was removed)"
        raise RuntimeError(
            f"Could not copy the question workspace {source} to {working}: "
            f"{type(exc).__name__}: {exc}{removed}"
        ) from None
    finally:
        entry.settled.set()
    if skipped:
        logger.warning("Left out of the copy of workspace %s: %s", source, ", ".join(skipped))
    return Workspace(working, True, base, tuple(skipped), source)


def cleanup_workspace(workspace: Workspace | None, enabled: bool) -> str | None:
    """Delete ``workspace`` if it is a copy and cleanup is on; a warning when that fails."""
    if workspace is None or not workspace.is_copy:
        return None
    unregister(workspace.path)
    if not enabled:
        return None
    message = remove_tree(workspace.path)
    if message is not None:
        logger.warning("%s", message)
    return message


def write_new_file(directory: Path, name: str, text: str) -> None:
    """Write ``text`` to a new file ``directory/name``, never through a link.

    A regular file of that name is replaced (unlinked first: its content stays with any
    other hard link to it); anything else there (a symbolic link, a directory, a FIFO)
    raises RuntimeError naming it. The file is created exclusively without following a
    link, so one that appears meanwhile is an error too."""
    path = directory / name
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None:
        if not stat.S_ISREG(mode):
            kind = (
                "a symbolic link" if stat.S_ISLNK(mode)
                else "a directory" if stat.S_ISDIR(mode) else special_kind(mode)
            )  # fmt: skip
            raise RuntimeError(f"{path} is {kind}; it is not written through or replaced")
        path.unlink()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(path, flags, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


def prompt_path(workspace: Path, interface: str) -> str:
    """How the answering model is told where its workspace is: deep agents see it as the
    root of their file tools, the Claude Code CLI as its working directory (``.``: the CLI
    names the real path itself; in the prompt, a copy's per-run name would change the run's
    replay key every run), other agents by its real path."""
    if interface == "langchain_deep_agents":
        return "/"
    return "." if interface == "claude_agent_sdk" else str(workspace)


class WorkspaceSettings(Protocol):
    """What a judge's context says about its workspace (a ``VerificationContext``)."""

    workspace_copy: bool
    workspace_cleanup: bool


class WorkspaceSlot:
    """The workspace of one answer group, resolved on first use (by GenerateAnswer) and
    shared by the group's judges; a resolution error is raised again for each of them.

    With ``output`` (``workspace_output_mode``), the last judge saves it (:meth:`save`) before
    it is cleaned up; in ``produced`` mode what it held before the run is recorded when it is
    resolved: nothing for a fresh directory, the original's entries for a copy (compared
    with the original when saving), each file's hash for a workspace used in place."""

    def __init__(
        self,
        root: Path | None,
        question_id: str,
        question_path: str | None,
        *,
        replicate: int | None = None,
        output: OutputSettings | None = None,
        model: str = "",
    ) -> None:
        self.root = root
        self.question_id = question_id
        self.question_path = question_path
        self.replicate = replicate
        self.output = output
        self.model = model
        self.saved: Path | None = None
        """Where :meth:`save` saved the workspace."""
        self._users: list[WorkspaceSettings] = []
        self._workspace: Workspace | None = None
        self._error: str | None = None
        self._before: dict[str, Seen] | None = None

    def get(self, settings: WorkspaceSettings) -> Workspace:
        """The group's workspace for a judge whose context is ``settings``: resolved on first
        use, a copy when that first context's ``workspace_copy`` is on."""
        if self._error is not None:
            raise RuntimeError(self._error)
        self._users.append(settings)
        if self._workspace is None:
            try:
                self._workspace = resolve_workspace(
                    self.root, self.question_id, self.question_path,
                    replicate=self.replicate, copy=settings.workspace_copy,
                    cleanup=settings.workspace_cleanup,
                )  # fmt: skip
            except (RuntimeError, OSError) as exc:
                self._error = str(exc)
                raise RuntimeError(self._error) from None
            self._record_before(self._workspace)
        return self._workspace

    def _record_before(self, workspace: Workspace) -> None:
        output = self.output
        if output is None or output.mode != "produced":
            return
        try:
            if workspace.source is None:
                self._before = {}
            elif workspace.is_copy:
                self._before = snapshot(workspace.source, output.patterns, hashed=False)
            else:
                self._before = snapshot(workspace.path, output.patterns, hashed=True)
        except OSError as exc:
            self._error = (
                f"Could not record what the workspace {workspace.path} holds before the run "
                f"(workspace_output_mode='produced'): {exc}"
            )
            raise RuntimeError(self._error) from None

    def save(self) -> Path | None:
        """Save the workspace under the run's ``workspace_output_dir`` (once; later calls
        return the same path); None when there is nothing to save (no output setting, or
        no workspace was resolved). Raises :class:`WorkspaceSaveError` naming the path."""
        workspace, output = self._workspace, self.output
        if workspace is None or output is None or self.saved is not None:
            return self.saved
        about = {"question_id": self.question_id, "answering_model": self.model,
                 "replicate": self.replicate,
                 "original": str(workspace.source) if workspace.source else None}  # fmt: skip
        self.saved = save_workspace(
            workspace.path, output, folder_name(self.question_id, self.model, self.replicate),
            before=self._before, original=workspace.source, root=workspace.root, about=about,
        )  # fmt: skip
        return self.saved

    def release(self) -> str | None:
        """Clean up after the group's last judge, unless a judge's context turned
        ``workspace_cleanup`` off (read now, after its stages ran); the group's warning:
        entries left out of the copy, a cleanup that failed."""
        workspace, self._workspace = self._workspace, None
        users, self._users = self._users, []
        failed = cleanup_workspace(workspace, all(user.workspace_cleanup for user in users))
        notes = [failed] if failed else []
        if workspace is not None and workspace.skipped:
            left = ", ".join(workspace.skipped)
            notes.insert(0, f"Left out of the workspace copy (not regular files): {left}")
        return "; ".join(notes) or None
