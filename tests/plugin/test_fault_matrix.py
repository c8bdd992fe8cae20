"""Faults survived: 200 questions, one kind of fault at 20% of the calls each run. Every item
ends as a pass, a failure or a named error, retried calls succeed, the export holds all 200.
Also Ctrl-C in the middle of a run: finished results are on disk and the exit code is 2."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from tests.support.fault_matrix import (
    FAULTS,
    QUESTIONS,
    FaultCase,
    pytest_args,
    read_outcome,
    script,
    write_checkpoint,
)
from tests.support.openai_server import OpenAIServer

RIGHT, WRONG = 180, 20  # every tenth answer is wrong
TRANSIENT = {"429 with Retry-After", "500", "connection reset", "timeout"}


@pytest.mark.parametrize("case", FAULTS, ids=[case.name for case in FAULTS])
def test_every_item_ends_with_a_verdict_or_a_named_error(
    pytester: pytest.Pytester, openai_server: OpenAIServer, case: FaultCase
) -> None:
    script(openai_server, case)
    checkpoint = write_checkpoint(pytester.path / "faults.jsonld")
    results = pytester.path / "results.json"
    run = pytester.runpytest(*pytest_args(openai_server, checkpoint, results),
                                        *case.extra)  # fmt: skip

    outcome = read_outcome(results)
    counts = run.parseoutcomes()
    assert outcome.results == QUESTIONS
    assert counts.get("passed", 0) + counts.get("failed", 0) + counts.get("errors", 0) == QUESTIONS
    assert (counts.get("passed", 0), counts.get("failed", 0)) == (outcome.passed, outcome.failed)
    faulted = [r for r in openai_server.chat_requests if r.fault is not None]
    assert faulted, "the fault never struck"
    if case.name in TRANSIENT:
        # Retried until they got through: the verdicts of a fault-free run.
        assert (outcome.passed, outcome.failed, sum(outcome.errors.values())) == (RIGHT, WRONG, 0)
        assert outcome.retries >= len(faulted) and outcome.retried_and_passed > 0
    elif case.name == "empty answer":
        # Nothing to parse: a parsing error per empty answer, every other item decided.
        assert set(outcome.errors) == {"parsing"}
        assert outcome.errors["parsing"] == len(faulted)
        run.stdout.fnmatch_lines(["*error in ParseTemplate (parsing)*"])
    else:
        # The judge is asked again with the validation error; four bad replies in a row
        # (0.2**4 per item) would be a named parsing error.
        assert set(outcome.errors) <= {"parsing"}
        assert outcome.passed + outcome.failed >= QUESTIONS - 2
        assert outcome.failed >= WRONG - outcome.errors.get("parsing", 0)


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
@pytest.mark.subprocess
def test_an_interrupt_mid_run_keeps_finished_results_and_exits_2(
    pytester: pytest.Pytester, openai_server: OpenAIServer, stop: signal.Signals
) -> None:
    script(openai_server, None)
    openai_server.set_latency(0.2)
    checkpoint = write_checkpoint(pytester.path / "faults.jsonld")
    results = pytester.path / "results.json"
    args = pytest_args(openai_server, checkpoint, results)
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest", *args, "--karenina-concurrency=4"],
        cwd=pytester.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    sidecar = results.with_name(results.name + ".results.jsonl")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        # The sidecar's first line is the run's header; then a line per result or item.
        lines = sidecar.read_text().splitlines() if sidecar.exists() else []
        if sum(1 for line in lines[1:] if not line.startswith('{"pytest_karenina_item"')) >= 5:
            break
        time.sleep(0.1)
    process.send_signal(stop)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == pytest.ExitCode.INTERRUPTED, output[-2000:]
    data = json.loads(results.read_text())
    assert data["metadata"]["job_summary"]["is_complete"] is False
    finished = data["results"]
    assert 5 <= len(finished) < QUESTIONS
    assert all(r["template"]["verify_result"] is not None for r in finished)
