"""GenerateAnswer's agent path and the guards, through ``run_verification`` with real parts:
the answering agent calls the scripted OpenAI-compatible server and the MCP test server;
the judge is a plain model on the same server (told apart by model name)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_karenina.checkpoint import Benchmark, Question
from pytest_karenina.config.verification import VerificationConfig
from pytest_karenina.llm.replay import ReplayStore
from pytest_karenina.pipeline.llm_stack import LLMStack
from pytest_karenina.pipeline.run import run_verification
from pytest_karenina.results import VerificationResult
from pytest_karenina.results.trace import render_trace
from tests.pipeline.pipeline_helpers import CLASSIC
from tests.support.agents_extra import needs_agents_extra
from tests.support.openai_server import OpenAIServer

if TYPE_CHECKING:
    from tests.support.mcp_server import MCPServer

pytestmark = needs_agents_extra

RECORDINGS = Path(__file__).parent.parent / "data" / "karenina_agent_recordings"
"""Karenina's recorded agent runs (claude-haiku-4-5): a claude_tool trace and mcp_agent calls."""
QUESTION = Question(id="q1", text="What is the capital of France?", raw_answer="Paris",
                    template_code=CLASSIC, finished=True)  # fmt: skip


def models(server: OpenAIServer, mcp: MCPServer, **agent: Any) -> dict[str, Any]:
    base = {"interface": "openai_endpoint", "endpoint_base_url": server.base_url}
    return {
        "answering_models": [{**base, "id": "agent", "model_name": "agent-model",
                              "mcp_urls_dict": {"facts": mcp.url}, **agent}],
        "parsing_models": [{**base, "id": "judge", "model_name": "judge-model"}],
    }  # fmt: skip


def script(server: OpenAIServer, answer: str = "The capital of France is Paris.") -> None:
    server.add_rule({"capital": answer.split()[-1].rstrip(".")}, model="judge-model")
    server.add_rule(answer, model="agent-model", role="tool")
    server.add_rule({"country": "France"}, model="agent-model", tool="lookup_capital")


def run(server: OpenAIServer, mcp: MCPServer, **options: Any) -> VerificationResult:
    agent = options.pop("agent", {})
    config = VerificationConfig(**models(server, mcp, **agent), **options)
    (result,) = run_verification(Benchmark(name="b", questions=[QUESTION]), config).results
    return result


def test_an_mcp_agent_answers_and_its_trace_reaches_the_result(
    openai_server: OpenAIServer, mcp_server: MCPServer
) -> None:
    script(openai_server)

    result = run(openai_server, mcp_server)

    template = result.template
    assert template is not None and result.verify_result is True
    trace = template.trace_messages or []
    assert [m["role"] for m in trace] == ["assistant", "tool", "assistant"]
    assert template.raw_llm_response == render_trace(trace)
    assert "--- Tool Message (call_id:" in template.raw_llm_response
    assert template.answering_mcp_servers == ["facts"]
    assert template.recursion_limit_reached is False
    assert template.agent_metrics == {
        "iterations": 2, "tool_calls": 1, "tools_used": ["lookup_capital"],
        "tool_call_counts": {"lookup_capital": 1}, "refused_tool_calls": 0,
        "suspect_failed_tool_calls": 0, "suspect_failed_tools": [], "limit_reached": False,
    }  # fmt: skip
    usage = template.usage_metadata or {}
    assert usage["answer_generation"]["input_tokens"] > 0
    assert result.metadata.answering.tools == ["facts"]
    # The judge reads the final answer, not the tool traffic.
    judge = [r for r in openai_server.chat_requests if r.model == "judge-model"]
    assert "The capital of France is Paris." in judge[0].text


def test_an_agent_at_its_call_limit_fails_at_stage_3(
    openai_server: OpenAIServer, mcp_server: MCPServer
) -> None:
    """Karenina bug 12: a note about the limit was appended to the raw trace, where rubric
    regex and callable traits saw it."""
    openai_server.add_rule({"a": 1, "b": 2}, model="agent-model", tool="add")

    result = run(openai_server, mcp_server, agent={
        "agent_middleware": {"limits": {"model_call_limit": 2}}
    })  # fmt: skip

    template = result.template
    assert template is not None and template.recursion_limit_reached is True
    assert result.verify_result is False
    failure = result.metadata.failure
    assert failure is not None and failure.category == "recursion_limit"
    assert (template.agent_metrics or {})["limit_reached"] is True
    assert "limit" not in template.raw_llm_response.lower()
    assert [r.model for r in openai_server.chat_requests] == ["agent-model"] * 2  # no judge


def test_a_trace_ending_in_a_tool_result_fails_trace_validation(
    openai_server: OpenAIServer, mcp_server: MCPServer
) -> None:
    # The agent's last reply is empty: it never answers after the tool result.
    openai_server.add_rule("", model="agent-model", role="tool")
    openai_server.add_rule({"country": "France"}, model="agent-model", tool="lookup_capital")

    result = run(openai_server, mcp_server)

    failure = result.metadata.failure
    assert failure is not None and failure.category == "trace_validation"
    assert result.trace_extraction_error == "Final AI message has no text content (only tool calls)"


def test_a_timed_out_agent_errors_the_item_and_keeps_its_partial_trace(
    openai_server: OpenAIServer, mcp_server: MCPServer
) -> None:
    """Without partial scoring (tests/pipeline/test_partial_traces.py has the default)."""
    openai_server.add_rule({"seconds": 30}, model="agent-model", tool="slow")

    result = run(
        openai_server, mcp_server, agent={"agent_timeout": 1}, allow_partial_trace_scoring=False
    )

    template = result.template
    assert template is not None and template.response_timeout_partial is True
    assert [m["role"] for m in template.trace_messages or []] == ["assistant"]
    failure = result.metadata.failure
    assert failure is not None and failure.category == "timeout"
    assert "did not finish within its time limit" in (result.metadata.error or "")


def test_a_recorded_agent_run_replays_strictly_without_any_server(
    openai_server: OpenAIServer, mcp_server: MCPServer, tmp_path: Path
) -> None:
    script(openai_server)
    config = VerificationConfig(**models(openai_server, mcp_server))
    store = tmp_path / "calls.jsonl"
    benchmark = Benchmark(name="b", questions=[QUESTION])
    recording = LLMStack(config, replay=ReplayStore(store, "record"))
    (recorded,) = run_verification(benchmark, config, llm=recording).results
    kinds = [json.loads(line)["call_kind"] for line in store.read_text().splitlines()]
    assert sorted(kinds) == ["answer_generation", "parsing"]  # one entry for the whole run
    calls = len(mcp_server.calls)

    replaying = LLMStack(config, replay=ReplayStore(store, "strict"))
    (replayed,) = run_verification(benchmark, config, llm=replaying).results

    assert len(mcp_server.calls) == calls  # no tool was called again
    assert replayed.verify_result is True
    assert replayed.template is not None and recorded.template is not None
    assert replayed.template.trace_messages == recorded.template.trace_messages


@pytest.mark.parametrize("path", sorted(RECORDINGS.glob("*.json")), ids=lambda p: p.name[:12])
def test_karenina_recorded_agent_traces_read_as_manual_answers(path: Path) -> None:
    """Karenina's recorded agent conversations are judged without running the agent."""
    from pytest_karenina.llm.adapters.manual_model import ManualModel
    from pytest_karenina.llm.ports import ModelRequest

    reply = ManualModel({"q": json.loads(path.read_text())}).invoke(
        ModelRequest((), "answer_generation", question_id="q")
    )
    trace = reply.trace_messages or []
    assert trace and reply.text == render_trace(trace)
    assert {m["role"] for m in trace} <= {"assistant", "tool"}
    calls = [c for m in trace for c in m.get("tool_calls", [])]
    results = [m for m in trace if m["role"] == "tool"]
    assert calls and trace[0]["role"] == "assistant"
    assert {r["tool_result"]["tool_use_id"] for r in results} <= {c["id"] for c in calls}
