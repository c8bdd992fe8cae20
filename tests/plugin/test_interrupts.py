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


def test_crashed_worker_loses_only_its_running_item(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    scripted(openai_server)
    pytester.makeconftest(
        """
import os

def pytest_runtest_setup(item):
    if item.name == "mq002":
        os._exit(3)
"""
    )
    path = copy_checkpoint(pytester)
    export = pytester.path / "results.json"
    result = pytester.runpytest(
        "--karenina", str(path), *endpoint_args(openai_server), "-n", "2",
        f"--karenina-results={export}",
    )  # fmt: skip
    # The crashed item is an error with the reason; mq004 is the one wrong answer left.
    result.assert_outcomes(passed=2, failed=1, errors=1, skipped=1)
    result.stdout.fnmatch_lines_random(
        ["ERROR*mq002*", "*worker 'gw*' crashed while running*mq002*"]
    )
    assert "error:worker_crashed 1" in result.stdout.str()
    data = json.loads(export.read_text())
    ids = sorted(r["metadata"]["question_id"] for r in data["results"])
    assert ids == ["urn:karenina:test:mq001", "urn:karenina:test:mq003", "urn:karenina:test:mq004"]
