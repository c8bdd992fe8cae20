"""Saving final workspaces (``workspace_output_mode``) on real files: what ``full`` and
``produced`` save, exclude patterns, links that lead out of the workspace, FIFOs, nested and
read-only directories, unchanged and deleted files; a save that cannot be written leaves
nothing behind and names the path; a save never goes into a workspace nor replaces one."""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.pipeline import workspace_copy
from pytest_karenina.pipeline.workspace import WorkspaceSlot
from pytest_karenina.pipeline.workspace_save import (
    OutputSettings,
    WorkspaceSaveError,
    folder_name,
    save_workspace,
)


@dataclass
class Settings:
    workspace_copy: bool = True
    workspace_cleanup: bool = True


@pytest.fixture(autouse=True)
def end_of_run() -> Iterator[None]:
    yield
    workspace_copy.discard_live_workspaces()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A workspace root holding a question's directory ``task`` and a secret beside it."""
    found = tmp_path / "root"
    task = found / "task"
    (task / "data" / "deep").mkdir(parents=True)
    (task / "input.txt").write_text("6 x 7\n")
    (task / "data" / "numbers.csv").write_text("1,2,3\n")
    (task / "data" / "deep" / "notes.md").write_text("# notes\n")
    (task / "old.txt").write_text("remove me\n")
    (task / "olddir").mkdir()
    (task / "olddir" / "inner.txt").write_text("gone too\n")
    (tmp_path / "secret.txt").write_text("never saved\n")
    return found


def tree(path: Path) -> dict[str, str]:
    """Every entry under ``path``: a file's text, a link's target, ``<dir>``."""
    found: dict[str, str] = {}
    for entry in sorted(path.rglob("*")):
        rel = entry.relative_to(path).as_posix()
        if entry.is_symlink():
            found[rel] = "-> " + os.readlink(entry)
        elif entry.is_dir():
            found[rel] = "<dir>"
        else:
            found[rel] = entry.read_text()
    return found


def record(saved: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(saved.with_name(saved.name + ".json").read_text())
    return data


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


def slot_for(root: Path, output: OutputSettings) -> WorkspaceSlot:
    return WorkspaceSlot(root, "q1", "task", output=output, model="answerer")


def agent_works(workspace: Path) -> None:
    """What an agent does: a new nested file, one changed (same size), one deleted, a new
    empty directory, a directory removed."""
    (workspace / "out" / "sub").mkdir(parents=True)
    (workspace / "out" / "sub" / "result.txt").write_text("42\n")
    (workspace / "input.txt").write_text("6 * 7\n")  # same size, other bytes
    (workspace / "old.txt").unlink()
    (workspace / "empty").mkdir()
    for entry in (workspace / "olddir").iterdir():
        entry.unlink()
    (workspace / "olddir").rmdir()


def test_full_saves_every_entry_nested_directories_too(root: Path, tmp_path: Path) -> None:
    output = OutputSettings("full", tmp_path / "saved")
    slot = slot_for(root, output)
    workspace = slot.get(Settings())
    agent_works(workspace.path)

    saved = slot.save()

    assert saved == tmp_path / "saved" / "q1__answerer"
    assert tree(saved) == {
        "data": "<dir>", "data/deep": "<dir>", "data/deep/notes.md": "# notes\n",
        "data/numbers.csv": "1,2,3\n", "empty": "<dir>", "input.txt": "6 * 7\n",
        "out": "<dir>", "out/sub": "<dir>", "out/sub/result.txt": "42\n",
    }  # fmt: skip
    about = record(saved)
    assert (about["mode"], about["question_id"], about["answering_model"]) == (
        "full", "q1", "answerer",
    )  # fmt: skip
    assert about["files_saved"] == 4 and about["left_out"] == [] and "deleted" not in about
    assert about["original"] == str(root / "task")
    assert slot.release() is None
    assert saved.is_dir() and not workspace.path.exists()  # the copy cleaned up, the save kept


def test_produced_saves_new_and_changed_entries_and_lists_the_deleted_ones(
    root: Path, tmp_path: Path
) -> None:
    output = OutputSettings("produced", tmp_path / "saved")
    slot = slot_for(root, output)
    workspace = slot.get(Settings())
    agent_works(workspace.path)
    (workspace.path / "__pycache__").mkdir()  # Karenina's default patterns apply
    (workspace.path / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"\0")

    saved = slot.save()

    assert saved is not None
    assert tree(saved) == {
        "empty": "<dir>", "input.txt": "6 * 7\n",
        "out": "<dir>", "out/sub": "<dir>", "out/sub/result.txt": "42\n",
    }  # fmt: skip
    about = record(saved)
    assert about["deleted"] == ["old.txt", "olddir/"]
    assert about["files_saved"] == 2
    assert "__pycache__/" in about["exclude_patterns"]


def test_produced_in_place_compares_with_the_hashes_taken_before_the_run(
    root: Path, tmp_path: Path
) -> None:
    output = OutputSettings("produced", tmp_path / "saved")
    slot = slot_for(root, output)
    workspace = slot.get(Settings(workspace_copy=False))
    assert workspace.path == root / "task"
    agent_works(workspace.path)

    saved = slot.save()

    assert saved is not None
    assert set(tree(saved)) == {"empty", "input.txt", "out", "out/sub", "out/sub/result.txt"}
    assert record(saved)["deleted"] == ["old.txt", "olddir/"]


def test_produced_saves_everything_of_a_fresh_directory(tmp_path: Path) -> None:
    output = OutputSettings("produced", tmp_path / "saved")
    slot = WorkspaceSlot(tmp_path, "urn:q:2", None, replicate=3, output=output, model="m")
    workspace = slot.get(Settings())
    (workspace.path / "a.txt").write_text("a")

    saved = slot.save()

    assert saved is not None and saved.name == f"{folder_name('urn:q:2', 'm', 3)}"
    assert saved.name.startswith("urn_q_2-") and saved.name.endswith("__m__rep3")
    assert tree(saved) == {"a.txt": "a"}
    assert record(saved)["deleted"] == []


def test_unchanged_files_are_not_saved_in_produced_mode(root: Path, tmp_path: Path) -> None:
    output = OutputSettings("produced", tmp_path / "saved")
    slot = slot_for(root, output)
    slot.get(Settings())

    saved = slot.save()

    assert saved is not None and tree(saved) == {}
    assert record(saved)["files_saved"] == 0


def test_exclude_patterns_match_paths_and_names_and_slash_means_directories(
    root: Path, tmp_path: Path
) -> None:
    task = root / "task"
    (task / "run.log").write_text("log")
    (task / "data" / "deep" / "trace.log").write_text("log")
    (task / "cache").mkdir()
    (task / "cache" / "blob").write_text("x")
    (task / "data" / "cache").write_text("a file named cache stays")
    output = OutputSettings("full", tmp_path / "saved", ("*.log", "cache/", "data/deep/notes.md"))

    saved = save_workspace(task, output, "f")

    kept = tree(saved)
    assert "run.log" not in kept and "data/deep/trace.log" not in kept
    assert "cache" not in kept and "cache/blob" not in kept
    assert kept["data/cache"] == "a file named cache stays"
    assert "data/deep/notes.md" not in kept and kept["data/deep"] == "<dir>"
    assert record(saved)["exclude_patterns"] == ["*.log", "cache/", "data/deep/notes.md"]


def test_links_out_of_the_workspace_are_left_out_and_links_inside_kept(
    root: Path, tmp_path: Path
) -> None:
    task = root / "task"
    (task / "absolute").symlink_to(tmp_path / "secret.txt")
    (task / "relative").symlink_to("../../secret.txt")
    (task / "dirlink").symlink_to(tmp_path)
    (task / "here").symlink_to(".")  # inside, but a path through it climbs out:
    (task / "climb").symlink_to("here/here/../../secret.txt")
    (task / "ok").symlink_to("data/numbers.csv")
    (task / "data" / "deep" / "up").symlink_to("../../input.txt")
    (task / "dangling").symlink_to("nowhere.txt")
    output = OutputSettings("full", tmp_path / "saved")

    saved = save_workspace(task, output, "f")

    kept = tree(saved)
    assert kept["ok"] == "-> data/numbers.csv"
    assert kept["data/deep/up"] == "-> ../../input.txt"
    assert kept["here"] == "-> ."
    assert kept["dangling"] == "-> nowhere.txt"
    assert (saved / "ok").read_text() == "1,2,3\n"
    for name in ("absolute", "relative", "dirlink", "climb"):
        assert name not in kept
    assert sorted(record(saved)["left_out"]) == [
        f"{name} (a link out of the workspace)"
        for name in ("absolute", "climb", "dirlink", "relative")
    ]
    saved_text = "".join(p.read_text() for p in saved.rglob("*") if p.is_file())
    assert "never saved" not in saved_text


def test_a_fifo_is_left_out_without_blocking_and_named(root: Path, tmp_path: Path) -> None:
    os.mkfifo(root / "task" / "data" / "pipe")
    output = OutputSettings("full", tmp_path / "saved")

    saved = save_workspace(root / "task", output, "f")

    assert "data/pipe" not in tree(saved)
    assert record(saved)["left_out"] == ["data/pipe (a FIFO)"]


def test_a_fifo_the_agent_made_is_named_in_produced_mode(root: Path, tmp_path: Path) -> None:
    output = OutputSettings("produced", tmp_path / "saved")
    slot = slot_for(root, output)
    workspace = slot.get(Settings())
    os.mkfifo(workspace.path / "pipe")

    saved = slot.save()

    assert saved is not None and record(saved)["left_out"] == ["pipe (a FIFO)"]


def test_read_only_directories_are_saved_and_can_be_replaced(root: Path, tmp_path: Path) -> None:
    task = root / "task"
    (task / "data" / "deep").chmod(0o555)
    output = OutputSettings("full", tmp_path / "saved")
    try:
        first = save_workspace(task, output, "f")
        mode = stat.S_IMODE((first / "data" / "deep").stat().st_mode)
        assert mode == 0o755  # read-only for others, writable by its owner
        (task / "input.txt").write_text("second\n")
        second = save_workspace(task, output, "f")
    finally:
        (task / "data" / "deep").chmod(0o755)

    assert second == first and (second / "input.txt").read_text() == "second\n"
    assert leftovers(tmp_path / "saved") == []


def test_a_full_disk_errors_naming_the_path_and_leaves_nothing_behind(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    output = OutputSettings("full", tmp_path / "saved")
    earlier = save_workspace(root / "task", output, "f")

    def full(*args: Any, **kwargs: Any) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(workspace_copy, "copy_range", full)
    with pytest.raises(WorkspaceSaveError) as caught:
        save_workspace(root / "task", output, "f")

    message = str(caught.value)
    assert f"Could not save the workspace {root / 'task'} to {earlier}" in message
    assert "No space left on device" in message and str(earlier) in message
    assert leftovers(tmp_path / "saved") == []
    assert tree(earlier)["input.txt"] == "6 x 7\n"  # the earlier save is untouched


def test_something_else_where_the_save_goes_is_not_replaced(root: Path, tmp_path: Path) -> None:
    saved = tmp_path / "saved"
    saved.mkdir()
    (saved / "f").write_text("not a save")

    with pytest.raises(WorkspaceSaveError) as caught:
        save_workspace(root / "task", OutputSettings("full", saved), "f")

    assert str(saved / "f") in str(caught.value) and "is a file" in str(caught.value)
    assert (saved / "f").read_text() == "not a save"
    assert leftovers(saved) == []


def test_a_save_never_goes_into_a_workspace_nor_replaces_one(root: Path, tmp_path: Path) -> None:
    inside = OutputSettings("full", root / "task" / "saved")
    slot = slot_for(root, inside)
    workspace = slot.get(Settings())

    with pytest.raises(WorkspaceSaveError, match="is inside the workspace"):
        slot.save()
    with pytest.raises(WorkspaceSaveError, match="would replace"):
        save_workspace(workspace.path, OutputSettings("full", root), "task",
                       original=root / "task", root=root)  # fmt: skip
    assert not (root / "task" / "saved").exists() and (root / "task" / "input.txt").exists()


def test_a_cancelled_save_leaves_nothing_behind(root: Path, tmp_path: Path) -> None:
    output = OutputSettings("full", tmp_path / "saved")
    original = workspace_copy.register

    def cancelled(path: Path, removable: bool, *, settled: bool = True) -> Any:
        entry = original(path, removable, settled=settled)
        entry.cancelled.set()
        return entry

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("pytest_karenina.pipeline.workspace_save.register", cancelled)
        with pytest.raises(WorkspaceSaveError, match="the run ended"):
            save_workspace(root / "task", output, "f")
    assert leftovers(tmp_path / "saved") == [] and workspace_copy.live_workspaces() == []
