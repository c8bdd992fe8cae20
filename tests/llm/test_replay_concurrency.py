"""Concurrent appends to one replay store from threads and from processes."""

from __future__ import annotations

import json
import multiprocessing
import threading
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.llm.ports import ModelReply
from pytest_karenina.llm.replay import ReplayStore, replay_key
from tests.llm.fakes import req

IDENTITY = {"adapter": "fake", "model": "m1"}
PER_WRITER = 25
SHARED = 10  # the first SHARED questions are written by every writer: duplicates by design


def write_entries(path: str, writer: int, start: Any, compact_midway: bool) -> None:
    """Record PER_WRITER entries as ``writer``; runs in a thread or in a spawned process."""
    store = ReplayStore(path, "record")
    start.wait(timeout=60)  # deadlock guard
    for index in range(PER_WRITER):
        question = f"shared {index}" if index < SHARED else f"writer {writer} question {index}"
        request = req(question)
        reply = ModelReply(f"reply from writer {writer} to {question}")
        store.record(replay_key(IDENTITY, request), IDENTITY, request, reply)
        if compact_midway and index == PER_WRITER // 2:
            store.compact()


def expected_keys(writers: int) -> set[str]:
    questions = {f"shared {i}" for i in range(SHARED)} | {
        f"writer {w} question {i}" for w in range(writers) for i in range(SHARED, PER_WRITER)
    }
    return {replay_key(IDENTITY, req(q)) for q in questions}


def check_store(path: Path, writers: int, *, appended_lines: int | None) -> None:
    raw = path.read_text("utf-8").split("\n")
    assert raw[-1] == ""
    entries = [json.loads(line) for line in raw[:-1]]  # every line parses
    if appended_lines is not None:
        assert len(entries) == appended_lines
    assert {e["key"] for e in entries} == expected_keys(writers)

    ReplayStore(path, "replay").compact()
    compacted = [json.loads(line) for line in path.read_text("utf-8").split("\n") if line]
    keys = [e["key"] for e in compacted]
    assert keys == sorted(expected_keys(writers))  # sorted, de-duplicated, nothing lost
    for entry in compacted:
        question = entry["request"]["messages"][0]["content"]
        assert entry["reply"]["text"].endswith(f"to {question}")


def test_appends_from_eight_threads(tmp_path: Path) -> None:
    path = tmp_path / "store.jsonl"
    start = threading.Event()
    threads = [
        threading.Thread(target=write_entries, args=(str(path), w, start, False), name=f"w{w}")
        for w in range(8)
    ]
    for thread in threads:
        thread.start()
    start.set()
    for thread in threads:
        thread.join(timeout=60)
        assert not thread.is_alive()

    check_store(path, 8, appended_lines=8 * PER_WRITER)


def test_appends_from_eight_threads_sharing_one_store(tmp_path: Path) -> None:
    path = tmp_path / "store.jsonl"
    store = ReplayStore(path, "record")
    barrier = threading.Barrier(8)

    def write(writer: int) -> None:
        barrier.wait(timeout=60)
        for index in range(PER_WRITER):
            request = req(f"writer {writer} question {index}")
            store.record(replay_key(IDENTITY, request), IDENTITY, request, ModelReply("r"))

    threads = [threading.Thread(target=write, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
        assert not thread.is_alive()

    assert len(store) == 8 * PER_WRITER == store.stats()["added"]
    assert len([line for line in path.read_text("utf-8").split("\n") if line]) == 8 * PER_WRITER


@pytest.mark.subprocess
def test_appends_and_compactions_from_three_processes(tmp_path: Path) -> None:
    path = tmp_path / "store.jsonl"
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    processes = [
        context.Process(target=write_entries, args=(str(path), w, start, True), name=f"writer-{w}")
        for w in range(3)
    ]
    for process in processes:
        process.start()
    try:
        start.set()
        for process in processes:
            process.join(timeout=120)  # deadlock guard, not a speed assertion
    finally:
        for process in processes:
            if process.is_alive():
                process.kill()
                process.join()
    assert [p.exitcode for p in processes] == [0, 0, 0]
    for process in processes:
        process.close()

    check_store(path, 3, appended_lines=None)  # midway compactions dropped some duplicates
