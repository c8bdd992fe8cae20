"""A run ended by SIGTERM removes the workspace copies its unfinished pipelines were using
(issue 24, item 6). A real process and a real signal: the answering deep agent's model call
is held by the scripted server while the copy exists."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable

import pytest

from tests.plugin.plugin_helpers import COUNTRIES, capitals_checkpoint
from tests.plugin.test_agents_plugin import agentic_preset
from tests.support.agents_extra import needs_agents_extra
from tests.support.openai_server import OpenAIServer

pytestmark = needs_agents_extra


def wait_for(found: Callable[[], bool], process: subprocess.Popen[str], what: str) -> None:
    """Poll ``found()`` until it holds (bounded: a run that never gets there fails)."""
    deadline = time.monotonic() + 120
    while not found() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert found(), f"never saw {what}"


@pytest.mark.subprocess
def test_sigterm_removes_the_copies_pipelines_still_use(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    (pytester.path / "task").mkdir()
    (pytester.path / "task" / "notes.txt").write_text("capitals\n")
    checkpoint = capitals_checkpoint(pytester.path, {"q1": COUNTRIES["q1"]}, workspace_path="task")
    config = agentic_preset(pytester.path, openai_server)
    openai_server.add_rule("Paris", model="answerer", latency=600)  # held until stopped

    process = subprocess.Popen(
        [sys.executable, "-m", "pytest", "--karenina", str(checkpoint),
         f"--karenina-config={config}", "-p", "no:cacheprovider"],
        cwd=pytester.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        wait_for(lambda: bool(openai_server.chat_requests), process, "the answering call")
        copies = [p for p in pytester.path.iterdir() if p.name.startswith("task_run_")]
        assert len(copies) == 1 and (copies[0] / "notes.txt").exists()
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()

    assert process.returncode == pytest.ExitCode.INTERRUPTED, output[-2000:]
    assert sorted(p.name for p in pytester.path.iterdir() if "_run_" in p.name) == []
    assert (pytester.path / "task" / "notes.txt").read_text() == "capitals\n"
