"""Recordings for CI: strict replay by default without keys, store accounting across xdist
workers, pruning, and re-running only the judge calls whose inputs changed."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from tests.plugin.plugin_helpers import copy_checkpoint, endpoint_args, scripted
from tests.support.openai_server import OpenAIServer

# Four finished questions, two calls each (answer, parse).
CALLS = 8
STALE = {
    "key": "0" * 64, "call_kind": "parsing", "identity": {"adapter": "gone"},
    "request": {"messages": [], "json_schema": None, "schema_name": None},
    "reply": {"text": "{}", "usage": {"input_tokens": 1, "output_tokens": 1}, "model": "x"},
    "recorded_at": "2026-01-01T00:00:00+00:00",
}  # fmt: skip


def store_keys(store: Path) -> list[str]:
    return [json.loads(line)["key"] for line in store.read_text().splitlines()]


def record(pytester: pytest.Pytester, server: OpenAIServer, *extra: str) -> tuple[list[str], Path]:
    scripted(server)
    path = copy_checkpoint(pytester)
    store = pytester.path / "calls.jsonl"
    args = ["--karenina", str(path), *endpoint_args(server), f"--karenina-replay-store={store}"]
    result = pytester.runpytest(*args, "--karenina-replay", "record", *extra)
    result.assert_outcomes(passed=2, failed=2, skipped=1)
    result.stdout.fnmatch_lines(
        [f"karenina replay: {CALLS} entries used, {CALLS} added, 0 unused*"]
    )
    return args, store


def test_without_an_api_key_replay_is_strict_by_default(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    path = copy_checkpoint(pytester)
    # A store of other calls: without one the run is refused (tests/plugin/test_run_needs.py).
    path.with_name("multi_question.replay.jsonl").write_text(json.dumps(STALE) + "\n")
    model = ["--karenina-answering-model", "openai:gpt-4.1-mini", "-p", "no:cacheprovider"]
    result = pytester.runpytest("--karenina", str(path), *model)
    result.stdout.fnmatch_lines([
        "karenina: *replay strict (default store)",
        "karenina: replay strict by default: no OPENAI_API_KEY in the environment for "
        "openai:gpt-4.1-mini (--karenina-replay chooses another mode)",
        "*strict replay: no recorded reply for question 'urn:karenina:test:mq001', "
        "call kind 'answer_generation'*",
    ])  # fmt: skip
    result.assert_outcomes(errors=4, skipped=1)
    result.stdout.fnmatch_lines(["outcomes: error:replay 4, skipped 1"])

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    live = pytester.runpytest("--collect-only", "--karenina", str(path), *model)
    assert "replay off" in live.stdout.str() and "by default" not in live.stdout.str()


@pytest.mark.subprocess
def test_strict_replay_never_opens_a_connection(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    args, _ = record(pytester, openai_server)
    pytester.makeconftest(
        """
import socket

def refuse(self, address):
    raise AssertionError(f"network use in strict replay: {address}")

socket.socket.connect = refuse
socket.create_connection = lambda *a, **k: refuse(None, a)
"""
    )
    openai_server.stop()
    # Its own process: the conftest takes the network away from the whole interpreter.
    replayed = pytester.runpytest_subprocess(
        *args, "--karenina-replay", "strict", "--karenina-abstention"
    )
    # The abstention calls were never recorded: errors naming question and call kind, and
    # still no connection attempt (an attempt would raise AssertionError, not ReplayMiss).
    replayed.assert_outcomes(errors=4, skipped=1)
    out = replayed.stdout.str()
    assert "call kind 'abstention_check'" in out and "network use" not in out
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", openai_server.port), timeout=2).close()


@pytest.mark.xdist
def test_xdist_workers_share_the_store_and_the_controller_prunes_it(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    args, store = record(pytester, openai_server, "-n", "2")
    keys = store_keys(store)
    assert keys == sorted(set(keys)) and len(keys) == CALLS  # merged, sorted, no duplicates
    with store.open("a") as handle:
        handle.write(json.dumps(STALE, sort_keys=True) + "\n")

    strict = [*args, "--karenina-replay", "strict", "-n", "2"]
    kept = pytester.runpytest(*strict, "-k", "mq001", "--karenina-replay-prune")
    kept.stdout.fnmatch_lines([
        "karenina replay: 2 entries used, 0 added, 7 unused of 9 in calls.jsonl",
        "karenina replay: not pruned: the run did not cover every question*",
    ])  # fmt: skip
    assert len(store_keys(store)) == CALLS + 1

    pruned = pytester.runpytest(*strict, "--karenina-replay-prune")
    pruned.assert_outcomes(passed=2, failed=2, skipped=1)
    pruned.stdout.fnmatch_lines([
        f"karenina replay: {CALLS} entries used, 0 added, 1 unused of {CALLS + 1} in calls.jsonl",
        "karenina replay: pruned 1 unused entries",
    ])  # fmt: skip
    assert store_keys(store) == keys
    assert not store.with_name(store.name + ".lock").exists()  # no lock file left behind


def test_a_changed_template_re_runs_only_its_judge_call(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    args, _ = record(pytester, openai_server)
    before = len(openai_server.chat_requests)
    path = Path(args[1])
    old = "Chemical element symbol"  # the field description of mq004's template
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, "Symbol of the chemical element", 1))

    again = pytester.runpytest(*args, "--karenina-replay", "replay")
    again.assert_outcomes(passed=2, failed=2, skipped=1)
    new_requests = openai_server.chat_requests[before:]
    assert len(new_requests) == 1 and new_requests[0].structured  # the parse of mq004 only
    again.stdout.fnmatch_lines([f"karenina replay: {CALLS} entries used, 1 added, 1 unused*"])
