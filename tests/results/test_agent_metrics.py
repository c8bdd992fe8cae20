"""``agent_metrics`` counted from trace messages, Karenina's recorded traces included."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_karenina.llm.adapters.manual_model import ManualModel
from pytest_karenina.llm.ports import ModelRequest
from pytest_karenina.results.agent_metrics import (
    agent_metrics,
    describe_agent,
    failed_tool_result,
)

RECORDINGS = Path(__file__).parent.parent / "data" / "karenina_agent_recordings"


def call(call_id: str, name: str) -> dict[str, object]:
    return {"id": call_id, "name": name, "input": {}}


def result(call_id: str, text: str, *, is_error: bool = False) -> dict[str, object]:
    return {"role": "tool", "content": text,
            "tool_result": {"tool_use_id": call_id, "is_error": is_error}}  # fmt: skip


def test_counts_turns_calls_tools_and_failures() -> None:
    trace = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [call("a", "search"), call("b", "fetch")],
        },
        result("a", "3 hits"),
        result("b", "timeout upstream", is_error=True),
        {"role": "assistant", "content": "", "tool_calls": [call("c", "search")]},
        result("c", "Error executing tool search: bad query"),
        {"role": "assistant", "content": "Done."},
    ]
    assert agent_metrics(trace, limit_reached=True) == {
        "iterations": 3, "tool_calls": 3, "tools_used": ["fetch", "search"],
        "tool_call_counts": {"fetch": 1, "search": 2}, "refused_tool_calls": 0,
        "suspect_failed_tool_calls": 2, "suspect_failed_tools": ["fetch", "search"],
        "limit_reached": True,
    }  # fmt: skip


def test_calls_the_tool_call_limit_refused_are_counted_apart() -> None:
    refusal = "Tool call limit exceeded. Do not make additional tool calls."
    trace = [
        {"role": "assistant", "content": "", "tool_calls": [call("a", "add")]},
        result("a", "2"),
        {"role": "assistant", "content": "", "tool_calls": [call("b", "add"), call("c", "mul")]},
        {**result("b", refusal, is_error=True), "name": "add"},
        {**result("c", "Tool call limit exceeded. Do not call 'mul' again.", is_error=True),
         "name": "mul"},
        {"role": "assistant", "content": "It is 2."},
    ]  # fmt: skip
    metrics = agent_metrics(trace)
    assert metrics["tool_calls"] == 1 and metrics["refused_tool_calls"] == 2
    assert metrics["tool_call_counts"] == {"add": 1} and metrics["tools_used"] == ["add"]
    assert metrics["suspect_failed_tool_calls"] == 0 and metrics["suspect_failed_tools"] == []
    assert describe_agent(metrics) == (
        "3 model calls, 1 tool calls (add 1); 2 refused by the tool call limit"
    )
    assert not failed_tool_result(result("x", refusal, is_error=True))
    assert failed_tool_result(result("x", f"{refusal} Also: a crash.", is_error=True))


def test_answers_that_mention_errors_are_not_failed_calls() -> None:
    """Karenina bug 13: any output matching error|failed|invalid|not found|500 counted."""
    for text in ("Gene not found in 500 of 612 studies.", "Invalid values were removed.",
                 "The failed trial (error bars in Fig. 2) ..."):  # fmt: skip
        assert not failed_tool_result(result("x", text))
    assert failed_tool_result(result("x", "[ERROR] boom"))
    assert failed_tool_result(result("x", "fine", is_error=True))


def test_kareninas_recorded_failures_are_found() -> None:
    """Its traces report failed calls as text with ``is_error`` false."""
    data = json.loads((RECORDINGS / "trace_ef6792eb3a399334.json").read_text())
    reply = ManualModel({"q": data}).invoke(ModelRequest((), "answer_generation", question_id="q"))
    metrics = agent_metrics(reply.trace_messages or [])
    assert metrics["suspect_failed_tool_calls"] >= 1
    assert "query_open_targets_graphql" in metrics["suspect_failed_tools"]
    assert metrics["tool_calls"] == sum(metrics["tool_call_counts"].values())
