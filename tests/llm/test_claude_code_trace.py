"""A Claude Code run's messages (the SDK's own message classes) as ``trace_messages`` and usage."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_karenina.llm.agents.claude_code import prompt_text
from pytest_karenina.llm.agents.claude_code_trace import (
    TOOL_LIMIT_REFUSAL,
    run_usage,
    trace_messages,
)
from pytest_karenina.llm.ports import ChatMessage, Usage
from pytest_karenina.results.agent_metrics import agent_metrics
from tests.support.claude_cli import needs_claude_extra

pytestmark = needs_claude_extra


@pytest.fixture
def sdk() -> Any:
    import claude_agent_sdk

    return claude_agent_sdk


def reply(sdk: Any, message_id: str, *blocks: Any, **usage: int) -> list[Any]:
    """A model reply as the CLI reports it: one AssistantMessage per content block."""
    return [
        sdk.AssistantMessage(content=[block], model="claude-x", message_id=message_id,
                             usage=usage or {"input_tokens": 10, "output_tokens": 1})
        for block in blocks
    ]  # fmt: skip


def results(sdk: Any, *blocks: Any) -> Any:
    return sdk.UserMessage(content=list(blocks))


def test_one_turn_per_reply_with_its_text_thinking_and_calls(sdk: Any) -> None:
    messages = [
        sdk.SystemMessage(subtype="init", data={}),
        sdk.UserMessage(content="Compute it."),
        *reply(sdk, "m1", sdk.ThinkingBlock("Let me look.", "sig"), sdk.TextBlock("Reading."),
               sdk.ToolUseBlock("t1", "Read", {"file_path": "a.txt"}),
               sdk.ToolUseBlock("t2", "Glob", {"pattern": "*"})),
        results(sdk, sdk.ToolResultBlock("t1", "1\t42"),
                sdk.ToolResultBlock("t2", [{"type": "text", "text": "a.txt"}])),
        *reply(sdk, "m2", sdk.TextBlock("It is 42.")),
    ]  # fmt: skip

    trace = trace_messages(messages)

    assert trace == [
        {"role": "assistant", "content": "Reading.", "block_index": 0, "thinking": "Let me look.",
         "tool_calls": [{"id": "t1", "name": "Read", "input": {"file_path": "a.txt"}},
                        {"id": "t2", "name": "Glob", "input": {"pattern": "*"}}]},
        {"role": "tool", "content": "1\t42", "block_index": 1, "name": "Read",
         "tool_result": {"tool_use_id": "t1", "is_error": False}},
        {"role": "tool", "content": "a.txt", "block_index": 2, "name": "Glob",
         "tool_result": {"tool_use_id": "t2", "is_error": False}},
        {"role": "assistant", "content": "It is 42.", "block_index": 3},
    ]  # fmt: skip


def test_refusals_are_errors_and_the_limits_refusals_say_so(sdk: Any) -> None:
    denied = "Permission to use Write has been denied because Claude Code is running in ..."
    messages = [
        *reply(sdk, "m1", sdk.ToolUseBlock("t1", "Write", {}), sdk.ToolUseBlock("t2", "Read", {})),
        results(sdk, sdk.ToolResultBlock("t1", denied),
                sdk.ToolResultBlock("t2", "PreToolUse:Read hook error: ...", is_error=True)),
        *reply(sdk, "m2", sdk.TextBlock("Done.")),
    ]  # fmt: skip

    trace = trace_messages(messages, refused=frozenset({"t2"}))

    assert [m["tool_result"]["is_error"] for m in trace if m["role"] == "tool"] == [True, True]
    assert trace[2]["content"] == TOOL_LIMIT_REFUSAL
    metrics = agent_metrics(trace)
    assert (metrics["suspect_failed_tool_calls"], metrics["refused_tool_calls"]) == (1, 1)


def test_the_text_the_cli_makes_up_for_a_failed_call_is_no_reply(sdk: Any) -> None:
    failed = sdk.AssistantMessage(content=[sdk.TextBlock("API Error: 500 ...")], model="x",
                                  error="server_error", message_id="m2")  # fmt: skip

    assert trace_messages([*reply(sdk, "m1", sdk.TextBlock("Hi.")), failed]) == [
        {"role": "assistant", "content": "Hi.", "block_index": 0}
    ]


def test_usage_is_the_runs_total_with_cached_tokens_else_each_reply_once(sdk: Any) -> None:
    replies = [*reply(sdk, "m1", sdk.TextBlock("a"), sdk.TextBlock("b"), input_tokens=10,
                      cache_read_input_tokens=90, output_tokens=1),
               *reply(sdk, "m2", sdk.TextBlock("c"), input_tokens=20, output_tokens=2)]  # fmt: skip
    ended = sdk.ResultMessage(
        subtype="success", duration_ms=1, duration_api_ms=1, is_error=False, num_turns=2,
        session_id="s", usage={"input_tokens": 30, "cache_creation_input_tokens": 5,
                               "cache_read_input_tokens": 90, "output_tokens": 40},
    )  # fmt: skip

    assert run_usage([*replies, ended]) == Usage(125, 40)
    assert run_usage(replies) == Usage(120, 3)
    assert run_usage([]) == Usage()


def test_the_prompt_is_the_turns_and_the_system_prompt_the_system_turns() -> None:
    system, prompt = prompt_text(
        [ChatMessage("system", "A."), ChatMessage("system", "B."), ChatMessage("user", "Q?")]
    )
    assert (system, prompt) == ("A.\n\nB.", "Q?")
    _, several = prompt_text(
        [ChatMessage("user", "Q?"), ChatMessage("assistant", "R."), ChatMessage("user", "Sure?")]
    )
    assert several == "Q?\n\n[assistant]\nR.\n\nSure?"
    assert prompt_text([ChatMessage("user", "Q?")])[0] is None
