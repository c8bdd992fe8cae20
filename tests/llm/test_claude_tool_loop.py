"""The ``claude_tool`` tool loop: LangChain's agent runtime over the Messages API (the real
``anthropic`` SDK to the scripted Anthropic server) with tools from the real MCP test server."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from pytest_karenina.config.model import ModelConfig
from pytest_karenina.llm.agent_ports import AgentError, AgentRunConfig
from pytest_karenina.llm.agents.tool_loop import ToolLoopAgent
from pytest_karenina.llm.agents.transport_middleware import TransportMiddleware
from pytest_karenina.llm.ports import ChatMessage, LLMCallError
from pytest_karenina.llm.transport import RetryEvent
from tests.support.agents_extra import needs_agents_extra
from tests.support.anthropic_server import AnthropicFault, AnthropicServer, ToolUse, Turn

if TYPE_CHECKING:
    from tests.support.mcp_server import MCPServer

pytest.importorskip("anthropic", reason="claude_tool needs pip install 'pytest-karenina[claude]'")
pytestmark = needs_agents_extra

KEY = "fake-claude-key-9b20"
QUESTION = [ChatMessage("system", "Answer briefly."), ChatMessage("user", "Capital of France?")]
RUN = AgentRunConfig("answer_generation", question_id="q1")


def claude_agent_model(server: AnthropicServer, mcp: MCPServer, **fields: Any) -> ModelConfig:
    settings: dict[str, Any] = {
        "id": "claude", "model_name": "claude-test", "interface": "claude_tool",
        "anthropic_base_url": server.url, "anthropic_api_key": KEY,
        "mcp_urls_dict": {"facts": mcp.url},
    }  # fmt: skip
    return ModelConfig(**(settings | fields))


@pytest.fixture
def agent() -> Iterator[Callable[..., ToolLoopAgent]]:
    made: list[ToolLoopAgent] = []

    def make(model: ModelConfig, **options: Any) -> ToolLoopAgent:
        made.append(ToolLoopAgent(model, **options))
        return made[-1]

    yield make
    for each in made:
        each.close()


def no_wait_transport(events: list[RetryEvent] | None = None, **budgets: int) -> Any:
    policy = {
        name: {"max_attempts": budgets.get(name, 2), "backoff_min": 0, "backoff_max": 0}
        for name in ("rate_limit", "server_error", "connection", "timeout")
    }
    from pytest_karenina.config.model import RetryPolicy

    on_retry = events.append if events is not None else None
    return TransportMiddleware(
        key="claude", policy=RetryPolicy.model_validate(policy), on_retry=on_retry
    )


def test_an_agent_answers_with_an_mcp_tool(
    anthropic_server: AnthropicServer, mcp_server: MCPServer, agent: Callable[..., ToolLoopAgent]
) -> None:
    anthropic_server.add_rule("The capital of France is Paris.", role="tool")
    anthropic_server.add_rule(
        Turn("Let me look it up.", ToolUse("lookup_capital", {"country": "France"}))
    )

    result = agent(claude_agent_model(anthropic_server, mcp_server)).run(QUESTION, RUN)

    assert mcp_server.tool_calls("lookup_capital") == [{"country": "France"}]
    assert result.final_response == "The capital of France is Paris."
    assert not result.limit_reached and not result.timeout_reached
    assert result.turns == 2 and result.model == "claude-test"
    call, answer_to_call, final = result.trace_messages
    assert call["content"] == "Let me look it up."
    assert call["tool_calls"] == [
        {"id": "toolu_test_0_1", "name": "lookup_capital", "input": {"country": "France"}}
    ]
    assert answer_to_call == {
        "role": "tool", "content": "Paris", "block_index": 1, "name": "lookup_capital",
        "tool_result": {"tool_use_id": "toolu_test_0_1", "is_error": False},
    }  # fmt: skip
    assert final == {
        "role": "assistant",
        "content": "The capital of France is Paris.",
        "block_index": 2,
    }
    first, second = anthropic_server.messages_requests
    assert first.body["system"] == "Answer briefly." and first.stream
    assert "lookup_capital" in first.tools and "thread" not in first.body
    assert second.tool_results == [
        {"type": "tool_result", "tool_use_id": "toolu_test_0_1", "content": "Paris",
         "is_error": False},
    ]  # fmt: skip
    assert second.messages[1]["content"][1]["type"] == "tool_use"
    assert result.usage.input_tokens and result.usage.output_tokens


def test_usage_is_summed_over_the_model_calls(
    anthropic_server: AnthropicServer, mcp_server: MCPServer, agent: Callable[..., ToolLoopAgent]
) -> None:
    anthropic_server.add_rule("The sum is 5.", role="tool", usage={"input_tokens": 40,
                              "output_tokens": 4, "cache_read_input_tokens": 60})  # fmt: skip
    anthropic_server.add_rule(ToolUse("add", {"a": 2, "b": 3}), usage={"input_tokens": 30,
                              "output_tokens": 9})  # fmt: skip

    result = agent(claude_agent_model(anthropic_server, mcp_server)).run(QUESTION, RUN)

    assert result.final_response == "The sum is 5."
    assert (result.usage.input_tokens, result.usage.output_tokens) == (130, 13)


def test_a_looping_agent_stops_at_its_call_limit(
    anthropic_server: AnthropicServer, mcp_server: MCPServer, agent: Callable[..., ToolLoopAgent]
) -> None:
    anthropic_server.add_rule(ToolUse("add", {"a": 1, "b": 1}))
    limits = {"limits": {"model_call_limit": 3}}

    result = agent(claude_agent_model(anthropic_server, mcp_server, agent_middleware=limits)).run(
        QUESTION, RUN
    )

    assert result.limit_reached and result.turns == 3
    assert len(mcp_server.tool_calls("add")) == 3
    assert result.final_response == ""


def test_a_slow_tool_stops_the_run_at_its_time_limit_with_its_partial_trace(
    anthropic_server: AnthropicServer, mcp_server: MCPServer, agent: Callable[..., ToolLoopAgent]
) -> None:
    anthropic_server.add_rule(ToolUse("slow", {"seconds": 30}))

    result = agent(claude_agent_model(anthropic_server, mcp_server)).run(
        QUESTION, AgentRunConfig("answer_generation", timeout=1.0)
    )

    assert result.timeout_reached and not result.limit_reached
    assert [m["role"] for m in result.trace_messages] == ["assistant"]
    assert result.trace_messages[0]["tool_calls"][0]["name"] == "slow"


def test_model_calls_are_retried_after_retry_after(
    anthropic_server: AnthropicServer, mcp_server: MCPServer, agent: Callable[..., ToolLoopAgent]
) -> None:
    events: list[RetryEvent] = []
    anthropic_server.script(AnthropicFault.overloaded(0), AnthropicFault.stream_cut(3))
    anthropic_server.add_rule("Paris.")

    result = agent(
        claude_agent_model(anthropic_server, mcp_server), transport=no_wait_transport(events)
    ).run(QUESTION, RUN)

    assert result.final_response == "Paris."
    assert [(e.error_class, e.wait_seconds) for e in events] == [
        ("rate_limit", 0.0),
        ("connection", 0.0),
    ]


def test_529s_exhausting_the_retries_end_the_run_naming_the_model(
    anthropic_server: AnthropicServer, mcp_server: MCPServer, agent: Callable[..., ToolLoopAgent]
) -> None:
    anthropic_server.add_rule(AnthropicFault.overloaded(0))

    with pytest.raises(LLMCallError) as caught:
        agent(
            claude_agent_model(anthropic_server, mcp_server),
            transport=no_wait_transport(rate_limit=1),
        ).run(QUESTION, RUN)

    assert "claude_tool model 'claude-test'" in str(caught.value)
    assert "HTTP 529 overloaded_error" in str(caught.value)
    assert len(anthropic_server.messages_requests) == 2


def test_a_call_of_a_tool_it_was_not_given_ends_the_run_naming_it(
    anthropic_server: AnthropicServer, mcp_server: MCPServer, agent: Callable[..., ToolLoopAgent]
) -> None:
    anthropic_server.add_rule(ToolUse("delete_everything", {}))

    with pytest.raises(LLMCallError) as caught:
        agent(
            claude_agent_model(anthropic_server, mcp_server, mcp_tool_filter=["add"]),
            transport=no_wait_transport(),
        ).run(QUESTION, RUN)

    message = str(caught.value)
    assert "claude_tool model 'claude-test'" in message
    assert "called tool 'delete_everything', which it was not given (its tools: add)" in message
    assert len(anthropic_server.messages_requests) == 1
    assert mcp_server.calls == []


def test_a_missing_key_is_an_agent_error_naming_the_variable(
    anthropic_server: AnthropicServer,
    mcp_server: MCPServer,
    agent: Callable[..., ToolLoopAgent],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    model = claude_agent_model(anthropic_server, mcp_server, anthropic_api_key=None)

    with pytest.raises(AgentError, match="has no API key: set ANTHROPIC_API_KEY"):
        agent(model).run(QUESTION, RUN)
    assert anthropic_server.requests == []
