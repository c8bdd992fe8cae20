"""Agents through pytest with real parts: MCP tool-using answering agents (the real MCP test
server, the scripted OpenAI-compatible server), with and without ``-n 2``; their reports in the
terminal, JUnit and pytest-html (headless Chromium); strict replay with no server running;
agentic parsing in workspaces under the checkpoint's directory."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.plugin.plugin_helpers import (
    COUNTRIES,
    capitals_checkpoint,
    rendered_dom,
    rendered_rows,
)
from tests.support.agents_extra import needs_agents_extra
from tests.support.openai_server import OpenAIServer

if TYPE_CHECKING:
    from tests.support.mcp_server import MCPServer

pytestmark = needs_agents_extra


def checkpoint(directory: Path, **question: Any) -> Path:
    return capitals_checkpoint(directory, **question)


def preset(directory: Path, server: OpenAIServer, mcp: MCPServer) -> Path:
    base = {"interface": "openai_endpoint", "endpoint_base_url": server.base_url}
    path = directory / "agents.json"
    path.write_text(json.dumps({"config": {
        "answering_models": [{**base, "id": "agent", "model_name": "agent-model",
                              "mcp_urls_dict": {"facts": mcp.url}}],
        "parsing_models": [{**base, "id": "judge", "model_name": "judge-model"}],
    }}))  # fmt: skip
    return path


def script(server: OpenAIServer) -> None:
    """France and Italy: a lookup then the answer; Japan: the broken tool, then a guess."""
    for country, capital in list(COUNTRIES.values())[:2]:
        server.add_rule(f"The capital of {country} is {capital}.", model="agent-model",
                        role="tool", last_contains=capital)  # fmt: skip
        server.add_rule({"country": country}, model="agent-model", tool="lookup_capital",
                        last_contains=country)  # fmt: skip
        server.add_rule({"capital": capital}, model="judge-model",
                        contains=f"The capital of {country} is")  # fmt: skip
    server.add_rule("I believe it is Kyoto.", model="agent-model", role="tool")
    server.add_rule({"reason": "Japan"}, model="agent-model", tool="broken", last_contains="Japan")
    server.add_rule({"capital": "Kyoto"}, model="judge-model", contains="Kyoto")


def args(pytester: pytest.Pytester, server: OpenAIServer, mcp: MCPServer) -> list[str]:
    script(server)
    path = checkpoint(pytester.path)
    return ["--karenina", str(path), f"--karenina-config={preset(pytester.path, server, mcp)}",
            "-p", "no:cacheprovider"]  # fmt: skip


def properties(junit: Path, name: str) -> dict[str, str]:
    for case in ET.parse(junit).getroot().iter("testcase"):
        if case.get("name") == name:
            return {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
    raise AssertionError(f"no testcase {name}")


def test_an_mcp_agent_benchmark_runs_and_reports(
    pytester: pytest.Pytester, openai_server: OpenAIServer, mcp_server: MCPServer,
    dist: list[str],
) -> None:  # fmt: skip
    junit = pytester.path / "junit.xml"
    export = pytester.path / "results.json"

    result = pytester.runpytest(*args(pytester, openai_server, mcp_server),
                                f"--junitxml={junit}", f"--karenina-results={export}",
                                *dist)  # fmt: skip

    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([
        "*capital: 'Kyoto' != 'Tokyo'*",
        "*agent: 2 model calls, 1 tool calls (broken 1); 1 failed (broken)",
        "*agents: 3 results, 0 reached their call limit, failed tool calls in 1 (broken 1)",
    ])  # fmt: skip
    assert sorted(c["country"] for c in mcp_server.tool_calls("lookup_capital")) == [
        "France", "Italy",
    ]  # fmt: skip
    props = properties(junit, "q3")
    assert props["karenina.agent.tool_calls"] == "1"
    assert props["karenina.agent.failed_tool_calls"] == "1"
    assert props["karenina.agent.limit_reached"] == "False"
    records = {r["metadata"]["question_id"]: r for r in json.loads(export.read_text())["results"]}
    assert records["q1"]["template"]["answering_mcp_servers"] == ["facts"]
    assert records["q1"]["metadata"]["answering"]["tools"] == ["facts"]


def test_a_recorded_agent_benchmark_replays_with_no_server_running(
    pytester: pytest.Pytester, openai_server: OpenAIServer, mcp_server: MCPServer
) -> None:
    store = pytester.path / "calls.jsonl"
    run_args = [*args(pytester, openai_server, mcp_server), f"--karenina-replay-store={store}"]
    pytester.runpytest(*run_args, "--karenina-replay=record").assert_outcomes(passed=2, failed=1)
    openai_server.stop()
    calls = len(mcp_server.calls)

    replayed = pytester.runpytest(*run_args, "--karenina-replay=strict")

    replayed.assert_outcomes(passed=2, failed=1)  # a miss would be an error
    assert len(mcp_server.calls) == calls


@pytest.mark.subprocess
def test_the_html_report_shows_the_conversation_in_headless_chromium(
    pytester: pytest.Pytester, openai_server: OpenAIServer, mcp_server: MCPServer
) -> None:
    report = pytester.path / "report.html"
    pytester.runpytest(
        *args(pytester, openai_server, mcp_server), f"--html={report}", "--self-contained-html"
    ).assert_outcomes(passed=2, failed=1)

    dom = rendered_dom(pytester, report)
    assert rendered_rows(dom, "capitals.jsonld::q3")
    row = dom.split('id="capitals.jsonld::q3"', 1)[1].split('<tbody class="results-table-row')[0]
    assert 'class="karenina-conversation"' in row
    assert 'class="karenina-tool karenina-tool-failed"' in row
    assert "broken tool: Japan" in row
    assert "I believe it is Kyoto." in row


def agentic_preset(directory: Path, server: OpenAIServer) -> Path:
    def deep(name: str) -> dict[str, Any]:
        return {"id": name, "model_name": name, "interface": "langchain_deep_agents",
                "model_provider": "openai",
                "extra_kwargs": {"base_url": server.base_url, "api_key": "test-key"}}  # fmt: skip

    path = directory / "agentic.json"
    path.write_text(json.dumps({"config": {
        "answering_models": [deep("answerer")], "parsing_models": [deep("judge")],
        "agentic_parsing": True, "agentic_judge_context": "workspace_only",
    }}))  # fmt: skip
    return path


def script_agentic(server: OpenAIServer) -> None:
    """Each answer is written to answer.txt; the judge reads it back and reports it."""
    for country, capital in COUNTRIES.values():
        server.add_rule({"file_path": "/answer.txt", "content": capital}, model="answerer",
                        tool="write_file", role="user", last_contains=country)  # fmt: skip
    server.add_rule("Saved in answer.txt.", model="answerer", role="tool")
    server.add_rule({"file_path": "/answer.txt"}, model="judge", tool="read_file", role="user",
                    when=lambda body: bool(body.get("tools")))  # fmt: skip

    def report(body: dict[str, Any]) -> str:
        return f"answer.txt holds: {body['messages'][-1]['content']}"

    server.add_rule(report, model="judge", role="tool")

    def extract(body: dict[str, Any]) -> str:
        text = json.dumps(body["messages"])
        found = next((c for _, c in COUNTRIES.values() if c in text), "none")
        return json.dumps({"capital": found})

    server.add_rule(extract, model="judge", contains="Investigation report:")


def test_agentic_parsing_in_workspaces_under_the_checkpoint_directory(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    script_agentic(openai_server)
    path = checkpoint(pytester.path)
    config = agentic_preset(pytester.path, openai_server)
    before = sorted(p.name for p in pytester.path.iterdir())

    result = pytester.runpytest("--karenina", str(path), f"--karenina-config={config}",
                                "-p", "no:cacheprovider", *dist)  # fmt: skip

    result.assert_outcomes(passed=3)
    # Each judge read its own question's file: no two answers shared a workspace.
    reports = [r.text for r in openai_server.chat_requests if "Investigation report:" in r.text]
    found = [[c for _, c in COUNTRIES.values() if c in report.split("holds:")[1]]
             for report in reports]  # fmt: skip
    assert sorted(found) == [["Paris"], ["Rome"], ["Tokyo"]]
    after = sorted(p.name for p in pytester.path.iterdir() if not p.name.startswith("."))
    assert [n for n in after if "_run_" in n] == []  # every working copy removed
    assert set(before) <= set(after)


def test_without_the_agents_extra_an_agent_run_is_a_usage_error_naming_it(
    pytester: pytest.Pytester, openai_server: OpenAIServer, mcp_server: MCPServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    import pytest_karenina.pipeline.agent_stack as agent_stack

    monkeypatch.setattr(
        agent_stack, "missing_agents_extra",
        lambda: "agents need deepagents: pip install 'pytest-karenina[agents]'",
    )  # fmt: skip

    result = pytester.runpytest(*args(pytester, openai_server, mcp_server))

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*karenina: agents need deepagents: pip install*[agents]*"])
    assert openai_server.chat_requests == []
