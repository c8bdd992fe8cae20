"""The agent conversation block of the HTML report: how each tool call is marked."""

from __future__ import annotations

from typing import Any

from pytest_karenina.plugin.report.conversation import conversation_html

REFUSAL = "Tool call limit exceeded. Do not make additional tool calls."


def _tool(call_id: str, content: str, *, is_error: bool = False) -> dict[str, Any]:
    return {
        "role": "tool",
        "content": content,
        "tool_result": {"tool_use_id": call_id, "is_error": is_error},
    }


def test_made_failed_and_refused_calls_are_told_apart() -> None:
    calls = [{"id": f"c{n}", "name": "lookup", "input": {"q": n}} for n in range(3)]
    trace = [
        {"role": "assistant", "content": "", "tool_calls": calls},
        _tool("c0", "Paris"),
        _tool("c1", "upstream down", is_error=True),
        _tool("c2", REFUSAL),
        {"role": "assistant", "content": "Paris"},
    ]
    html = conversation_html(trace)
    blocks = html.split("<details")[2:]  # after the conversation's own block
    assert len(blocks) == 3
    made, failed, refused = blocks
    assert "failed" not in made and "refused" not in made
    assert "karenina-fail" in failed and "refused" not in failed
    assert "refused by tool_call_limit" in refused and "karenina-fail" not in refused
