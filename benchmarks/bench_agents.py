"""Agent answering at concurrency, against real servers (run by hand; docs/performance.md).

    python benchmarks/bench_agents.py [--questions 100] [--latency 0.2] [--concurrency 32]
                                      [--path mcp|claude_tool|claude_agent_sdk]

Each question's answering agent makes three MCP tool calls (``add`` on the real MCP test
server, streamable HTTP) and then answers: four model calls, each ``--latency`` seconds, plus
one judge call. ``mcp`` (the default): an ``openai_endpoint`` tool loop and judge on the
scripted OpenAI-compatible server. ``claude_tool``: the same tool loop and judge through the
Messages API (the ``anthropic`` SDK) on the scripted Anthropic server. ``claude_agent_sdk``:
the Claude Code CLI as the agent and a ``claude_agent_sdk`` judge (its one call through the
Messages API) on the scripted Anthropic server; each answer is a CLI process, whose CPU is
printed apart (``CLI CPU``).
The servers run in a child process, so the CPU printed is the client's. The latency-bound
ideal wall time is ``ceil(questions / concurrency) * 5 * latency``; the target is within
1.3 x of it.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_karenina.checkpoint import Benchmark, Question
from pytest_karenina.config.verification import VerificationConfig
from pytest_karenina.pipeline.run import run_verification
from tests.pipeline.pipeline_helpers import CLASSIC
from tests.support.mcp_server import running_mcp_server
from tests.support.openai_rules import messages_of
from tests.support.openai_server import OpenAIServer

TOOL_CALLS = 3


def tool_results(body: dict[str, Any]) -> int:
    return sum(1 for message in messages_of(body) if message.get("role") == "tool")


def script(server: OpenAIServer) -> None:
    server.add_rule({"capital": "Paris"}, model="judge-model")
    server.add_rule({"a": 1, "b": 2}, model="agent-model", tool="add",
                    when=lambda body: tool_results(body) < TOOL_CALLS)  # fmt: skip
    server.add_rule("The capital of France is Paris.", model="agent-model")


def script_claude(server: Any, tool: str = "mcp__calc__add") -> None:
    """The same run on the Messages API: three ``add`` calls, the answer, the judge's (the
    Claude Code CLI names an MCP tool ``mcp__<server>__<tool>``, ``claude_tool`` by its name)."""
    from tests.support.anthropic_server import ToolUse
    from tests.support.claude_cli import tool_results as claude_results

    server.add_rule({"capital": "Paris"}, model="claude-judge")
    server.add_rule(ToolUse(tool, {"a": 1, "b": 2}), model="claude-agent",
                    when=lambda body: len(claude_results(body)) < TOOL_CALLS)  # fmt: skip
    server.add_rule("The capital of France is Paris.", model="claude-agent")


def serve(connection: Any, latency: float, path: str) -> None:
    """The servers, in their own process: their CPU is not the client's."""
    from tests.support.anthropic_server import AnthropicServer

    chat = OpenAIServer if path == "mcp" else AnthropicServer
    with (
        tempfile.TemporaryDirectory() as notes,
        running_mcp_server(Path(notes)) as mcp,
        chat(latency=latency, keep_alive=True) as server,
    ):
        if path == "mcp":
            script(server)
        else:
            script_claude(server, "add" if path == "claude_tool" else "mcp__calc__add")
        connection.send((server.base_url, mcp.url))
        connection.recv()  # until the benchmark is done
        connection.send(len(mcp.calls))


def models(path: str, base_url: str, mcp_url: str) -> dict[str, Any]:
    """The answering and parsing models of ``path``."""
    if path in ("claude_tool", "claude_agent_sdk"):
        base = {"interface": path, "anthropic_base_url": base_url,
                "anthropic_api_key": "sk-bench"}  # fmt: skip
        agent, judge = "claude-agent", "claude-judge"
    else:
        base = {"interface": "openai_endpoint", "endpoint_base_url": base_url}
        agent, judge = "agent-model", "judge-model"
    return {
        "answering_models": [{**base, "id": "agent", "model_name": agent,
                              "mcp_urls_dict": {"calc": mcp_url}}],
        "parsing_models": [{**base, "id": "judge", "model_name": judge}],
    }  # fmt: skip


def run(questions: int, latency: float, concurrency: int, path: str) -> None:
    here, there = multiprocessing.Pipe()
    servers = multiprocessing.get_context("spawn").Process(
        target=serve, args=(there, latency, path)
    )
    servers.start()
    base_url, mcp_url = here.recv()
    config = VerificationConfig(
        **models(path, base_url, mcp_url),
        async_enabled=True, async_max_workers=concurrency, max_concurrent_requests=None,
    )  # fmt: skip
    benchmark = Benchmark(name="agents", questions=[
        Question(id=f"q{i}", text=f"What is the capital of France? ({i})",
                 raw_answer="Paris", template_code=CLASSIC, finished=True)
        for i in range(questions)
    ])  # fmt: skip
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall, cpu = time.perf_counter(), time.process_time()
    results = run_verification(benchmark, config).results
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    ended = resource.getrusage(resource.RUSAGE_CHILDREN)  # the CLIs (the servers still run)
    cli = ended.ru_utime + ended.ru_stime - children.ru_utime - children.ru_stime
    here.send("done")
    tool_calls = here.recv()
    servers.join()
    passed = sum(1 for r in results if r.verify_result)
    ideal = math.ceil(questions / concurrency) * (TOOL_CALLS + 2) * latency
    shown = f"CLI CPU {cli:.2f}s ({cli / questions * 1000:.0f} ms per question), "
    print(
        f"{questions} questions, concurrency {concurrency}, latency {latency:g}s: "
        f"wall {wall:.2f}s (ideal {ideal:.2f}s, {wall / ideal:.2f} x), "
        f"client CPU {cpu:.2f}s ({cpu / questions * 1000:.1f} ms per question), "
        + (shown if path == "claude_agent_sdk" else "")
        + f"{passed}/{questions} passed, {tool_calls} tool calls"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--path", choices=("mcp", "claude_tool", "claude_agent_sdk"), default="mcp")
    args = parser.parse_args()
    for _ in range(args.rounds):
        run(args.questions, args.latency, args.concurrency, args.path)


if __name__ == "__main__":
    main()
