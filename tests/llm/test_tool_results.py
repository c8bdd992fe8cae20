"""The cap on MCP tool results (issue 24, item 16): on real ``mcp`` result types, and through
the pipeline against the real MCP test server's ``big`` tool."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.pipeline.test_agent_answering import run
from tests.support.agents_extra import needs_agents_extra
from tests.support.openai_server import OpenAIServer

if TYPE_CHECKING:
    from tests.support.mcp_server import MCPServer

pytestmark = needs_agents_extra


def test_a_result_within_the_limit_is_left_as_it_is() -> None:
    from mcp.types import CallToolResult, TextContent

    from pytest_karenina.llm.agents.tool_results import capped_result

    result = CallToolResult(content=[TextContent(type="text", text="x" * 10)],
                            structuredContent={"result": "x" * 10})  # fmt: skip
    assert capped_result(result, limit=10) is result


def test_a_long_result_is_cut_at_the_limit_with_a_note_of_what_was_dropped() -> None:
    from mcp.types import CallToolResult, ImageContent, TextContent

    from pytest_karenina.llm.agents.tool_results import capped_result

    result = CallToolResult(
        content=[TextContent(type="text", text="a" * 6), TextContent(type="text", text="b" * 6),
                 ImageContent(type="image", data="c" * 4, mimeType="image/png")],
        structuredContent={"result": "ab"},
    )  # fmt: skip

    capped = capped_result(result, limit=8)

    texts = [getattr(block, "text", None) for block in capped.content]
    assert texts == [
        "a" * 6,
        "b" * 2,
        "[pytest-karenina: 8 of the 16 characters of this tool result were dropped; "
        "tool results are capped at 8 characters]",
    ]
    assert capped.structuredContent is None


def test_binary_content_over_the_limit_is_dropped_whole() -> None:
    from mcp.types import CallToolResult, ImageContent, TextContent

    from pytest_karenina.llm.agents.tool_results import capped_result

    result = CallToolResult(content=[
        TextContent(type="text", text="ok"),
        ImageContent(type="image", data="c" * 20, mimeType="image/png"),
        TextContent(type="text", text="after"),
    ])  # fmt: skip

    capped = capped_result(result, limit=10)

    assert [block.type for block in capped.content] == ["text", "text"]
    assert "25 of the 27 characters" in getattr(capped.content[-1], "text", "")


def test_a_10_mb_tool_result_reaches_the_model_and_the_result_capped_and_once(
    openai_server: OpenAIServer, mcp_server: MCPServer
) -> None:
    """The model was sent all 10 MB, and the result held them twice (the trace and its
    text)."""
    from pytest_karenina.llm.agents.tool_results import RESULT_LIMIT
    from pytest_karenina.results.export import result_line
    from pytest_karenina.results.trace import TOOL_PREVIEW

    openai_server.add_rule("The capital of France is Paris.", model="agent-model", role="tool")
    openai_server.add_rule({"size": 10_000_000}, model="agent-model", tool="big")
    openai_server.add_rule({"capital": "Paris"}, model="judge-model")

    result = run(openai_server, mcp_server)

    assert mcp_server.tool_calls("big") == [{"size": 10_000_000}]
    after_tool = [r for r in openai_server.chat_requests if r.model == "agent-model"][1]
    assert RESULT_LIMIT < len(after_tool.text) < RESULT_LIMIT + 10_000
    template = result.template
    assert template is not None and result.verify_result is True
    tool = (template.trace_messages or [])[1]
    assert tool["content"].startswith("x" * RESULT_LIMIT + "\n[pytest-karenina: 9,900,000 of")
    assert f"x{TOOL_PREVIEW * 'x'}" not in template.raw_llm_response
    assert "more characters: trace_messages[1]]" in template.raw_llm_response
    line = result_line(result)  # as an export holds it
    assert line.count("x" * (RESULT_LIMIT // 2 + 1)) == 1
    assert len(line) < RESULT_LIMIT + TOOL_PREVIEW + 10_000
