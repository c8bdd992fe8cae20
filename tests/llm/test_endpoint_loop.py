"""The ``openai_endpoint`` wire tool loop against LangChain's: both run the same scripted
conversations (the scripted OpenAI-compatible server, the real MCP test server), and every
request the server receives, every result, error, retry, MCP call and recorded replay entry
must be the same."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_karenina.config.model import ModelConfig
from pytest_karenina.llm.agent_ports import AgentError, AgentResult, AgentRunConfig
from pytest_karenina.llm.agents.endpoint_loop import EndpointToolLoop
from pytest_karenina.llm.agents.registry import agent_identity
from pytest_karenina.llm.agents.replay import ReplayingAgent
from pytest_karenina.llm.agents.tool_loop import ToolLoopAgent
from pytest_karenina.llm.agents.transport_middleware import TransportMiddleware
from pytest_karenina.llm.ports import ChatMessage, LLMCallError
from pytest_karenina.llm.replay import ReplayStore
from pytest_karenina.llm.transport import RetryEvent
from pytest_karenina.results.agent_metrics import agent_metrics
from tests.support.agents_extra import needs_agents_extra
from tests.support.openai_rules import Fault, ToolCalls
from tests.support.openai_server import OpenAIServer

if TYPE_CHECKING:
    from tests.support.mcp_server import MCPServer

pytestmark = needs_agents_extra

QUESTION = [ChatMessage("system", "Answer briefly."), ChatMessage("user", "Capital of France?")]
RUN = AgentRunConfig("answer_generation", question_id="q1")
SECRET = "sk-live-0123456789abcdef"
LOOPS: dict[str, type[ToolLoopAgent]] = {"langchain": ToolLoopAgent, "wire": EndpointToolLoop}
SENT_HEADERS = ("authorization", "content-type", "x-team")
"""The request headers compared (the openai SDK adds its own telemetry headers)."""


@dataclass
class Leg:
    """What one loop did in a conversation."""

    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    metrics: dict[str, Any] | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    mcp_calls: list[dict[str, Any]] = field(default_factory=list)
    retries: list[tuple[str, int, int]] = field(default_factory=list)
    replay: list[dict[str, Any]] = field(default_factory=list)
    user_agents: set[str] = field(default_factory=set)


def endpoint_model(server: OpenAIServer, mcp: MCPServer, **fields: Any) -> ModelConfig:
    return ModelConfig(
        id="agent", model_name="test-model", interface="openai_endpoint",
        endpoint_base_url=server.base_url, mcp_urls_dict={"facts": mcp.url}, **fields,
    )  # fmt: skip


def run_leg(
    loop: type[ToolLoopAgent],
    model: ModelConfig,
    server: OpenAIServer,
    mcp: MCPServer,
    store: Path,
    messages: list[ChatMessage],
    run: AgentRunConfig,
) -> Leg:
    leg = Leg()
    events: list[RetryEvent] = []
    transport = TransportMiddleware(
        key="k", policy=model.retry_policy, on_retry=events.append, secrets=(SECRET,)
    )
    agent = loop(model, transport=transport)
    replay = ReplayStore(store, "record")
    port = ReplayingAgent(agent, replay, agent_identity(model))
    try:
        result = port.run(messages, run)
        leg.result = result.to_json()
        leg.metrics = agent_metrics(result.trace_messages, limit_reached=result.limit_reached)
    except LLMCallError as exc:
        partial = exc.partial.to_json() if isinstance(exc, AgentError) and exc.partial else None
        leg.error = {"type": type(exc).__name__, "partial": partial,
                     "class": getattr(exc, "error_class", None)}  # fmt: skip
        if isinstance(exc, AgentError):  # a model call's error names its client's exception
            leg.error["reason"] = exc.reason
    finally:
        agent.close()
    for request in server.chat_requests:
        headers = {name.lower(): value for name, value in request.headers.items()}
        leg.requests.append({
            "path": request.path, "body": request.body,
            "headers": {name: headers.get(name) for name in SENT_HEADERS},
        })  # fmt: skip
        leg.user_agents.add(headers.get("user-agent", ""))
    leg.mcp_calls = list(mcp.calls)
    leg.retries = [(e.error_class, e.used, e.attempt) for e in events]
    if store.exists():
        for line in store.read_text().splitlines():
            entry = json.loads(line)
            entry.pop("recorded_at", None)
            leg.replay.append(entry)
    return leg


def converse(
    server: OpenAIServer,
    mcp: MCPServer,
    tmp_path: Path,
    script: Callable[[OpenAIServer, MCPServer], None],
    *,
    model: ModelConfig | None = None,
    messages: list[ChatMessage] = QUESTION,
    run: AgentRunConfig = RUN,
) -> dict[str, Leg]:
    """Each loop's leg of the same conversation (the server and MCP logs reset between)."""
    legs: dict[str, Leg] = {}
    for name, loop in LOOPS.items():
        server.reset()
        mcp.reset()
        script(server, mcp)
        chosen = model or endpoint_model(server, mcp)
        legs[name] = run_leg(loop, chosen, server, mcp, tmp_path / f"{name}.jsonl", messages, run)
    return legs


def assert_same(legs: dict[str, Leg]) -> Leg:
    """Both legs did the same; the wire leg never went through the openai SDK."""
    old, new = legs["langchain"], legs["wire"]
    assert any("OpenAI" in agent for agent in old.user_agents)
    assert not any("OpenAI" in agent for agent in new.user_agents)
    assert new.result == old.result
    assert new.error == old.error
    assert new.metrics == old.metrics
    assert new.requests == old.requests
    assert new.mcp_calls == old.mcp_calls
    assert new.retries == old.retries
    assert new.replay == old.replay
    return new


def test_one_tool_call_then_the_answer(
    openai_server: OpenAIServer, mcp_server: MCPServer, tmp_path: Path
) -> None:
    def script(server: OpenAIServer, mcp: MCPServer) -> None:
        server.add_rule("The capital of France is Paris.", role="tool", last_contains="Paris")
        server.add_rule({"country": "France"}, tool="lookup_capital")

    leg = assert_same(converse(openai_server, mcp_server, tmp_path, script))
    assert leg.result is not None and leg.result["final_response"].endswith("Paris.")
    assert len(leg.requests) == 2 and len(leg.replay) == 1 and leg.mcp_calls


def test_three_calls_in_one_reply_then_more(
    openai_server: OpenAIServer, mcp_server: MCPServer, tmp_path: Path
) -> None:
    """Parallel calls: results in call order, an unknown tool's error result, a failing tool."""

    def script(server: OpenAIServer, mcp: MCPServer) -> None:
        calls = (("add", {"a": 1, "b": 2}), ("no_such_tool", {}), ("broken", {"reason": "x"}))
        server.add_rule(ToolCalls(calls), times=1)
        server.add_rule({"country": "Italy"}, tool="lookup_capital", role="tool", times=1)
        server.add_rule("Done: 3, Rome.", role="tool")

    leg = assert_same(converse(openai_server, mcp_server, tmp_path, script))
    assert leg.metrics is not None and leg.metrics["suspect_failed_tool_calls"] == 2
    assert [m["role"] for m in leg.result["trace_messages"]] == [  # type: ignore[index]
        "assistant", "tool", "tool", "tool", "assistant", "tool", "assistant",
    ]  # fmt: skip


def test_the_model_call_limit(
    openai_server: OpenAIServer, mcp_server: MCPServer, tmp_path: Path
) -> None:
    def script(server: OpenAIServer, mcp: MCPServer) -> None:
        server.add_rule({"a": 1, "b": 1}, tool="add")

    limits = {"limits": {"model_call_limit": 3}}
    model = endpoint_model(openai_server, mcp_server, agent_middleware=limits)
    leg = assert_same(converse(openai_server, mcp_server, tmp_path, script, model=model))
    assert leg.result is not None and leg.result["limit_reached"] and leg.result["turns"] == 3


def test_the_tool_call_limit_refuses_calls_in_and_across_replies(
    openai_server: OpenAIServer, mcp_server: MCPServer, tmp_path: Path
) -> None:
    def script(server: OpenAIServer, mcp: MCPServer) -> None:
        server.add_rule(ToolCalls((("add", {"a": 1, "b": 1}),) * 3), times=1)
        server.add_rule({"a": 2, "b": 2}, tool="add", times=1)
        server.add_rule("The sum is 2.")

    limits = {"limits": {"tool_call_limit": 2}}
    model = endpoint_model(openai_server, mcp_server, agent_middleware=limits)
    leg = assert_same(converse(openai_server, mcp_server, tmp_path, script, model=model))
    assert leg.metrics is not None
    assert (leg.metrics["tool_calls"], leg.metrics["refused_tool_calls"]) == (2, 2)


def test_a_run_stopped_by_its_time_limit_keeps_its_finished_steps(
    openai_server: OpenAIServer, mcp_server: MCPServer, tmp_path: Path
) -> None:
    def script(server: OpenAIServer, mcp: MCPServer) -> None:
        server.add_rule({"a": 1, "b": 1}, tool="add", times=1)
        server.add_rule({"seconds": 30}, tool="slow")

    run = AgentRunConfig("answer_generation", question_id="q1", timeout=1.5)
    leg = assert_same(converse(openai_server, mcp_server, tmp_path, script, run=run))
    assert leg.result is not None and leg.result["timeout_reached"]
    assert leg.replay == []  # a run cut short by the clock is not recorded


def test_secrets_are_scrubbed_from_tool_results_and_replies(
    openai_server: OpenAIServer, mcp_server: MCPServer, tmp_path: Path
) -> None:
    def script(server: OpenAIServer, mcp: MCPServer) -> None:
        (mcp.notes_dir / "key.txt").write_text(f"the key is {SECRET}")
        server.add_rule(f"It says {SECRET}.", role="tool")
        server.add_rule({"name": "key.txt"}, tool="read_note")

    leg = assert_same(converse(openai_server, mcp_server, tmp_path, script))
    assert SECRET not in json.dumps([leg.result, leg.requests[1:], leg.replay])
    assert "***" in json.dumps(leg.requests[1]["body"])


def test_retries_and_a_call_that_fails_for_good(
    openai_server: OpenAIServer, mcp_server: MCPServer, tmp_path: Path
) -> None:
    def script(server: OpenAIServer, mcp: MCPServer) -> None:
        server.script(Fault.server_error(503))
        server.add_rule({"a": 1, "b": 1}, tool="add", times=1)
        server.add_rule(Fault.http_error(400, "bad request"))

    policy = {"server_error": {"max_attempts": 2, "backoff_min": 0, "backoff_max": 0}}
    model = endpoint_model(openai_server, mcp_server, retry_policy=policy)
    leg = assert_same(converse(openai_server, mcp_server, tmp_path, script, model=model))
    assert leg.retries == [("server_error", 1, 1)]
    assert leg.error is not None and leg.error["type"] == "TransportError"


def test_headers_body_options_and_a_conversation_with_history(
    openai_server: OpenAIServer, mcp_server: MCPServer, tmp_path: Path
) -> None:
    def script(server: OpenAIServer, mcp: MCPServer) -> None:
        server.add_rule("Rome.", role="tool")
        server.add_rule({"country": "Italy"}, tool="lookup_capital")

    model = endpoint_model(
        openai_server, mcp_server, temperature=0.7, max_tokens=64,
        endpoint_api_key="key-123",
        extra_kwargs={"top_p": 0.5, "default_headers": {"X-Team": "qa"},
                      "extra_body": {"seed": 7}, "timeout": 30},
        mcp_tool_filter=["lookup_capital"],
        mcp_tool_description_overrides={"lookup_capital": "Capitals (overridden)."},
    )  # fmt: skip
    history = [ChatMessage("user", "Hi."), ChatMessage("assistant", "Hello."), QUESTION[1]]
    leg = assert_same(
        converse(openai_server, mcp_server, tmp_path, script, model=model, messages=history)
    )
    assert leg.requests[0]["headers"]["x-team"] == "qa"
    assert leg.requests[0]["body"]["seed"] == 7 and "system" not in json.dumps(leg.requests)


def test_basic_auth_in_the_url(
    openai_server: OpenAIServer, mcp_server: MCPServer, tmp_path: Path
) -> None:
    def script(server: OpenAIServer, mcp: MCPServer) -> None:
        server.add_rule("Paris.")

    url = openai_server.base_url.replace("http://", "http://user:pw@")
    model = endpoint_model(openai_server, mcp_server).model_copy(update={"endpoint_base_url": url})
    leg = assert_same(converse(openai_server, mcp_server, tmp_path, script, model=model))
    assert str(leg.requests[0]["headers"]["authorization"]).startswith("Basic")


def test_an_unreachable_mcp_server(
    openai_server: OpenAIServer, mcp_server: MCPServer, tmp_path: Path
) -> None:
    def script(server: OpenAIServer, mcp: MCPServer) -> None:
        server.add_rule("Paris.")

    model = endpoint_model(openai_server, mcp_server).model_copy(
        update={"mcp_urls_dict": {"gone": "http://127.0.0.1:9/mcp"}}
    )
    legs = converse(openai_server, mcp_server, tmp_path, script, model=model)
    assert legs["wire"].error == legs["langchain"].error is not None
    assert legs["wire"].requests == legs["langchain"].requests == []


@pytest.mark.parametrize("interface", ["openai_endpoint", "openrouter"])
def test_the_run_builds_the_wire_loop_for_endpoint_models(interface: str) -> None:
    from pytest_karenina.config.verification import VerificationConfig
    from pytest_karenina.pipeline.agent_stack import default_agent

    model = ModelConfig(
        id="a", model_name="m", interface=interface, endpoint_base_url="http://127.0.0.1:9/v1",
        endpoint_api_key="k", mcp_urls_dict={"x": "http://127.0.0.1:9/mcp"},
    )  # fmt: skip
    config = VerificationConfig(answering_models=[model], parsing_models=[model])
    assert isinstance(default_agent(model, config, ()), EndpointToolLoop)


def test_a_given_chat_model_runs_on_langchains_loop() -> None:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    model = ModelConfig(
        id="a", model_name="m", interface="openai_endpoint", endpoint_base_url="http://x/v1"
    )
    chat = GenericFakeChatModel(messages=iter([AIMessage("Paris.")]))
    agent = EndpointToolLoop(model, chat_model=chat)
    result: AgentResult = agent.run(QUESTION, RUN)
    assert result.final_response == "Paris."


def test_an_openrouter_model_without_a_key(
    openai_server: OpenAIServer,
    mcp_server: MCPServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def script(server: OpenAIServer, mcp: MCPServer) -> None:
        server.add_rule("Paris.")

    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    model = ModelConfig(
        id="router", model_name="test-model", interface="openrouter",
        endpoint_base_url=openai_server.base_url, mcp_urls_dict={"facts": mcp_server.url},
    )  # fmt: skip
    legs = converse(openai_server, mcp_server, tmp_path, script, model=model)
    assert legs["wire"].error == legs["langchain"].error is not None
    assert "OPENROUTER_API_KEY" in str(legs["wire"].error)
    assert legs["wire"].requests == legs["langchain"].requests == []
