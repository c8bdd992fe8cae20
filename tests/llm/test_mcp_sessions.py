"""MCP sessions against real servers that restart, die or hang (issue 24, items 12 and 13).

The servers that restart or hang run in processes of their own (:mod:`tests.support.
mcp_process`), stateful as FastMCP is by default: a restarted one no longer knows the
session ids it gave out. The agent calls the scripted OpenAI-compatible server.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.checkpoint import Benchmark, Question
from pytest_karenina.config.model import ModelConfig
from pytest_karenina.config.verification import VerificationConfig
from pytest_karenina.llm.agent_ports import AgentError, AgentRunConfig
from pytest_karenina.llm.agents.tool_loop import ToolLoopAgent
from pytest_karenina.llm.ports import ChatMessage
from pytest_karenina.pipeline.run import run_verification
from pytest_karenina.results import VerificationResult
from tests.pipeline.pipeline_helpers import CLASSIC
from tests.support.agents_extra import needs_agents_extra
from tests.support.mcp_process import MCPProcess
from tests.support.mcp_server import MCPServer
from tests.support.openai_server import OpenAIServer

pytestmark = needs_agents_extra

QUESTION = [ChatMessage("user", "Capital of France?")]
RUN = AgentRunConfig("answer_generation", question_id="q1")
ANSWER = "The capital of France is Paris."
GENEROUS = 60.0
"""Seconds a run that must not wait on a stuck server is given before the test calls it
stuck: far above what it takes (about 10 s: the agent's 2 s, 5 s to close, cancelling), far
below what waiting out the server's read timeout (600 s) would."""


def agent_model(server: OpenAIServer, url: str, **fields: Any) -> ModelConfig:
    return ModelConfig(
        id="agent", model_name="test-model", interface="openai_endpoint",
        endpoint_base_url=server.base_url, mcp_urls_dict={"facts": url}, **fields,
    )  # fmt: skip


def script_lookup(server: OpenAIServer) -> None:
    """Each run: the model looks the capital up, then answers."""
    server.add_rule(ANSWER, role="tool", last_contains="Paris")
    server.add_rule({"country": "France"}, tool="lookup_capital")


@pytest.fixture
def agent() -> Iterator[Callable[..., ToolLoopAgent]]:
    made: list[ToolLoopAgent] = []

    def make(model: ModelConfig) -> ToolLoopAgent:
        made.append(ToolLoopAgent(model))
        return made[-1]

    yield make
    for each in made:
        each.close()


def tool_results(result: Any) -> list[dict[str, Any]]:
    return [m for m in result.trace_messages if m["role"] == "tool"]


@pytest.mark.subprocess
def test_after_a_server_restart_the_next_run_reconnects_and_succeeds(
    openai_server: OpenAIServer, tmp_path: Path, agent: Callable[..., ToolLoopAgent]
) -> None:
    """Every run after the restart failed at once with ``Session terminated``: the session
    the restarted server no longer knew was never reopened."""
    script_lookup(openai_server)
    with MCPProcess(tmp_path, stateful=True) as server:
        runner = agent(agent_model(openai_server, server.url, agent_timeout=60))
        assert runner.run(QUESTION, RUN).final_response == ANSWER
        server.restart()

        result = runner.run(QUESTION, RUN)

    assert result.final_response == ANSWER
    (looked_up,) = tool_results(result)
    assert looked_up["content"] == "Paris" and looked_up["tool_result"]["is_error"] is False


@pytest.mark.subprocess
def test_a_server_gone_for_good_fails_the_run_clearly_then_one_back_serves_again(
    openai_server: OpenAIServer, tmp_path: Path, agent: Callable[..., ToolLoopAgent]
) -> None:
    """With the server gone, the call waited for a reply that could not come (until the
    agent's time limit), and every later call failed on the dead session."""
    script_lookup(openai_server)
    with MCPProcess(tmp_path, stateful=True) as server:
        runner = agent(agent_model(openai_server, server.url, agent_timeout=60))
        assert runner.run(QUESTION, RUN).final_response == ANSWER
        server.kill()

        with pytest.raises(AgentError) as failed:
            runner.run(QUESTION, RUN)

        message = str(failed.value)
        assert (
            "the tool call 'lookup_capital' failed after 3 attempts to reach MCP server "
            f"facts ({server.url}): ConnectError: All connection attempts failed"
        ) in message
        server.start()
        assert runner.run(QUESTION, RUN).final_response == ANSWER


def test_the_agents_time_limit_cancels_its_tool_call_at_the_server(
    openai_server: OpenAIServer, tmp_path: Path, agent: Callable[..., ToolLoopAgent]
) -> None:
    """The call cut short by ``agent_timeout`` went on at the server (for its 600 s)."""
    openai_server.add_rule({"seconds": 600}, tool="slow")
    server = MCPServer(tmp_path, stateless=False)
    server.start()
    try:
        runner = agent(agent_model(openai_server, server.url, agent_timeout=2))
        assert runner.run(QUESTION, RUN).timeout_reached
        # Open sessions, the agent still in use: only a cancellation can end the tool.
        deadline = time.monotonic() + GENEROUS
        while not server.tool_calls("slow cancelled") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.tool_calls("slow cancelled") == [{"seconds": 600}]
    finally:
        server.stop()


@pytest.mark.subprocess
def test_a_stuck_server_does_not_hold_the_run_after_its_last_item(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    """The tool holds the whole server (it answers nothing, not even the request that ends
    the session): the run ended only when the session's close gave up after
    ``mcp_sse_read_timeout`` (300 s by default; 600 s here)."""
    openai_server.add_rule({"seconds": 600}, model="agent-model", tool="stuck")
    results: list[VerificationResult] = []
    with MCPProcess(tmp_path, stateful=True) as server:
        base = {"interface": "openai_endpoint", "endpoint_base_url": openai_server.base_url}
        config = VerificationConfig(
            answering_models=[{**base, "id": "agent", "model_name": "agent-model",
                               "mcp_urls_dict": {"facts": server.url}, "agent_timeout": 2,
                               "mcp_sse_read_timeout": 600}],
            parsing_models=[{**base, "id": "judge", "model_name": "judge-model"}],
            allow_partial_trace_scoring=False,
        )  # fmt: skip
        question = Question(id="q1", text="What is the capital of France?", raw_answer="Paris",
                            template_code=CLASSIC, finished=True)  # fmt: skip
        benchmark = Benchmark(name="b", questions=[question])
        run = threading.Thread(
            target=lambda: results.extend(run_verification(benchmark, config).results),
            daemon=True,
        )
        run.start()
        run.join(GENEROUS)
        stuck = run.is_alive()

    assert not stuck, "the run was still waiting on the stuck MCP server"
    (result,) = results
    failure = result.metadata.failure
    assert failure is not None and failure.category == "timeout"
    assert "did not finish within its time limit" in (result.metadata.error or "")
