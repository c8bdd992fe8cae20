"""Agents keep secrets out of every artifact, as plain replies do (issue 24, items 1-3).

Real parts: the scripted OpenAI-compatible server, the real MCP test server reached through a
URL that carries ``user:password@`` and ``?token=``, pytest runs writing the replay store, the
results export, JUnit, the HTML report and a log file. Each configured secret (the agent's
``endpoint_api_key``, a ``default_headers`` value, ``extra_kwargs.api_key``, the MCP URL's
password and token) is repeated by the models in replies and tool-call arguments and returned
by tools; none may appear in any file the run writes or in its output, and ``***`` stands
where it was.
"""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.plugin.plugin_helpers import capitals_checkpoint
from tests.support.agents_extra import needs_agents_extra
from tests.support.openai_server import OpenAIServer

if TYPE_CHECKING:
    from tests.support.mcp_server import MCPServer

pytestmark = needs_agents_extra

KEY = "agentkey-canary-4f0c2b9e71d3"
HEADER = "hdr-canary-9b13e07a55c2"
EXTRA_KEY = "xkey-canary-2a6d90f3b18e"
MCP_PASSWORD = "mcppw-canary-71c9a3e05f"
MCP_TOKEN = "mcptok-canary-0d8e6f21a4b7"
CANARIES = (KEY, HEADER, EXTRA_KEY, MCP_PASSWORD, MCP_TOKEN)
FRANCE = {"q1": ("France", "Paris")}


def mcp_url(port: int) -> str:
    return f"http://evals:{MCP_PASSWORD}@127.0.0.1:{port}/mcp?token={MCP_TOKEN}"


def write_preset(directory: Path, config: dict[str, Any]) -> Path:
    path = directory / "preset.json"
    path.write_text(json.dumps({"config": config}))
    return path


def agent_preset(directory: Path, server: OpenAIServer, port: int) -> Path:
    """A tool-loop agent (``openai_endpoint``) with a key, a secret header and an MCP server
    whose URL carries credentials; a plain judge with the same key and header."""
    base = {
        "interface": "openai_endpoint", "endpoint_base_url": server.base_url,
        "endpoint_api_key": KEY,
        "extra_kwargs": {"default_headers": {"X-Custom-Auth": HEADER}},
    }  # fmt: skip
    return write_preset(directory, {
        "answering_models": [{**base, "id": "agent", "model_name": "agent-model",
                              "mcp_urls_dict": {"facts": mcp_url(port)}}],
        "parsing_models": [{**base, "id": "judge", "model_name": "judge-model"}],
    })  # fmt: skip


def artifact_texts(out: Path, result: pytest.RunResult) -> dict[str, str]:
    """Every file under ``out`` and the run's stdout and stderr, by name."""
    texts = {
        str(path.relative_to(out)): path.read_text(encoding="utf-8", errors="replace")
        for path in sorted(out.rglob("*"))
        if path.is_file()
    }
    texts["stdout"] = result.stdout.str()
    texts["stderr"] = result.stderr.str()
    return texts


def assert_no_canary(texts: dict[str, str]) -> None:
    leaks = [(name, c) for name, text in texts.items() for c in CANARIES if c in text]
    assert leaks == [], f"secrets leaked: {leaks}"


def outputs(out: Path) -> list[str]:
    return [
        f"--karenina-replay-store={out / 'store.jsonl'}", "--karenina-replay=record",
        f"--karenina-results={out / 'results.json'}", f"--junitxml={out / 'junit.xml'}",
        f"--html={out / 'report.html'}", "--self-contained-html", "--karenina-html-trace=all",
        f"--log-file={out / 'run.log'}", "--log-file-level=DEBUG", "-rA", "-p", "no:cacheprovider",
    ]  # fmt: skip


@pytest.fixture
def client_logs() -> Iterator[None]:
    """The HTTP and MCP clients' own log records (URLs they call) reach the log file, as in
    a user's run (the MCP test server quiets them for the rest of the suite)."""
    loggers = [logging.getLogger(name) for name in ("httpx", "mcp")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.DEBUG)
    yield
    for logger, level in zip(loggers, levels, strict=True):
        logger.setLevel(level)


@pytest.mark.usefixtures("client_logs")
def test_an_mcp_agent_repeating_its_secrets_leaves_none_in_any_artifact(
    pytester: pytest.Pytester, openai_server: OpenAIServer, mcp_server: MCPServer,
    dist: list[str],
) -> None:  # fmt: skip
    every = f"{KEY} {HEADER} {MCP_TOKEN} {MCP_PASSWORD}"
    (mcp_server.notes_dir / "secrets.txt").write_text(f"NOTE {every}", encoding="utf-8")
    server = openai_server
    # The agent puts its secrets into a tool argument, has a tool return them, and ends
    # with an answer that repeats them.
    server.add_rule({"country": f"France {every}"}, model="agent-model", tool="lookup_capital",
                    role="user")  # fmt: skip
    server.add_rule({"name": "secrets.txt"}, model="agent-model", tool="read_note", role="tool",
                    last_contains="no capital known")  # fmt: skip
    server.add_rule(f"The capital of France is Paris. (debug: {every})", model="agent-model",
                    role="tool")  # fmt: skip
    server.add_rule({"capital": "Paris"}, model="judge-model", contains="capital of France is")
    out = pytester.path / "out"
    checkpoint = capitals_checkpoint(pytester.path, FRANCE)
    preset = agent_preset(pytester.path, server, mcp_server.port)

    result = pytester.runpytest("--karenina", str(checkpoint), f"--karenina-config={preset}",
                                *outputs(out), *dist)  # fmt: skip

    result.assert_outcomes(passed=1)
    texts = artifact_texts(out, result)
    assert {"store.jsonl", "results.json", "junit.xml", "report.html", "run.log"} <= set(texts)
    assert_no_canary(texts)
    # The secrets never reached the tools either.
    assert mcp_server.tool_calls("lookup_capital") == [{"country": "France *** *** *** ***"}]
    export = json.loads(texts["results.json"])
    record = export["results"][0]
    assert "(debug: *** *** *** ***)" in record["template"]["raw_llm_response"]
    call, failed, _, note, final = record["template"]["trace_messages"]
    assert call["tool_calls"][0]["input"] == {"country": "France *** *** *** ***"}
    assert "no capital known for 'France *** *** *** ***'" in failed["content"]
    assert note["content"] == "NOTE *** *** *** ***"
    assert final["content"] == "The capital of France is Paris. (debug: *** *** *** ***)"
    answering = export["metadata"]["verification_config"]["answering_models"][0]
    port = mcp_server.port
    assert answering["mcp_urls_dict"] == {"facts": f"http://127.0.0.1:{port}/mcp?token=**********"}
    assert answering["extra_kwargs"] == {"default_headers": {"X-Custom-Auth": "**********"}}
    assert "NOTE *** *** *** ***" in texts["report.html"]
    assert "NOTE *** *** *** ***" in texts["store.jsonl"]
    assert f"HTTP Request: POST http://***@127.0.0.1:{port}/mcp?token=***" in texts["run.log"]


def test_an_agentic_judge_repeating_secrets_leaves_none_in_its_investigation(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    """Deep agents keyed by ``extra_kwargs.api_key`` and a secret header: the answering agent
    writes its key into a file, the judge reads a workspace file holding both secrets and
    repeats them in its investigation."""
    workspace = pytester.path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text(f"NOTE {EXTRA_KEY} {HEADER}\n", encoding="utf-8")
    server = openai_server
    server.add_rule({"file_path": "/answer.txt", "content": f"Paris {EXTRA_KEY}"},
                    model="answerer", tool="write_file", role="user")  # fmt: skip
    server.add_rule(f"Saved in answer.txt. {EXTRA_KEY} {HEADER}", model="answerer", role="tool")
    server.add_rule({"file_path": "/notes.txt"}, model="judge", tool="read_file", role="user",
                    when=lambda body: bool(body.get("tools")))  # fmt: skip

    def report(body: dict[str, Any]) -> str:
        return f"notes.txt holds: {body['messages'][-1]['content']} (judge key {EXTRA_KEY})"

    server.add_rule(report, model="judge", role="tool")
    server.add_rule({"capital": "Paris"}, model="judge", contains="Investigation report:")

    def deep(name: str) -> dict[str, Any]:
        return {"id": name, "model_name": name, "interface": "langchain_deep_agents",
                "model_provider": "openai",
                "extra_kwargs": {"base_url": server.base_url, "api_key": EXTRA_KEY,
                                 "default_headers": {"X-Custom-Auth": HEADER}}}  # fmt: skip

    preset = write_preset(pytester.path, {
        "answering_models": [deep("answerer")], "parsing_models": [deep("judge")],
        "agentic_parsing": True, "agentic_judge_context": "workspace_only",
    })  # fmt: skip
    checkpoint = capitals_checkpoint(pytester.path, FRANCE, workspace_path="ws")
    out = pytester.path / "out"

    result = pytester.runpytest("--karenina", str(checkpoint), f"--karenina-config={preset}",
                                *outputs(out))  # fmt: skip

    result.assert_outcomes(passed=1)
    texts = artifact_texts(out, result)
    assert_no_canary(texts)
    template = json.loads(texts["results.json"])["results"][0]["template"]
    investigation = template["investigation_trace"]
    assert "NOTE *** ***" in investigation and "(judge key ***)" in investigation
    assert "Saved in answer.txt. *** ***" in template["raw_llm_response"]
    write = template["trace_messages"][0]["tool_calls"][0]
    assert write["input"]["content"] == "Paris ***"
    assert "(judge key ***)" in texts["report.html"]
    # The judge read the workspace file (the copy) and its secrets were kept out.
    requests = [r.text for r in server.chat_requests if r.body.get("model") == "judge"]
    assert any("NOTE *** ***" in text for text in requests)


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.usefixtures("client_logs")
def test_an_mcp_server_that_is_down_names_its_url_without_credentials(
    pytester: pytest.Pytester, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = pytester.path / "out" / "step_summary.md"
    summary.parent.mkdir()
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    port = closed_port()
    checkpoint = capitals_checkpoint(pytester.path, FRANCE)
    preset = agent_preset(pytester.path, openai_server, port)
    out = pytester.path / "out"

    result = pytester.runpytest("--karenina", str(checkpoint), f"--karenina-config={preset}",
                                *outputs(out))  # fmt: skip

    result.assert_outcomes(errors=1)
    texts = artifact_texts(out, result)
    assert_no_canary(texts)
    masked = f"facts (http://127.0.0.1:{port}/mcp?token=***)"
    annotations = [line for line in result.stdout.lines if line.startswith("::error")]
    assert len(annotations) == 1 and masked in annotations[0]
    for name in ("junit.xml", "results.json", "stdout"):
        assert masked in texts[name], name
    assert f"127.0.0.1:{port}/mcp?token=" in texts["step_summary.md"]  # Markdown-escaped
    assert openai_server.chat_requests == []
