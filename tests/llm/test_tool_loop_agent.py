"""The tool-loop agent against real parts: LangChain's agent runtime and the wire loop of
``openai_endpoint`` models over HTTP to the scripted OpenAI-compatible server, with tools from
the real MCP test server."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from pytest_karenina.config.model import ModelConfig
from pytest_karenina.llm.agent_ports import AgentError, AgentRunConfig
from pytest_karenina.llm.agents.endpoint_loop import EndpointToolLoop
from pytest_karenina.llm.agents.tool_loop import ToolLoopAgent
from pytest_karenina.llm.agents.transport_middleware import TransportMiddleware
from pytest_karenina.llm.ports import ChatMessage
from pytest_karenina.llm.transport import RetryEvent
from tests.support.agents_extra import needs_agents_extra
from tests.support.openai_rules import Fault
from tests.support.openai_server import OpenAIServer

if TYPE_CHECKING:
    from tests.support.mcp_server import MCPServer

pytestmark = needs_agents_extra

QUESTION = [ChatMessage("system", "Answer briefly."), ChatMessage("user", "Capital of France?")]
RUN = AgentRunConfig("answer_generation", question_id="q1")


def agent_model(server: OpenAIServer, mcp: MCPServer, **fields: Any) -> ModelConfig:
    return ModelConfig(
        id="agent", model_name="test-model", interface="openai_endpoint",
        endpoint_base_url=server.base_url, mcp_urls_dict={"facts": mcp.url}, **fields,
    )  # fmt: skip


@pytest.fixture(params=[ToolLoopAgent, EndpointToolLoop], ids=["langchain", "wire"])
def agent(request: pytest.FixtureRequest) -> Iterator[Callable[..., ToolLoopAgent]]:
    """Makes agents and closes their MCP sessions after the test: each test runs on
    LangChain's loop and on the wire loop ``openai_endpoint`` models get in a run."""
    made: list[ToolLoopAgent] = []
    loop: type[ToolLoopAgent] = request.param

    def make(model: ModelConfig, **options: Any) -> ToolLoopAgent:
        made.append(loop(model, **options))
        return made[-1]

    yield make
    for each in made:
        each.close()


def tools_offered(server: OpenAIServer) -> list[dict[str, Any]]:
    body = server.chat_requests[0].body
    return [tool["function"] for tool in body.get("tools", [])]


def test_an_agent_answers_with_an_mcp_tool(
    openai_server: OpenAIServer, mcp_server: MCPServer, agent: Callable[..., ToolLoopAgent]
) -> None:
    openai_server.add_rule("The capital of France is Paris.", role="tool", last_contains="Paris")
    openai_server.add_rule({"country": "France"}, tool="lookup_capital")

    result = agent(agent_model(openai_server, mcp_server)).run(QUESTION, RUN)

    assert mcp_server.tool_calls("lookup_capital") == [{"country": "France"}]
    assert result.final_response == "The capital of France is Paris."
    assert not result.limit_reached and not result.timeout_reached
    assert result.turns == 2
    call, answer_to_call, final = result.trace_messages
    assert call["role"] == "assistant"
    assert call["tool_calls"] == [
        {
            "id": call["tool_calls"][0]["id"],
            "name": "lookup_capital",
            "input": {"country": "France"},
        }
    ]
    assert answer_to_call["role"] == "tool" and answer_to_call["content"] == "Paris"
    assert answer_to_call["tool_result"] == {
        "tool_use_id": call["tool_calls"][0]["id"],
        "is_error": False,
    }
    assert final == {
        "role": "assistant",
        "content": "The capital of France is Paris.",
        "block_index": 2,
    }
    assert result.usage.input_tokens and result.usage.output_tokens
    assert openai_server.chat_requests[0].messages[0]["content"] == "Answer briefly."


def test_a_looping_agent_stops_at_its_call_limit_without_a_made_up_answer(
    openai_server: OpenAIServer, mcp_server: MCPServer, agent: Callable[..., ToolLoopAgent]
) -> None:
    """Karenina bug 5: the limit middleware's notice became the answer the judge parsed."""
    openai_server.add_rule({"a": 1, "b": 1}, tool="add")
    limits = {"limits": {"model_call_limit": 3}}

    result = agent(agent_model(openai_server, mcp_server, agent_middleware=limits)).run(
        QUESTION, RUN
    )

    assert result.limit_reached and result.turns == 3
    assert len(mcp_server.tool_calls("add")) == 3
    assert all("limit" not in str(m.get("content")).lower() for m in result.trace_messages)
    assert result.final_response == ""


def test_a_failing_tool_is_marked_and_the_agent_goes_on(
    openai_server: OpenAIServer, mcp_server: MCPServer, agent: Callable[..., ToolLoopAgent]
) -> None:
    openai_server.add_rule("I could not find it.", role="tool")
    openai_server.add_rule({"reason": "testing"}, tool="broken")

    result = agent(agent_model(openai_server, mcp_server)).run(QUESTION, RUN)

    tool = next(m for m in result.trace_messages if m["role"] == "tool")
    assert tool["tool_result"]["is_error"] is True
    assert "broken tool: testing" in tool["content"]
    assert result.final_response == "I could not find it."


def test_a_slow_run_stops_at_its_time_limit_with_its_partial_trace(
    openai_server: OpenAIServer, mcp_server: MCPServer, agent: Callable[..., ToolLoopAgent]
) -> None:
    openai_server.add_rule({"seconds": 30}, tool="slow")

    result = agent(agent_model(openai_server, mcp_server)).run(
        QUESTION, AgentRunConfig("answer_generation", timeout=1.0)
    )

    assert result.timeout_reached and not result.limit_reached
    assert [m["role"] for m in result.trace_messages] == ["assistant"]
    assert result.trace_messages[0]["tool_calls"][0]["name"] == "slow"


def test_tool_filter_and_description_overrides_shape_what_the_model_sees(
    openai_server: OpenAIServer, mcp_server: MCPServer, agent: Callable[..., ToolLoopAgent]
) -> None:
    openai_server.add_rule("Paris.")
    model = agent_model(
        openai_server, mcp_server, mcp_tool_filter=["lookup_capital", "add"],
        mcp_tool_description_overrides={"add": "Adds numbers (overridden)."},
    )  # fmt: skip

    agent(model).run(QUESTION, RUN)

    offered = {tool["name"]: tool["description"] for tool in tools_offered(openai_server)}
    assert offered == {
        "add": "Adds numbers (overridden).",
        "lookup_capital": "The capital city of a country.",
    }


def test_the_sse_transport(
    openai_server: OpenAIServer, mcp_server: MCPServer, agent: Callable[..., ToolLoopAgent]
) -> None:
    openai_server.add_rule("The sum is 5.", role="tool")
    openai_server.add_rule({"a": 2, "b": 3}, tool="add")
    model = agent_model(openai_server, mcp_server).model_copy(
        update={"mcp_urls_dict": {"facts": mcp_server.sse_url}}
    )
    result = agent(model).run(QUESTION, RUN)
    assert mcp_server.tool_calls("add") == [{"a": 2, "b": 3}]
    assert result.final_response == "The sum is 5."


def test_model_calls_are_retried_by_the_runs_policy(
    openai_server: OpenAIServer, mcp_server: MCPServer, agent: Callable[..., ToolLoopAgent]
) -> None:
    events: list[RetryEvent] = []
    openai_server.script(Fault.server_error(503))
    openai_server.add_rule("Paris.")
    policy = {"server_error": {"max_attempts": 2, "backoff_min": 0, "backoff_max": 0}}
    model = agent_model(openai_server, mcp_server, retry_policy=policy)
    transport = TransportMiddleware(key="k", policy=model.retry_policy, on_retry=events.append)

    result = agent(model, transport=transport).run(QUESTION, RUN)

    assert result.final_response == "Paris."
    assert [(e.error_class, e.used) for e in events] == [("server_error", 1)]


def test_an_unreachable_mcp_server_is_an_agent_error_naming_it(
    openai_server: OpenAIServer, agent: Callable[..., ToolLoopAgent]
) -> None:
    model = ModelConfig(
        id="agent", model_name="test-model", interface="openai_endpoint",
        endpoint_base_url=openai_server.base_url, mcp_urls_dict={"gone": "http://127.0.0.1:9/mcp"},
    )  # fmt: skip
    with pytest.raises(AgentError, match=r"cannot list the tools of MCP server\(s\) gone"):
        agent(model).run(QUESTION, RUN)
    assert openai_server.chat_requests == []


def test_a_result_survives_json() -> None:
    from pytest_karenina.llm.agent_ports import AgentResult
    from pytest_karenina.llm.ports import Usage

    result = AgentResult("x", [{"role": "assistant", "content": "x", "block_index": 0}],
                         Usage(3, 4), turns=1, limit_reached=True, model="m")  # fmt: skip
    assert AgentResult.from_json(json.loads(json.dumps(result.to_json()))) == result


def test_the_langchain_interface_runs_the_same_loop(
    openai_server: OpenAIServer, mcp_server: MCPServer, agent: Callable[..., ToolLoopAgent]
) -> None:
    openai_server.add_rule("The capital of Italy is Rome.", role="tool", last_contains="Rome")
    openai_server.add_rule({"country": "Italy"}, tool="lookup_capital")
    model = ModelConfig(
        id="lc", model_name="test-model", model_provider="openai",
        extra_kwargs={"base_url": openai_server.base_url, "api_key": "test-key"},
        mcp_urls_dict={"facts": mcp_server.url},
    )  # fmt: skip

    result = agent(model).run(QUESTION, RUN)

    assert result.final_response == "The capital of Italy is Rome."
    assert mcp_server.tool_calls("lookup_capital") == [{"country": "Italy"}]


@pytest.mark.parametrize("limit", [6, None], ids=["limit-6", "default-25"])
@pytest.mark.parametrize("over", [False, True], ids=["at-limit", "one-past"])
def test_the_model_call_limit_the_user_sets_is_the_one_that_applies(
    openai_server: OpenAIServer,
    mcp_server: MCPServer,
    agent: Callable[..., ToolLoopAgent],
    limit: int | None,
    over: bool,
) -> None:
    """The graph's own recursion limit must never stop a run before ``model_call_limit``: an
    agent that answers at call == limit succeeds, one that needs limit + 1 is stopped there."""
    calls = limit or 25
    needed = calls + 1 if over else calls
    openai_server.add_rule({"a": 1, "b": 1}, tool="add", times=needed - 1)
    openai_server.add_rule("The sum is 2.")
    fields = {"agent_middleware": {"limits": {"model_call_limit": limit}}} if limit else {}

    result = agent(agent_model(openai_server, mcp_server, **fields)).run(QUESTION, RUN)

    assert len(openai_server.chat_requests) == calls
    assert result.turns == calls
    assert result.limit_reached is over
    assert result.final_response == ("" if over else "The sum is 2.")


def test_calls_refused_by_the_tool_call_limit_are_counted_apart(
    openai_server: OpenAIServer, mcp_server: MCPServer, agent: Callable[..., ToolLoopAgent]
) -> None:
    """One real call and three refused ones: the refusals are neither calls made nor failed
    calls (they showed as 4 calls, 3 failed)."""
    from pytest_karenina.results.agent_metrics import agent_metrics

    openai_server.add_rule({"a": 1, "b": 1}, tool="add", times=4)
    openai_server.add_rule("The sum is 2.")
    limits = {"limits": {"tool_call_limit": 1}}

    result = agent(agent_model(openai_server, mcp_server, agent_middleware=limits)).run(
        QUESTION, RUN
    )

    assert len(mcp_server.tool_calls("add")) == 1
    assert result.final_response == "The sum is 2." and not result.limit_reached
    metrics = agent_metrics(result.trace_messages)
    assert (metrics["tool_calls"], metrics["refused_tool_calls"]) == (1, 3)
    assert metrics["tool_call_counts"] == {"add": 1}
    assert metrics["suspect_failed_tool_calls"] == 0


def test_mcp_sessions_close_cleanly(
    openai_server: OpenAIServer, mcp_server: MCPServer, caplog: pytest.LogCaptureFixture
) -> None:
    """A session opened under ``asyncio.wait_for`` cannot be left on Python 3.11 (it was
    entered in another task): Karenina's MCP runs crash so, and ours failed to close."""
    openai_server.add_rule("Paris.")
    runner = ToolLoopAgent(agent_model(openai_server, mcp_server))

    assert runner.run(QUESTION, RUN).final_response == "Paris."
    with caplog.at_level("WARNING", logger="pytest_karenina.llm.agents.mcp_tools"):
        runner.close()

    assert caplog.records == []
