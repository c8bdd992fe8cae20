"""``workspace_output_dir`` checked before the run, like the run's other outputs.

Saved workspaces go into directories under it, so it must be a directory (or not exist
yet): not a checkpoint or any other file, not under a file, and not inside the workspace
of a question of the run (a saved copy would become part of the workspace the next run
copies). What only the run can tell (a save that fails, something in the way of one) errors
the answer concerned (:mod:`pytest_karenina.pipeline.workspace_save`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from pytest_karenina.checkpoint import CheckpointError, load_checkpoint
from pytest_karenina.config.verification import VerificationConfig
from pytest_karenina.plugin.options.settings import Settings


def check_workspace_output(settings: Settings, vconfig: VerificationConfig) -> None:
    """Raise :class:`pytest.UsageError` naming the setting and its path when the run must
    not save workspaces there."""
    given = vconfig.workspace_output_dir
    if vconfig.workspace_output_mode == "none" or given is None:
        return
    path = given.absolute()
    name = f"workspace_output_dir {given}"
    for checkpoint in settings.checkpoints:
        if _same(path, checkpoint):
            raise pytest.UsageError(f"{name}: that is a checkpoint of this run")
    resolved = path.resolve()
    for place in (resolved, *resolved.parents):
        try:
            mode = place.stat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            raise pytest.UsageError(f"{name}: cannot check {place} ({exc})") from None
        if not stat.S_ISDIR(mode):
            what = "that is" if place == resolved else f"{place} is"
            raise pytest.UsageError(f"{name}: {what} a file, not a directory")
        break  # an existing directory: its parents are directories too
    for question, workspace in _question_workspaces(settings):
        if resolved.is_relative_to(workspace):
            raise pytest.UsageError(
                f"{name}: that is inside the workspace of question {question!r} ({workspace}); "
                "saved workspaces would become part of it (choose a directory outside it)"
            )


def _question_workspaces(settings: Settings) -> list[tuple[str, Path]]:
    """Each question's workspace directory (``workspace_path`` under the root), resolved; a
    checkpoint that does not load is left to collection, which reports it."""
    found: list[tuple[str, Path]] = []
    for checkpoint in settings.checkpoints:
        try:
            benchmark = load_checkpoint(checkpoint)
        except (CheckpointError, OSError):
            continue
        root = (settings.workspace_root or checkpoint.parent).resolve()
        for question in benchmark.questions:
            if question.workspace_path:
                found.append((question.id, (root / question.workspace_path).resolve()))
    return found


def _same(path: Path, other: Path) -> bool:
    try:
        return os.path.samefile(path, other)
    except OSError:
        return path.resolve() == other.resolve()
