"""Workspace copies on real files (issue 24, item 6): FIFOs and device nodes are left out and
named, sparse files stay sparse, a copy that fails midway or is cancelled leaves nothing
next to the original, and the copies in use when a run ends are removed."""

from __future__ import annotations

import errno
import os
import stat
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.pipeline import workspace_copy
from pytest_karenina.pipeline.workspace import WorkspaceSlot, resolve_workspace

MB = 1024 * 1024


@dataclass
class Settings:
    workspace_copy: bool = True
    workspace_cleanup: bool = True


@pytest.fixture(autouse=True)
def end_of_run() -> Iterator[None]:
    """Tests that resolve a workspace without releasing it end as a run would."""
    yield
    workspace_copy.discard_live_workspaces()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    task = tmp_path / "task"
    (task / "data").mkdir(parents=True)
    (task / "input.txt").write_text("6 x 7\n")
    (task / "data" / "numbers.csv").write_text("1,2,3\n")
    (task / "link").symlink_to("input.txt")
    return tmp_path


def copies(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if "_run_" in p.name)


def test_a_fifo_is_left_out_and_named_and_the_rest_is_copied(root: Path) -> None:
    """Before: shutil raised SpecialFileError after copying the other files, and the partial
    copy stayed next to the original."""
    os.mkfifo(root / "task" / "data" / "pipe")
    slot = WorkspaceSlot(root, "urn:q:1", "task")

    workspace = slot.get(Settings())

    assert (workspace.path / "input.txt").read_text() == "6 x 7\n"
    assert (workspace.path / "data" / "numbers.csv").read_text() == "1,2,3\n"
    assert os.readlink(workspace.path / "link") == "input.txt"  # a link stays a link
    assert not (workspace.path / "data" / "pipe").exists()
    assert workspace.skipped == ("data/pipe (a FIFO)",)
    warning = slot.release()
    assert warning == "Left out of the workspace copy (not regular files): data/pipe (a FIFO)"
    assert copies(root) == []


@pytest.mark.parametrize("minor", [3, 5], ids=["null", "zero"])
def test_a_device_node_is_left_out(root: Path, minor: int) -> None:
    """``/dev/zero`` (1, 5) filled the disk before; ``/dev/null`` (1, 3) became an empty
    regular file."""
    node = root / "task" / "device"
    try:
        os.mknod(node, 0o600 | stat.S_IFCHR, os.makedev(1, minor))
    except PermissionError:
        pytest.skip("creating a device node needs CAP_MKNOD")

    workspace = resolve_workspace(root, "urn:q:1", "task")

    assert not os.path.lexists(workspace.path / "device")
    assert workspace.skipped == ("device (a character device)",)
    assert (workspace.path / "input.txt").exists()


def test_a_sparse_file_stays_sparse(root: Path) -> None:
    """A 300 MB file with 4 KB of data: the copy holds the data at its offset and allocates
    about as little as the original (before: 300 MB of zeros written per copy)."""
    sparse = root / "task" / "big.img"
    with sparse.open("wb") as handle:
        handle.truncate(300 * MB)
        handle.seek(100 * MB)
        handle.write(b"x" * 4096)
    original = sparse.stat()

    workspace = resolve_workspace(root, "urn:q:1", "task")

    copied = (workspace.path / "big.img").stat()
    assert copied.st_size == 300 * MB
    assert copied.st_blocks * 512 <= max(original.st_blocks * 512, 64 * 1024)
    with (workspace.path / "big.img").open("rb") as handle:
        handle.seek(100 * MB - 1)
        assert handle.read(4098) == b"\0" + b"x" * 4096 + b"\0"
    assert stat.S_IMODE(copied.st_mode) == stat.S_IMODE(original.st_mode)


def failing_on_call(n: int, error: int) -> Callable[..., Any]:
    """A stand-in for the kernel copy calls that fails with ``error`` from call ``n`` on."""
    calls = [0]
    kernel_copy, send = os.copy_file_range, os.sendfile

    def fail(real: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            calls[0] += 1
            if calls[0] >= n:
                raise OSError(error, os.strerror(error))
            return real(*args)

        return call

    return lambda name: fail(kernel_copy if name == "copy_file_range" else send)


def test_a_full_disk_midway_leaves_no_partial_copy(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for index in range(5):
        (root / "task" / f"part{index}.bin").write_bytes(os.urandom(64 * 1024))
    failing = failing_on_call(3, errno.ENOSPC)
    for name in ("copy_file_range", "sendfile"):
        monkeypatch.setattr(os, name, failing(name))
    slot = WorkspaceSlot(root, "urn:q:1", "task")

    with pytest.raises(RuntimeError) as raised:
        slot.get(Settings())

    message = str(raised.value)
    assert "Could not copy the question workspace" in message, message
    assert "No space left on device" in message and "the partial copy was removed" in message
    assert f"{root / 'task'}{os.sep}" in message  # names the file being copied
    assert copies(root) == []
    assert workspace_copy.live_workspaces() == []
    with pytest.raises(RuntimeError, match="No space left"):  # each judge of the answer
        slot.get(Settings())


def test_without_the_kernel_copy_call_the_copy_falls_back_and_stays_sparse(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sparse = root / "task" / "big.img"
    with sparse.open("wb") as handle:
        handle.truncate(50 * MB)
        handle.write(b"head")
    monkeypatch.setattr(os, "copy_file_range", failing_on_call(1, errno.EXDEV)("copy_file_range"))

    workspace = resolve_workspace(root, "urn:q:1", "task")

    copied = workspace.path / "big.img"
    assert copied.read_bytes()[:5] == b"head\0" and copied.stat().st_size == 50 * MB
    assert copied.stat().st_blocks * 512 < MB


def test_a_copy_under_way_when_the_run_ends_is_cancelled_and_removed(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The end of the run (another thread) discards the live workspaces while a file is
    being copied: the copy stops at its next chunk and removes itself."""
    (root / "task" / "big.bin").write_bytes(os.urandom(3 * 64 * 1024))
    monkeypatch.setattr(workspace_copy, "CHUNK", 64 * 1024)
    real = os.copy_file_range
    ended: list[threading.Thread] = []

    def end_of_run_meanwhile(*args: Any) -> int:
        if not ended:
            (entry,) = list(workspace_copy._live.values())
            ended.append(threading.Thread(target=workspace_copy.discard_live_workspaces))
            ended[0].start()
            assert entry.cancelled.wait(60)
        return real(*args)

    monkeypatch.setattr(os, "copy_file_range", end_of_run_meanwhile)

    with pytest.raises(RuntimeError, match=r"cancelled.*the partial copy was removed"):
        resolve_workspace(root, "urn:q:1", "task")
    ended[0].join()

    assert copies(root) == []
    assert workspace_copy.live_workspaces() == []


def test_workspaces_in_use_are_removed_at_the_end_of_a_run_unless_kept(root: Path) -> None:
    kept = WorkspaceSlot(root, "urn:q:1", "task")
    removed = WorkspaceSlot(root, "urn:q:2", "task")
    fresh = WorkspaceSlot(root, "urn:q:3", None)
    paths = [slot.get(Settings(workspace_cleanup=slot is not kept)).path
             for slot in (kept, removed, fresh)]  # fmt: skip
    assert sorted(workspace_copy.live_workspaces()) == sorted(paths)

    assert workspace_copy.discard_live_workspaces() == []

    assert [path.exists() for path in paths] == [True, False, False]
    assert workspace_copy.live_workspaces() == []
    # The pipelines release their slots later: nothing to remove, nothing to warn about.
    assert [slot.release() for slot in (kept, removed, fresh)] == [None, None, None]
    assert paths[0].exists()


def test_a_released_workspace_is_no_longer_in_use(root: Path) -> None:
    slot = WorkspaceSlot(root, "urn:q:1", "task")
    slot.get(Settings(workspace_cleanup=False))
    assert slot.release() is None
    assert workspace_copy.live_workspaces() == []
    assert len(copies(root)) == 1  # kept on purpose, and not removed by a later end of run
    workspace_copy.discard_live_workspaces()
    assert len(copies(root)) == 1


def test_paths_out_of_the_root_stay_refused_and_create_nothing(tmp_path: Path) -> None:
    """What held in issue 24: ``..``, absolute and symlinked paths and NUL bytes."""
    root = tmp_path / "root"
    (root / "task").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (root / "via-link").symlink_to(tmp_path / "outside", target_is_directory=True)
    for path in ("../outside", str(tmp_path / "outside"), "via-link", "task\0"):
        with pytest.raises((RuntimeError, ValueError)) as raised:
            resolve_workspace(root, "urn:q:1", path)
        assert "outside the workspace root" in str(raised.value) or "null" in str(raised.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outside", "root"]
    assert sorted(p.name for p in root.iterdir()) == ["task", "via-link"]
    assert list((tmp_path / "outside").iterdir()) == []
