"""A worker's flight journal and the split of a dead worker's unfinished items."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_karenina.plugin.run.flight_journal import (
    CrashSplit,
    FlightJournal,
    JournalDirectory,
    in_flight,
    split_crashed,
)


def test_started_and_not_ended_is_in_flight_in_start_order(tmp_path: Path) -> None:
    journal = FlightJournal(tmp_path, "gw3")
    for nodeid in ("b.jsonld::q2", "a.jsonld::q1", 'odd "id"\nwith a newline'):
        journal.started(nodeid)
    journal.ended("b.jsonld::q2")
    journal.close()
    journal.started("after close is ignored")
    assert in_flight(tmp_path / "gw3.inflight") == ["a.jsonld::q1", 'odd "id"\nwith a newline']


def test_a_line_cut_short_by_the_crash_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "gw0.inflight"
    path.write_text('+"q1"\n+"q2"\n-"q1"\n+"q3')
    assert in_flight(path) == ["q2"]


def test_no_journal_means_nothing_is_known(tmp_path: Path) -> None:
    assert in_flight(tmp_path / "missing.inflight") is None
    assert in_flight(None) is None


def test_the_directory_exists_only_once_asked_for_and_is_removed(tmp_path: Path) -> None:
    directory = JournalDirectory(tmp_path)
    assert directory.journal_of("gw0") is None
    made = directory.path
    assert made.is_dir() and directory.journal_of("gw0") == made / "gw0.inflight"
    directory.remove()
    assert not made.exists()


@pytest.mark.parametrize(
    ("pending", "flying", "reported", "split"),
    [
        # pytest is on q1 (reported), q3 and q5 are in flight, q7 never started
        (["q1", "q3", "q5", "q7"], ["q3", "q5"], {"q1"}, CrashSplit(["q3", "q5"], ["q7"])),
        # nothing in flight: the crash came from pytest's loop on its current item
        (["q1", "q3"], [], set(), CrashSplit(["q1"], ["q3"])),
        (["q1", "q3"], None, {"q1"}, CrashSplit(["q3"], [])),
        # a finished pipeline whose item was not reported yet runs again elsewhere
        (["q1", "q3"], ["q3"], set(), CrashSplit(["q3"], ["q1"])),
        (["q1"], ["q1"], {"q1"}, CrashSplit([], [])),
    ],
)
def test_split(
    pending: list[str], flying: list[str] | None, reported: set[str], split: CrashSplit
) -> None:
    assert split_crashed(pending, flying, reported) == split
