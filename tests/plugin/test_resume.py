"""Resuming a killed live run (issue 31): with ``--karenina-replay replay`` every reply is on
disk as soon as it arrives, so a run killed part way (SIGTERM from CI, or SIGKILL, where no
shutdown code runs) and started again sends none of the calls it already made. A real
process, a real signal, the scripted server counting what it is sent."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.fault_matrix import pytest_args, read_outcome, script, write_checkpoint
from tests.support.openai_server import OpenAIServer, RecordedRequest

QUESTIONS = 12
FIRST = 6  # questions 1..FIRST are answered before the kill; the others' answers are held
CONCURRENCY = 3
_ASKED = re.compile(r"(?:Question \d+: )?which number is (\d+)\?")


def held(body: dict[str, Any]) -> bool:
    """An answering call (the bare question is its last message) past question :data:`FIRST`."""
    asked = _ASKED.fullmatch(str(body["messages"][-1]["content"]))
    return asked is not None and int(asked.group(1)) > FIRST


def call(request: RecordedRequest) -> str:
    """What identifies a call: its model and messages."""
    return json.dumps([request.model, request.messages], sort_keys=True)


def run_args(server: OpenAIServer, path: Path) -> list[str]:
    checkpoint = write_checkpoint(path / "resume.jsonld", QUESTIONS)
    args = pytest_args(server, checkpoint, path / "results.json")
    return [*args, f"--karenina-concurrency={CONCURRENCY}", "--karenina-replay=replay"]


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
@pytest.mark.subprocess
def test_a_killed_run_started_again_sends_no_call_it_already_made(
    pytester: pytest.Pytester, openai_server: OpenAIServer, stop: signal.Signals
) -> None:
    # Before the others, so it wins: the later questions' answers wait until the server stops.
    openai_server.add_rule("never sent", when=held, latency=600, name="held")
    script(openai_server, None)
    args = run_args(openai_server, pytester.path)
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest", *args],
        cwd=pytester.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        # Every worker thread waiting on a held answer: the first questions are finished and
        # recorded (a thread takes the next question only after the last one is done).
        deadline = time.monotonic() + 120
        while process.poll() is None and time.monotonic() < deadline:
            requests = openai_server.chat_requests
            if sum(r.rule == "held" for r in requests) == CONCURRENCY:
                break
            time.sleep(0.05)
        process.send_signal(stop)
        first_output, _ = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    expected = pytest.ExitCode.INTERRUPTED if stop == signal.SIGTERM else -signal.SIGKILL
    assert process.returncode == expected, first_output[-2000:]
    first = openai_server.chat_requests
    answered = {call(r) for r in first if r.rule != "held"}
    assert sum(r.rule == "held" for r in first) == CONCURRENCY
    assert len(answered) == 2 * FIRST  # an answer and its judging per finished question

    openai_server.reset()
    script(openai_server, None)
    again = pytester.run(sys.executable, "-m", "pytest", *args)

    second = openai_server.chat_requests
    assert not answered & {call(r) for r in second}  # nothing paid twice
    assert len(second) == 2 * (QUESTIONS - FIRST)
    outcome = read_outcome(pytester.path / "results.json")
    assert outcome.results == QUESTIONS
    assert sum(outcome.errors.values()) == 0
    again.stdout.fnmatch_lines(
        [f"karenina replay: {len(answered)} calls reused from resume.replay.jsonl, not sent again"]
    )
