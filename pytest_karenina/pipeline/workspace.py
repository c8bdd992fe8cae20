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
refused. ``workspace_copy`` and ``workspace_cleanup`` are read from the contexts of the
answer's judges (their fields of those names), not kept here.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

logger = logging.getLogger("pytest_karenina.pipeline")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class Workspace:
    """A resolved workspace: where the agent works, and whether it may be deleted after."""

    path: Path
    is_copy: bool
    root: Path


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
) -> Workspace:
    """The workspace of one answer; raises RuntimeError when there is no root, when the
    question's directory is missing, or when its path leaves the root."""
    if root is None:
        raise RuntimeError(
            "workspace_root must be set when agentic_parsing is True "
            "(--karenina-workspace-root, or run_verification(..., workspace_root=...))"
        )
    base = root.resolve()
    if question_path:
        source = (base / question_path).resolve()
        if not source.is_relative_to(base):
            raise RuntimeError(
                f"Question workspace {question_path!r} is outside the workspace root {base}"
            )
        if not source.is_dir():
            raise RuntimeError(
                f"Question workspace not found: {source} (workspace_root={base}, "
                f"question_workspace_path={question_path})"
            )
        if not copy:
            return Workspace(source, False, base)
        working = source.with_name(f"{source.name}_{_suffix(replicate)}")
        shutil.copytree(source, working, symlinks=True)
        return Workspace(working, True, base)
    name = _UNSAFE.sub("_", question_id).strip("_") or "question"
    working = base / f"{name}_{_suffix(replicate)}"
    working.mkdir(parents=True)
    return Workspace(working, True, base)


def cleanup_workspace(workspace: Workspace | None, enabled: bool) -> str | None:
    """Delete ``workspace`` if it is a copy and cleanup is on; a warning when that fails."""
    if workspace is None or not enabled or not workspace.is_copy:
        return None
    try:
        shutil.rmtree(workspace.path)
    except OSError as exc:
        message = f"Failed to clean up workspace {workspace.path}: {exc}"
        logger.warning("%s", message)
        return message
    return None


def prompt_path(workspace: Path, interface: str) -> str:
    """How the answering model is told where its workspace is: deep agents see it as the
    root of their file tools, other agents by its real path."""
    return "/" if interface == "langchain_deep_agents" else str(workspace)


class WorkspaceSettings(Protocol):
    """What a judge's context says about its workspace (a ``VerificationContext``)."""

    workspace_copy: bool
    workspace_cleanup: bool


class WorkspaceSlot:
    """The workspace of one answer group, resolved on first use (by GenerateAnswer) and
    shared by the group's judges; a resolution error is raised again for each of them."""

    def __init__(
        self,
        root: Path | None,
        question_id: str,
        question_path: str | None,
        *,
        replicate: int | None = None,
    ) -> None:
        self.root = root
        self.question_id = question_id
        self.question_path = question_path
        self.replicate = replicate
        self._users: list[WorkspaceSettings] = []
        self._workspace: Workspace | None = None
        self._error: str | None = None

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
                )  # fmt: skip
            except (RuntimeError, OSError) as exc:
                self._error = str(exc)
                raise RuntimeError(self._error) from None
        return self._workspace

    def release(self) -> str | None:
        """Clean up after the group's last judge, unless a judge's context turned
        ``workspace_cleanup`` off (read now, after its stages ran); a warning when that
        failed."""
        workspace, self._workspace = self._workspace, None
        users, self._users = self._users, []
        return cleanup_workspace(workspace, all(user.workspace_cleanup for user in users))
