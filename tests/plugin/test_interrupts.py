"""Stopping early: -x cancels queued pipelines; Ctrl-C keeps every finished result on disk."""

from __future__ import annotations

import json

import pytest

from tests.plugin.plugin_helpers import copy_checkpoint, endpoint_args, scripted
from tests.support.openai_server import OpenAIServer


def test_exitfirst_drops_queued_pipelines(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    scripted(openai_server)
    openai_server.set_latency(0.3)
    path = copy_checkpoint(pytester)
    args = endpoint_args(openai_server, "--karenina-concurrency", "1", "-x")
    result = pytester.runpytest("--karenina", str(path), *args)
    result.assert_outcomes(passed=1, failed=1)
    texts = [request.text for request in openai_server.chat_requests]
    assert not any("chemical symbol for gold" in text for text in texts)  # mq004 never ran


def test_ctrl_c_leaves_finished_results_in_the_export(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    scripted(openai_server)
    pytester.makeconftest(
        """
def pytest_runtest_setup(item):
    if item.name == "mq003":
        raise KeyboardInterrupt
"""
    )
    path = copy_checkpoint(pytester)
    export = pytester.path / "results.json"
    result = pytester.runpytest(
        "--karenina", str(path), *endpoint_args(openai_server), f"--karenina-results={export}",
        no_reraise_ctrlc=True,  # in-process: the run's Ctrl-C ends the run, not this test
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.INTERRUPTED
    data = json.loads(export.read_text())
    ids = sorted(r["metadata"]["question_id"] for r in data["results"])
    assert ids == ["urn:karenina:test:mq001", "urn:karenina:test:mq002"]
    assert data["metadata"]["job_summary"]["is_complete"] is False


@pytest.mark.xdist
def test_crashed_worker_loses_only_its_running_item(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    """The crash comes from pytest's loop (a conftest hook) on gw1's last item."""
    scripted(openai_server)
    pytester.makeconftest(
        """
import os

def pytest_runtest_setup(item):
    if item.name == "mq004":
        os._exit(3)
"""
    )
    path = copy_checkpoint(pytester)
    export = pytester.path / "results.json"
    result = pytester.runpytest(
        "--karenina", str(path), *endpoint_args(openai_server), "-n", "2",
        f"--karenina-results={export}",
    )  # fmt: skip
    # The crashed item is an error with the reason; mq002 is the one wrong answer left.
    result.assert_outcomes(passed=2, failed=1, errors=1, skipped=1)
    result.stdout.fnmatch_lines_random(
        ["ERROR*mq004*", "*worker 'gw*' crashed while running*mq004*"]
    )
    assert "error:worker_crashed 1" in result.stdout.str()
    data = json.loads(export.read_text())
    ids = sorted(r["metadata"]["question_id"] for r in data["results"])
    assert ids == ["urn:karenina:test:mq001", "urn:karenina:test:mq002", "urn:karenina:test:mq003"]


KILLS_ONCE_FLAGGED = """class Answer(BaseAnswer):
    symbol: str = Field(description="Chemical element symbol")

    def verify(self):
        import os, signal, time
        while not os.path.exists({flag!r}):
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.xdist
def test_a_pipeline_that_kills_its_worker_is_blamed_and_not_run_again(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    """gw1 runs mq002 and mq004 with look-ahead. pytest's loop is still on mq002 (its result
    reported, its teardown slow) when mq004's pipeline kills the process. mq004 is the crash;
    mq002 keeps its one result; mq004 does not go on to kill another worker."""
    scripted(openai_server)
    flag = pytester.path / "mq002-reported"
    pytester.makeconftest(
        f"""
import pathlib, time

def pytest_runtest_teardown(item):
    if item.name == "mq002":
        pathlib.Path({str(flag)!r}).touch()
        time.sleep(60)  # the worker dies long before
"""
    )
    path = copy_checkpoint(pytester)
    document = json.loads(path.read_text())
    document["dataFeedElement"][3]["item"]["hasPart"]["text"] = KILLS_ONCE_FLAGGED.format(
        flag=str(flag)
    )
    path.write_text(json.dumps(document))
    export = pytester.path / "results.json"

    result = pytester.runpytest(
        "--karenina", str(path), *endpoint_args(openai_server), "-n", "2",
        "--karenina-template-timeout=60", f"--karenina-results={export}", "-rA",
    )  # fmt: skip

    output = result.stdout.str()
    result.assert_outcomes(passed=2, failed=1, errors=1, skipped=1)
    result.stdout.fnmatch_lines_random(
        ["FAILED*mq002*", "ERROR*mq004*", "*worker 'gw1' crashed while running*mq004*"]
    )
    # One ERROR line only; its tail is cut to the terminal width, which differs in CI.
    error_lines = [line for line in output.splitlines() if line.startswith("ERROR ")]
    assert len(error_lines) == 1
    assert error_lines[0].startswith("ERROR multi_question.jsonld::mq004 - worker 'gw1' crashed")
    assert output.count("replacing crashed worker") == 1
    assert "ERROR at setup of question mq004" in output
    data = json.loads(export.read_text())
    ids = sorted(r["metadata"]["question_id"] for r in data["results"])
    assert ids == [f"urn:karenina:test:mq00{n}" for n in (1, 2, 3)]
    assert data["metadata"]["job_summary"]["is_complete"] is True
