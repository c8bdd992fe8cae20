"""``--karenina-batch`` end to end: pytest with the plugin against the scripted Batch API
server over real HTTP; waves, the summary, strict replay of a batch run, ``-n 2``, and a
state file of other settings."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.plugin.plugin_helpers import capitals_checkpoint, use_key
from tests.support.batch_server import BatchServer
from tests.support.openai_server import OpenAIServer

COUNTRIES = {f"q{n:03d}": (f"Country{n}", f"City{n}") for n in range(200)}
ASKED = re.compile(r"capital of (Country\d+)")
SAID = re.compile(r"It is (City\d+)\.")


def answer(body: dict[str, Any]) -> str:
    found = ASKED.search(json.dumps(body["messages"]))
    return f"It is City{found.group(1)[7:]}." if found else "I do not know."


def judge(body: dict[str, Any]) -> dict[str, str]:
    found = SAID.search(json.dumps(body["messages"]))
    return {"capital": found.group(1) if found else ""}


def script(server: OpenAIServer) -> None:
    server.add_rule(answer, structured=False)
    server.add_rule(judge, structured=True)


@pytest.fixture
def batches(openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[BatchServer]:
    use_key(monkeypatch)
    script(openai_server)
    with BatchServer(openai_server) as server:
        yield server
    assert not server.errors


def run(pytester: pytest.Pytester, server: BatchServer, *extra: str) -> pytest.RunResult:
    return pytester.runpytest(
        "--karenina", str(pytester.path / "capitals.jsonld"),
        "--karenina-endpoint", server.base_url, "--karenina-answering-model", "test-model",
        "--karenina-parsing-model", "test-model", "-p", "no:cacheprovider",
        "--karenina-batch", "--karenina-batch-poll", "0.05", *extra,
    )  # fmt: skip


def test_a_200_question_run_takes_two_batches_and_replays_strictly_offline(
    pytester: pytest.Pytester, batches: BatchServer, openai_server: OpenAIServer,
    dist: list[str],
) -> None:  # fmt: skip
    capitals_checkpoint(pytester.path, COUNTRIES)
    result = run(pytester, batches, "--karenina-replay", "record", *dist)
    result.assert_outcomes(passed=200)
    sizes = sorted(len(lines) for lines in batches.submitted)
    kinds = [{line["body"].get("response_format") is None for line in lines}
             for lines in batches.submitted]  # fmt: skip
    if dist:  # each worker batches its own share: answers, then judge calls
        assert len(sizes) == 4 and sum(sizes) == 400
    else:
        assert sizes == [200, 200]
    batches_made = len(sizes)
    result.stdout.fnmatch_lines([
        f"karenina batch: 400 calls in {batches_made} batches, 0 recovered from earlier batches,"
        " 0 failed; 0 calls ran live*"
    ])  # fmt: skip
    assert all(len(kind) == 1 for kind in kinds)  # no batch mixes answers and judge calls
    assert not [r for r in batches.requests if r[1].endswith("/chat/completions")]
    assert not list(pytester.path.glob("*.batches.json"))  # every batch was collected

    before, chat_before = len(batches.requests), len(openai_server.requests)
    again = run(pytester, batches, "--karenina-replay", "strict")
    again.assert_outcomes(passed=200)
    assert len(batches.requests) == before and len(openai_server.requests) == chat_before


def test_failed_requests_error_only_their_items(
    pytester: pytest.Pytester, batches: BatchServer
) -> None:
    capitals_checkpoint(pytester.path, dict(list(COUNTRIES.items())[:6]))
    batches.fail = lambda body: "overloaded" if "Country3" in json.dumps(body) else None
    result = run(pytester, batches, "-v")
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed") == 5 and outcomes.get("errors") == 1
    assert "server_error: overloaded" in result.stdout.str()
    ids = re.search(r"karenina batch ids: (.*)", result.stdout.str())  # -v names them
    assert ids is not None and len(ids.group(1).split(", ")) == len(batches.submitted) == 2


def test_a_state_file_of_other_settings_is_refused(
    pytester: pytest.Pytester, batches: BatchServer
) -> None:
    capitals_checkpoint(pytester.path, dict(list(COUNTRIES.items())[:2]))
    stale = {"format": 1, "benchmark": "capitals.jsonld", "settings": "0123456789abcdef",
             "described": "models gpt-x; mode template_only", "batches": {
                 "batch_old": {"provider": "openai", "lane": "openai:x", "wave": "answers",
                               "keys": ["k"], "submitted_at": ""}}}  # fmt: skip
    state = pytester.path / "capitals.replay.jsonl.batches.json"
    state.write_text(json.dumps(stale))
    result = run(pytester, batches)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*batch state file {state} was written under other settings*"])
    assert batches.requests == []


def test_keys_never_reach_the_state_file(
    pytester: pytest.Pytester, batches: BatchServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    capitals_checkpoint(pytester.path, dict(list(COUNTRIES.items())[:3]))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-state-file-canary-000111222")
    seen: list[str] = []

    def watch(body: dict[str, Any]) -> None:
        """Runs in the server while the batch is pending: the state file is written by then
        (before the wait), unless something is wrong, which the loop bounds."""
        for _ in range(3000):
            found = [path.read_text() for path in Path(pytester.path).glob("*.batches.json")]
            if found:
                seen.extend(found)
                return None
            threading.Event().wait(0.01)
        return None

    batches.fail = watch
    run(pytester, batches).assert_outcomes(passed=3)
    assert seen and all("sk-state-file-canary" not in text for text in seen)
    assert all('"batch_' in text and "capitals.jsonld" in text for text in seen)


@pytest.mark.subprocess
def test_a_run_killed_while_waiting_resumes_without_submitting_again(
    pytester: pytest.Pytester, batches: BatchServer, openai_server: OpenAIServer
) -> None:
    capitals_checkpoint(pytester.path, dict(list(COUNTRIES.items())[:8]))
    batches.held_from, state = 1, pytester.path / "capitals.replay.jsonl.batches.json"
    batches.hold()  # the answers' batch completes; the judge calls' batch waits
    args = [
        "--karenina", "capitals.jsonld", "--karenina-endpoint", batches.base_url,
        "--karenina-answering-model", "test-model", "--karenina-parsing-model", "test-model",
        "-p", "no:cacheprovider", "--karenina-batch", "--karenina-batch-poll", "0.05",
        "--karenina-replay", "replay",
    ]  # fmt: skip
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest", *args], cwd=pytester.path,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        for _ in range(6000):  # bounded: until the judge batch is submitted and on disk
            if process.poll() is not None or (
                len(batches.submitted) == 2 and state.exists() and "judge" in state.read_text()
            ):
                break
            threading.Event().wait(0.02)
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == pytest.ExitCode.INTERRUPTED, output
    assert len(batches.submitted) == 2 and state.exists()
    chat_calls = len(openai_server.requests)

    batches.release()
    result = pytester.runpytest(*args)
    result.assert_outcomes(passed=8)
    assert len(batches.submitted) == 2  # nothing submitted again: the judge batch re-attached
    result.stdout.fnmatch_lines(["*karenina batch: 0 calls in 0 batches, 8 recovered*"])
    assert len(openai_server.requests) == chat_calls + 8  # the held batch ran, nothing else
    assert not state.exists()


def test_the_summary_prices_batched_calls_at_batch_and_live_prices(
    pytester: pytest.Pytester, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_key(monkeypatch)
    usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
    openai_server.add_rule(answer, structured=False, usage=usage)
    openai_server.add_rule(judge, structured=True, usage=usage)
    capitals_checkpoint(pytester.path, dict(list(COUNTRIES.items())[:3]))
    prices = pytester.path / "prices.json"
    prices.write_text(json.dumps({"test-model": {"input": 2.0, "output": 8.0}}))
    with BatchServer(openai_server) as server:
        result = run(pytester, server, f"--karenina-prices={prices}")
    result.assert_outcomes(passed=3)
    # 6 calls of 100 input and 10 output tokens: live 600 x $2 + 60 x $8 per million
    # = $0.00168; at the default batch price (half) $0.00084.
    result.stdout.fnmatch_lines([
        "*karenina batch cost: $0.0008 at batch prices; the same calls live: $0.0017*",
        "cost: $0.0008 (answerer $0.0004, judge $0.0004)",  # the run's cost: batch prices
    ])  # fmt: skip
