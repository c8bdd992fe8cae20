"""A 10 MB MCP tool result through pytest (issue 24, item 16): the export holds each result
capped, and once. Real parts: the MCP test server's ``big`` tool, the scripted
OpenAI-compatible server, ``--karenina-results`` on disk."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from tests.plugin.test_agents_plugin import checkpoint, preset
from tests.support.agents_extra import needs_agents_extra
from tests.support.openai_server import OpenAIServer

if TYPE_CHECKING:
    from tests.support.mcp_server import MCPServer

pytestmark = needs_agents_extra

SIZE = 10_000_000


def test_three_10_mb_tool_results_make_a_bounded_export_holding_each_once(
    pytester: pytest.Pytester, openai_server: OpenAIServer, mcp_server: MCPServer
) -> None:
    """The export was 63 MB: each result held its 10 MB twice (``trace_messages`` and the
    rendered trace in ``raw_llm_response``)."""
    from pytest_karenina.llm.agents.tool_results import RESULT_LIMIT

    openai_server.add_rule("It is Paris.", model="agent-model", role="tool")
    openai_server.add_rule({"size": SIZE}, model="agent-model", tool="big")
    openai_server.add_rule({"capital": "Paris"}, model="judge-model")
    export = pytester.path / "results.json"

    result = pytester.runpytest(
        "--karenina", str(checkpoint(pytester.path)),
        f"--karenina-config={preset(pytester.path, openai_server, mcp_server)}",
        f"--karenina-results={export}", "-p", "no:cacheprovider",
    )  # fmt: skip

    result.assert_outcomes(passed=1, failed=2)  # every answer is Paris
    assert len(mcp_server.tool_calls("big")) == 3
    assert export.stat().st_size < 3 * (RESULT_LIMIT + 20_000)
    text = export.read_text(encoding="utf-8")
    assert text.count("x" * (RESULT_LIMIT // 2 + 1)) == 3
    records = json.loads(text)["results"]
    for record in records:
        tool = record["template"]["trace_messages"][1]
        assert tool["content"].endswith(
            f"[pytest-karenina: {SIZE - RESULT_LIMIT:,} of the {SIZE:,} characters of this tool "
            f"result were dropped; tool results are capped at {RESULT_LIMIT:,} characters]"
        )
        assert "more characters: trace_messages[1]]" in record["template"]["raw_llm_response"]
