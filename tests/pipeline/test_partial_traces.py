"""``allow_partial_trace_scoring``: an answering agent cut short by its time limit is judged on
its partial trace (the default), or errors the item (false). Real parts: the agent calls the
scripted OpenAI-compatible server and the MCP test server, whose ``slow`` tool outlasts the
agent's time limit; the judge is a plain model on the same server."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.pipeline.test_agent_answering import run
from tests.support.agents_extra import needs_agents_extra
from tests.support.openai_server import Fault, OpenAIServer

if TYPE_CHECKING:
    from tests.support.mcp_server import MCPServer

pytestmark = needs_agents_extra

SLOW = {"agent_timeout": 3}
"""Room for the agent's first reply on a loaded machine; the ``slow`` tool takes 30 s."""


def script_slow_agent(server: OpenAIServer) -> None:
    """The agent's first reply calls the ``slow`` tool, which answers after 30 s."""
    server.add_rule({"seconds": 30}, model="agent-model", tool="slow")
    server.add_rule({"capital": "Paris"}, model="judge-model")


def judge_requests(server: OpenAIServer) -> list[str]:
    return [r.text for r in server.chat_requests if r.model == "judge-model"]


def test_a_timed_out_agent_is_judged_on_its_partial_trace(
    openai_server: OpenAIServer, mcp_server: MCPServer
) -> None:
    script_slow_agent(openai_server)

    result = run(openai_server, mcp_server, agent=SLOW)

    metadata = result.metadata
    assert metadata.error is None and metadata.failure is None
    template = result.template
    assert template is not None and template.response_timeout_partial is True
    assert [m["role"] for m in template.trace_messages or []] == ["assistant"]
    assert "partial_content" in metadata.caveats
    assert any("judged on its partial trace" in w for w in metadata.warnings)
    # The last AI message has only a tool call: the judge reads the whole partial trace.
    (judged,) = judge_requests(openai_server)
    assert "slow" in judged
    assert result.used_full_trace is True
    assert result.verify_result is True


def test_without_partial_scoring_a_timed_out_agent_errors(
    openai_server: OpenAIServer, mcp_server: MCPServer
) -> None:
    script_slow_agent(openai_server)

    result = run(openai_server, mcp_server, agent=SLOW, allow_partial_trace_scoring=False)

    template = result.template
    assert template is not None and template.response_timeout_partial is True
    assert [m["role"] for m in template.trace_messages or []] == ["assistant"]
    failure = result.metadata.failure
    assert failure is not None and failure.category == "timeout"
    assert "allow_partial_trace_scoring is off" in (result.metadata.error or "")
    assert judge_requests(openai_server) == []


def test_an_agent_that_never_replied_in_time_errors_even_with_partial_scoring(
    openai_server: OpenAIServer, mcp_server: MCPServer
) -> None:
    openai_server.add_rule(Fault.timeout(30), model="agent-model")

    result = run(openai_server, mcp_server, agent={"agent_timeout": 1})

    failure = result.metadata.failure
    assert failure is not None and failure.category == "timeout"
    assert "no reply to judge" in (result.metadata.error or "")
    assert judge_requests(openai_server) == []
