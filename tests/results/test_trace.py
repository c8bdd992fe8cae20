"""The trace text format (spec 5.9): rendering messages and extracting the final AI message."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_karenina.results import (
    TraceError,
    final_ai_message,
    prepare_evaluation_input,
    render_trace,
)

AGENT_MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief.", "block_index": 0},
    {"role": "user", "content": "Which gene?", "block_index": 1},
    {
        "role": "assistant",
        "content": "Let me search.",
        "block_index": 2,
        "thinking": "The user wants a gene.",
        "tool_calls": [{"id": "abc", "name": "search", "input": {"q": "KRAS"}}],
    },
    {
        "role": "tool",
        "content": "KRAS is a gene.",
        "block_index": 3,
        "tool_result": {"tool_use_id": "abc", "is_error": False},
    },
    {
        "role": "assistant",
        "content": "",
        "block_index": 4,
        "tool_calls": [{"id": "def", "name": "fetch", "input": {}}],
    },
    {
        "role": "tool",
        "content": "404",
        "block_index": 5,
        "tool_result": {"tool_use_id": "def", "is_error": True},
    },
    {"role": "assistant", "content": "The answer is KRAS.", "block_index": 6},
]

AGENT_TRACE = """--- Thinking ---
The user wants a gene.

--- AI Message ---
Let me search.
Tool Calls:
  search (call_abc)
   Call ID: abc
   Args: {'q': 'KRAS'}

--- Tool Message (call_id: abc) ---
KRAS is a gene.

--- AI Message ---

Tool Calls:
  fetch (call_def)
   Call ID: def

--- Tool Message (call_id: def) ---
[ERROR] 404

--- AI Message ---
The answer is KRAS."""


def test_plain_answer() -> None:
    assert render_trace([{"role": "assistant", "content": "4"}]) == "--- AI Message ---\n4"


def test_agent_trace_layout() -> None:
    assert render_trace(AGENT_MESSAGES) == AGENT_TRACE


def test_user_and_system_messages_are_omitted() -> None:
    messages = [{"role": "user", "content": "hi"}, {"role": "system", "content": "sys"}]
    assert render_trace(messages) == ""


def test_empty_assistant_message_renders_nothing() -> None:
    assert render_trace([{"role": "assistant", "content": ""}]) == ""


def test_content_parts_and_tool_call_id_fallback() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "ai", "content": [{"type": "text", "text": "a"}, {"type": "image"}, "b"]},
        {"role": "tool", "content": "r", "tool_call_id": "x1"},
    ]
    assert render_trace(messages) == (
        "--- AI Message ---\na\nb\n\n--- Tool Message (call_id: x1) ---\nr"
    )


def test_final_message_of_an_agent_trace() -> None:
    assert final_ai_message(AGENT_TRACE) == "The answer is KRAS."


def test_final_message_of_a_plain_answer() -> None:
    assert final_ai_message("--- AI Message ---\n  4  \n") == "4"


def test_text_without_headers_is_the_answer() -> None:
    assert final_ai_message("  just text\nover lines  ") == "just text\nover lines"


def test_final_message_drops_its_tool_calls() -> None:
    trace = "--- AI Message ---\nDone.\nTool Calls:\n  x (call_1)\n   Call ID: 1"
    assert final_ai_message(trace) == "Done."


@pytest.mark.parametrize(
    ("trace", "message"),
    [
        ("", "Empty or whitespace-only trace"),
        ("  \n\t ", "Empty or whitespace-only trace"),
        (AGENT_TRACE.rsplit("\n\n", 1)[0], "Last message in trace is not an AI message"),
        ("--- Thinking ---\nhmm", "Last message in trace is not an AI message"),
        (
            "--- AI Message ---\n\nTool Calls:\n  f (call_1)\n   Call ID: 1",
            "Final AI message has no text content (only tool calls)",
        ),
        ("--- AI Message ---\n   ", "Final AI message has no text content (only tool calls)"),
    ],
)
def test_extraction_errors(trace: str, message: str) -> None:
    with pytest.raises(TraceError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        final_ai_message(trace)


def test_trace_error_is_a_value_error() -> None:
    assert issubclass(TraceError, ValueError)


def test_prepare_evaluation_input() -> None:
    assert prepare_evaluation_input(AGENT_TRACE, True) == (AGENT_TRACE, None)
    assert prepare_evaluation_input(AGENT_TRACE, False) == ("The answer is KRAS.", None)
    broken = "--- Tool Message (call_id: 1) ---\nx"
    assert prepare_evaluation_input(broken, False) == (
        broken,
        "Failed to extract final AI message: Last message in trace is not an AI message",
    )


def long_tool_trace(size: int) -> list[dict[str, Any]]:
    return [
        {"role": "assistant", "content": "", "block_index": 0,
         "tool_calls": [{"id": "t1", "name": "fetch", "input": {}}]},
        {"role": "tool", "content": "y" * size, "block_index": 1,
         "tool_result": {"tool_use_id": "t1", "is_error": False}},
        {"role": "assistant", "content": "Done.", "block_index": 2},
    ]  # fmt: skip


def test_a_stored_trace_text_cuts_long_tool_results_to_a_preview() -> None:
    from pytest_karenina.results.trace import TOOL_PREVIEW, stored_trace_text

    trace = long_tool_trace(TOOL_PREVIEW + 500)
    stored = stored_trace_text(render_trace(trace), trace)

    assert "y" * TOOL_PREVIEW + "\n[... 500 more characters: trace_messages[1]]" in stored
    assert "y" * (TOOL_PREVIEW + 1) not in stored
    assert final_ai_message(stored) == "Done."


@pytest.mark.parametrize("case", ["short tool result", "not the rendering"])
def test_a_stored_trace_text_is_otherwise_the_text_itself(case: str) -> None:
    from pytest_karenina.results.trace import TOOL_PREVIEW, stored_trace_text

    if case == "short tool result":
        trace = long_tool_trace(TOOL_PREVIEW)
        text = render_trace(trace)
    else:
        trace = long_tool_trace(TOOL_PREVIEW + 1)
        text = "--- AI Message ---\nsomething else"
    assert stored_trace_text(text, trace) is text
