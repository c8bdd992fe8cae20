"""``--karenina-batch`` with ``claude_tool`` models end to end: pytest with the plugin against
the scripted Anthropic server's Message Batches over real HTTP. Answers, then judge calls,
each a batch; a request the API errors or lets expire errors its item only, with the reason;
strict replay of the batch run sends nothing; the key stays out of the state file and the
artifacts."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.plugin.plugin_helpers import capitals_checkpoint
from tests.support.anthropic_server import AnthropicFault, AnthropicServer

pytest.importorskip("anthropic", reason="claude_tool needs pip install 'pytest-karenina[claude]'")

KEY = "sk-ant-batch-canary-5d0e9a"
COUNTRIES = {f"q{n:03d}": (f"Country{n}", f"City{n}") for n in range(20)}
ASKED = re.compile(r"capital of (Country\d+)")
SAID = re.compile(r"It is (City\d+)\.")


def answer(body: dict[str, Any]) -> str:
    found = ASKED.search(json.dumps(body["messages"]))
    return f"It is City{found.group(1)[7:]}." if found else "I do not know."


def judge(body: dict[str, Any]) -> dict[str, str]:
    found = SAID.search(json.dumps(body["messages"]))
    return {"capital": found.group(1) if found else ""}


@pytest.fixture
def claude(anthropic_server: AnthropicServer, monkeypatch: pytest.MonkeyPatch) -> AnthropicServer:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    anthropic_server.add_rule(answer, model="claude-answer", structured=False)
    anthropic_server.add_rule(judge, model="claude-judge", structured=True)
    return anthropic_server


def run(
    pytester: pytest.Pytester, server: AnthropicServer, questions: int, *extra: str
) -> pytest.RunResult:
    checkpoint = capitals_checkpoint(pytester.path, dict(list(COUNTRIES.items())[:questions]))
    base = {"interface": "claude_tool", "anthropic_base_url": server.url}
    preset = pytester.path / "claude.json"
    preset.write_text(json.dumps({"config": {
        "answering_models": [{**base, "id": "claude", "model_name": "claude-answer"}],
        "parsing_models": [{**base, "id": "judge", "model_name": "claude-judge"}],
    }}))  # fmt: skip
    return pytester.runpytest(
        "--karenina", str(checkpoint), f"--karenina-config={preset}", "-p", "no:cacheprovider",
        "--karenina-batch", "--karenina-batch-poll", "0.05", *extra,
    )  # fmt: skip


def waves(server: AnthropicServer) -> list[set[str]]:
    """The models each served batch asked, in order of submission."""
    return [{r["params"]["model"] for r in b.requests} for b in server.batches.served.values()]


def test_answers_and_judge_calls_go_in_two_batches_and_replay_strictly(
    pytester: pytest.Pytester, claude: AnthropicServer, dist: list[str]
) -> None:
    export = pytester.path / "results.json"
    result = run(pytester, claude, 20, "--karenina-replay", "record",
                 f"--karenina-results={export}", *dist)  # fmt: skip

    result.assert_outcomes(passed=20)
    sizes = [len(batch.requests) for batch in claude.batches.served.values()]
    if dist:  # each worker batches its own share
        assert sum(sizes) == 40 and len(sizes) == 4
    else:
        assert sizes == [20, 20] and waves(claude) == [{"claude-answer"}, {"claude-judge"}]
    assert all(len(models) == 1 for models in waves(claude))  # no wave mixes the two
    assert claude.messages_requests == []  # not one live call
    store = pytester.path / "capitals.replay.jsonl"
    for artifact in (export, store):
        assert KEY not in artifact.read_text()

    requests = len(claude.requests)
    again = run(pytester, claude, 20, "--karenina-replay", "strict")
    again.assert_outcomes(passed=20)
    assert len(claude.requests) == requests


def test_errored_and_expired_requests_error_only_their_items(
    pytester: pytest.Pytester, anthropic_server: AnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    anthropic_server.add_rule(
        AnthropicFault.http_error(400, "prompt is too long"), contains="Country2", structured=False
    )
    anthropic_server.add_rule(answer, model="claude-answer", structured=False)
    anthropic_server.add_rule(judge, model="claude-judge", structured=True)
    anthropic_server.batches.configure(expire=lambda params: "Country4" in json.dumps(params))

    result = run(pytester, anthropic_server, 6)

    result.assert_outcomes(passed=4, errors=2)
    output = result.stdout.str()
    assert "invalid_request_error: prompt is too long" in output
    assert "expired" in output and KEY not in output


def test_the_state_file_holds_no_key(pytester: pytest.Pytester, claude: AnthropicServer) -> None:
    seen: list[str] = []
    hold = threading.Event()
    claude.batches.configure(hold=hold)

    def look() -> None:
        """Read the state file while the first batch waits (it is written before the wait)."""
        for _ in range(3000):
            if claude.batches.served:
                found = [p.read_text() for p in Path(pytester.path).glob("*.batches.json")]
                if found:
                    seen.extend(found)
                    break
            threading.Event().wait(0.01)
        hold.set()

    watcher = threading.Thread(target=look)
    watcher.start()
    result = run(pytester, claude, 3)
    watcher.join(60)
    result.assert_outcomes(passed=3)
    assert seen and all(KEY not in text for text in seen)
    assert all("msgbatch_test0001" in text for text in seen)


def test_langchain_anthropic_models_batch_too(
    pytester: pytest.Pytester, claude: AnthropicServer
) -> None:
    pytest.importorskip("langchain_anthropic")
    checkpoint = capitals_checkpoint(pytester.path, dict(list(COUNTRIES.items())[:6]))
    base = {"interface": "langchain", "model_provider": "anthropic",
            "anthropic_base_url": claude.url}  # fmt: skip
    preset = pytester.path / "langchain.json"
    preset.write_text(json.dumps({"config": {
        "answering_models": [{**base, "id": "claude", "model_name": "claude-answer"}],
        "parsing_models": [{**base, "id": "judge", "model_name": "claude-judge"}],
    }}))  # fmt: skip

    result = pytester.runpytest(
        "--karenina", str(checkpoint), f"--karenina-config={preset}", "-p", "no:cacheprovider",
        "--karenina-batch", "--karenina-batch-poll", "0.05",
    )  # fmt: skip

    result.assert_outcomes(passed=6)
    assert waves(claude) == [{"claude-answer"}, {"claude-judge"}]
    judged = [r["params"] for r in list(claude.batches.served.values())[1].requests]
    assert all(p["tool_choice"]["type"] == "tool" for p in judged)  # with_structured_output's
    assert claude.messages_requests == []
    result.stdout.fnmatch_lines(["*karenina batch: 12 calls in 2 batches, 0 recovered*"])


@pytest.mark.subprocess
def test_a_run_killed_while_its_batch_waits_reattaches_and_submits_nothing_again(
    pytester: pytest.Pytester, claude: AnthropicServer
) -> None:
    hold = threading.Event()  # the answers' batch waits until the first run is gone
    claude.batches.configure(hold=hold)
    checkpoint = capitals_checkpoint(pytester.path, dict(list(COUNTRIES.items())[:5]))
    base = {"interface": "claude_tool", "anthropic_base_url": claude.url}
    preset = pytester.path / "claude.json"
    preset.write_text(json.dumps({"config": {
        "answering_models": [{**base, "id": "claude", "model_name": "claude-answer"}],
        "parsing_models": [{**base, "id": "judge", "model_name": "claude-judge"}],
    }}))  # fmt: skip
    args = [
        "--karenina", str(checkpoint), f"--karenina-config={preset}", "-p", "no:cacheprovider",
        "--karenina-batch", "--karenina-batch-poll", "0.05", "--karenina-replay", "replay",
    ]  # fmt: skip
    state = pytester.path / "capitals.replay.jsonl.batches.json"
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest", *args], cwd=pytester.path,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120  # bounded: until the batch is submitted and on disk
        while process.poll() is None and time.monotonic() < deadline:
            if claude.batches.served and state.exists() and "msgbatch_" in state.read_text():
                break
            time.sleep(0.02)
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == pytest.ExitCode.INTERRUPTED, output[-2000:]
    assert len(claude.batches.served) == 1 and KEY not in state.read_text()

    hold.set()
    again = pytester.runpytest(*args)

    again.assert_outcomes(passed=5)
    assert waves(claude) == [{"claude-answer"}, {"claude-judge"}]  # the answers not again
    again.stdout.fnmatch_lines(["*karenina batch: 5 calls in 1 batches, 5 recovered*"])
    assert claude.messages_requests == [] and not state.exists()
