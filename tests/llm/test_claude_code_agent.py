"""``claude_agent_sdk``: the real Claude Code CLI (bundled by ``claude-agent-sdk``) against the
scripted Anthropic server, through ``ANTHROPIC_BASE_URL`` with a fake key: its file tools in
a real workspace, a read-only judge, its limits, a timeout's partial trace, and each way a
run fails (an error naming the model, with what the run did)."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.config.model import ModelConfig
from pytest_karenina.llm.agent_ports import AgentError, AgentRunConfig
from pytest_karenina.llm.agents.claude_code import ClaudeCodeAgent
from pytest_karenina.llm.agents.claude_code_trace import TOOL_LIMIT_REFUSAL
from pytest_karenina.llm.ports import ChatMessage
from pytest_karenina.results.agent_metrics import agent_metrics
from tests.support.anthropic_server import AnthropicFault, AnthropicServer, ToolUse, Turn
from tests.support.claude_cli import (
    FAKE_KEY,
    answered,
    claude_model,
    fresh,
    last_result,
    needs_claude_extra,
    tool_results,
)

pytestmark = needs_claude_extra
MESSAGES = [ChatMessage("system", "You compute."), ChatMessage("user", "Compute and save it.")]


def agent(server: AnthropicServer, **settings: Any) -> ClaudeCodeAgent:
    return ClaudeCodeAgent(ModelConfig(**claude_model(server, "claude-test", **settings)))


def run_config(workspace: Path | None = None, **options: Any) -> AgentRunConfig:
    return AgentRunConfig("answer_generation", workspace=workspace, **options)


@pytest.fixture
def own_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the runs' own directories go (their config directory, a fresh working one)."""
    place = tmp_path / "tmp"
    place.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(place))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return place


@pytest.mark.subprocess
def test_the_agent_writes_in_its_workspace_and_its_run_becomes_the_trace(
    anthropic_server: AnthropicServer, tmp_path: Path, own_tmp: Path
) -> None:
    anthropic_server.add_rule("The answer is 42.", when=answered)
    anthropic_server.add_rule(
        Turn("Saving it.", ToolUse("Write", {"file_path": "result.txt", "content": "42\n"})),
        when=fresh, usage={"input_tokens": 100, "output_tokens": 7},
    )  # fmt: skip

    result = agent(anthropic_server).run(MESSAGES, run_config(tmp_path))

    assert (tmp_path / "result.txt").read_text() == "42\n"
    assert result.final_response == "The answer is 42."
    first, tool, last = result.trace_messages
    assert first["content"] == "Saving it."
    assert first["tool_calls"][0]["name"] == "Write"
    assert tool["role"] == "tool" and tool["name"] == "Write"
    assert tool["tool_result"]["is_error"] is False
    assert last["content"] == "The answer is 42."
    assert result.turns == 2 and not result.limit_reached and not result.timeout_reached
    assert result.usage.input_tokens is not None and result.usage.input_tokens >= 100
    assert result.usage.output_tokens is not None and result.usage.output_tokens >= 7
    # Streamed calls only, no probe or side request; the fake key went as the API key.
    calls = anthropic_server.requests
    assert [(r.method, r.path.split("?")[0], r.stream) for r in calls] == [
        ("POST", "/v1/messages", True), ("POST", "/v1/messages", True),
    ]  # fmt: skip
    assert calls[0].body["system"][-1]["text"].endswith("You compute.")
    assert "Compute and save it." in calls[0].text
    assert {"Edit", "Glob", "Grep", "Read", "Write"} <= set(calls[0].tools)
    assert "Bash" not in calls[0].tools
    assert list(own_tmp.iterdir()) == []  # its config directory is gone


@pytest.mark.subprocess
def test_a_run_without_a_workspace_works_in_a_fresh_directory_removed_after(
    anthropic_server: AnthropicServer, own_tmp: Path
) -> None:
    anthropic_server.add_rule(lambda body: f"saw: {last_result(body)}", when=answered)
    anthropic_server.add_rule(ToolUse("Glob", {"pattern": "**/*"}), when=fresh)

    result = agent(anthropic_server).run(MESSAGES, run_config())

    assert result.final_response == "saw: No files found"
    assert list(own_tmp.iterdir()) == []


@pytest.mark.subprocess
def test_a_judge_reads_but_cannot_write_nor_leave_the_workspace(
    anthropic_server: AnthropicServer, tmp_path: Path, own_tmp: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "result.txt").write_text("42\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("do not read\n")
    (workspace / "link").symlink_to(outside)
    steps = [
        ToolUse("Read", {"file_path": str(workspace / "result.txt")}),
        ToolUse("Write", {"file_path": str(workspace / "verdict.txt"), "content": "x"}),
        ToolUse("Read", {"file_path": str(workspace / "link" / "secret.txt")}),
        ToolUse("Read", {"file_path": str(outside / "secret.txt")}),
    ]
    for done, step in enumerate(steps):
        anthropic_server.add_rule(step, when=lambda b, n=done: len(tool_results(b)) == n)
    anthropic_server.add_rule("It holds 42.", when=lambda b: len(tool_results(b)) == len(steps))

    result = agent(anthropic_server).run(MESSAGES, run_config(workspace, read_only=True))

    tools = [m for m in result.trace_messages if m["role"] == "tool"]
    assert "42" in tools[0]["content"] and tools[0]["tool_result"]["is_error"] is False
    assert all(m["tool_result"]["is_error"] for m in tools[1:])
    assert not any("do not read" in m["content"] for m in tools)
    assert not (workspace / "verdict.txt").exists()
    assert "Write" not in anthropic_server.messages_requests[0].tools
    assert agent_metrics(result.trace_messages)["suspect_failed_tool_calls"] == 3


@pytest.mark.subprocess
def test_the_model_call_limit_ends_the_run_when_one_more_call_is_needed(
    anthropic_server: AnthropicServer, tmp_path: Path, own_tmp: Path
) -> None:
    anthropic_server.add_rule(ToolUse("Glob", {"pattern": "*.txt"}))

    result = agent(anthropic_server).run(MESSAGES, run_config(tmp_path, max_turns=3))

    assert result.limit_reached and not result.timeout_reached
    assert len(anthropic_server.messages_requests) == 3
    assert result.turns == 3


@pytest.mark.subprocess
def test_calls_past_the_tool_call_limit_are_refused_and_the_model_can_still_answer(
    anthropic_server: AnthropicServer, tmp_path: Path, own_tmp: Path
) -> None:
    anthropic_server.add_rule("Done.", when=lambda b: len(tool_results(b)) == 3)
    anthropic_server.add_rule(ToolUse("Glob", {"pattern": "*"}))
    limits = {"limits": {"model_call_limit": 10, "tool_call_limit": 2}}

    result = agent(anthropic_server, agent_middleware=limits).run(MESSAGES, run_config(tmp_path))

    assert result.final_response == "Done." and not result.limit_reached
    assert [m["content"] for m in result.trace_messages if m["role"] == "tool"][2] == (
        TOOL_LIMIT_REFUSAL
    )
    metrics = agent_metrics(result.trace_messages)
    assert (metrics["tool_calls"], metrics["refused_tool_calls"]) == (2, 1)
    assert metrics["suspect_failed_tool_calls"] == 0


@pytest.mark.subprocess
def test_a_run_past_its_time_limit_returns_its_partial_trace_and_usage(
    anthropic_server: AnthropicServer, tmp_path: Path, own_tmp: Path
) -> None:
    anthropic_server.add_rule("too late", when=answered, latency=60)
    anthropic_server.add_rule(
        Turn("Saving it.", ToolUse("Write", {"file_path": "result.txt", "content": "42\n"})),
        when=fresh, usage={"input_tokens": 100, "output_tokens": 7},
    )  # fmt: skip

    result = agent(anthropic_server).run(MESSAGES, run_config(tmp_path, timeout=3))

    assert result.timeout_reached and not result.limit_reached
    assert [m["role"] for m in result.trace_messages] == ["assistant", "tool"]
    assert result.final_response == "Saving it."
    assert result.usage.output_tokens is not None and result.usage.output_tokens >= 7
    assert (tmp_path / "result.txt").exists()
    assert list(own_tmp.iterdir()) == []


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("fault", "said"),
    [
        (AnthropicFault.server_error(500), "injected server error 500"),
        (AnthropicFault.stream_cut(3), "Connection to the API was lost"),
    ],
    ids=["server-error", "stream-cut"],
)
def test_an_api_that_fails_fails_the_run_naming_the_model(
    anthropic_server: AnthropicServer, tmp_path: Path, own_tmp: Path, fault: Any, said: str
) -> None:
    anthropic_server.add_rule(fault)

    with pytest.raises(AgentError) as caught:
        agent(anthropic_server).run(MESSAGES, run_config(tmp_path))

    assert caught.value.reason.startswith("claude_agent_sdk model 'claude-test': the run failed")
    assert said in caught.value.reason
    assert caught.value.partial is not None and caught.value.partial.trace_messages == []
    assert FAKE_KEY not in str(caught.value)


def script(directory: Path, body: str) -> str:
    path = directory / "claude"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.mark.subprocess
def test_a_cli_that_exits_with_an_error_fails_the_run_with_what_it_said(
    anthropic_server: AnthropicServer, tmp_path: Path, own_tmp: Path
) -> None:
    cli = script(tmp_path, "echo 'claude: cannot start: no terminal' >&2\nexit 3")

    with pytest.raises(AgentError) as caught:
        agent(anthropic_server, extra_kwargs={"cli_path": cli}).run(MESSAGES, run_config())

    reason = caught.value.reason
    assert reason.startswith("claude_agent_sdk model 'claude-test': the Claude Code CLI failed")
    # What it said; its exit status too when the SDK saw the exit (not when it first failed to
    # write to the process).
    assert "(its error output: claude: cannot start: no terminal)" in reason
    assert anthropic_server.requests == []


@pytest.mark.subprocess
def test_a_cli_that_hangs_is_stopped_at_the_time_limit(
    anthropic_server: AnthropicServer, tmp_path: Path, own_tmp: Path
) -> None:
    cli = script(tmp_path, f"echo $$ > {tmp_path / 'pid'}\nexec sleep 600")

    with pytest.raises(AgentError) as caught:
        agent(anthropic_server, extra_kwargs={"cli_path": cli}).run(MESSAGES, run_config(timeout=1))

    assert "the Claude Code CLI did not start within 1 s; it was stopped" in caught.value.reason
    pid = int((tmp_path / "pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_missing_cli_or_key_fails_the_run_before_anything_starts(
    anthropic_server: AnthropicServer, tmp_path: Path, own_tmp: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    for name in ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    missing = agent(anthropic_server, extra_kwargs={"cli_path": str(tmp_path / "claude")})
    keyless = agent(anthropic_server, anthropic_api_key=None)

    with pytest.raises(AgentError, match="the Claude Code CLI was not found: extra_kwargs"):
        missing.run(MESSAGES, run_config())
    with pytest.raises(AgentError, match="'claude-test': no API key: set ANTHROPIC_API_KEY"):
        keyless.run(MESSAGES, run_config())

    assert anthropic_server.requests == []
    assert list(own_tmp.iterdir()) == []


@pytest.mark.subprocess
def test_the_models_mcp_tools_are_called_directly_and_the_filter_allows_only_its_tools(
    anthropic_server: AnthropicServer, mcp_server: Any, own_tmp: Path
) -> None:
    """The CLI gets no ToolSearch, so the servers' tools come with the first request (no
    search turn); a tool the filter leaves out is shown but refused."""
    anthropic_server.add_rule(
        lambda body: f"The capital is {last_result(body)}.",
        when=lambda body: len(tool_results(body)) == 2,
    )
    anthropic_server.add_rule(ToolUse("mcp__facts__add", {"a": 1, "b": 2}),
                              when=lambda body: len(tool_results(body)) == 1)  # fmt: skip
    anthropic_server.add_rule(
        ToolUse("mcp__facts__lookup_capital", {"country": "France"}), when=fresh
    )
    model = agent(anthropic_server, mcp_urls_dict={"facts": mcp_server.url},
                  mcp_tool_filter=["lookup_capital"])  # fmt: skip

    result = model.run(MESSAGES, run_config())

    assert "mcp__facts__lookup_capital" in anthropic_server.messages_requests[0].tools
    assert "ToolSearch" not in anthropic_server.messages_requests[0].tools
    assert mcp_server.calls == [("lookup_capital", {"country": "France"})]
    capital, added = (m for m in result.trace_messages if m["role"] == "tool")
    assert "Paris" in capital["content"] and not capital["tool_result"]["is_error"]
    assert added["tool_result"]["is_error"] and added["name"] == "mcp__facts__add"
