"""Where the export may not be written."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from pytest_karenina.plugin.options.results_path import check_results_path


def test_a_checkpoint_of_the_run_is_refused(tmp_path: Path) -> None:
    checkpoint = tmp_path / "bench.jsonld"
    checkpoint.write_text('{"@context": {}}')
    with pytest.raises(pytest.UsageError, match="that is a checkpoint of this run"):
        check_results_path(checkpoint, [checkpoint])


def test_any_other_file_that_is_not_an_export_is_refused(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    with pytest.raises(pytest.UsageError, match="is not a results export"):
        check_results_path(notes, [])


def test_a_parent_that_is_a_file_and_a_directory_are_refused(tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    with pytest.raises(pytest.UsageError, match="is a file, not a directory"):
        check_results_path(blocker / "out.json", [])
    with pytest.raises(pytest.UsageError, match="that is a directory"):
        check_results_path(tmp_path, [])


def test_a_new_path_an_empty_file_and_a_previous_export_are_fine(tmp_path: Path) -> None:
    previous = tmp_path / "previous.json"
    previous.write_text('{"format_version": "2.2", "metadata": {}, "results": []}')
    empty = tmp_path / "empty.json"
    empty.write_text("")
    for path in (tmp_path / "new" / "results.json", previous, empty):
        check_results_path(path, [])


def test_a_device_node_or_a_fifo_is_refused_unopened(tmp_path: Path) -> None:
    """Issue 24 (item 5): only regular files were looked at, so the export would have replaced
    a device node; a FIFO is refused without being opened (opening it would block)."""
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(pytest.UsageError, match="that is a FIFO, not a regular file"):
        check_results_path(fifo, [])
    device = tmp_path / "null.json"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs CAP_MKNOD (root)")
    with pytest.raises(pytest.UsageError, match="that is a character device, not a regular"):
        check_results_path(device, [])


def test_a_checkpoint_reached_through_a_hard_link_is_refused(tmp_path: Path) -> None:
    checkpoint = tmp_path / "bench.jsonld"
    checkpoint.write_text('{"@context": {}}')
    linked = tmp_path / "linked.json"
    os.link(checkpoint, linked)
    with pytest.raises(pytest.UsageError, match="that is a checkpoint of this run"):
        check_results_path(linked, [checkpoint])
