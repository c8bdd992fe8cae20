"""``claude_tool`` through pytest: answering and judging over the real ``anthropic`` SDK to the
scripted Anthropic server, a tool loop over the real MCP test server, with and without -n 2;
bad input erroring only its question; the pre-run key check; replay; the key kept out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.plugin.plugin_helpers import COUNTRIES, capitals_checkpoint
from tests.support.agents_extra import needs_agents_extra
from tests.support.anthropic_server import AnthropicFault, AnthropicServer, ToolUse

if TYPE_CHECKING:
    from tests.support.mcp_server import MCPServer

pytest.importorskip("anthropic", reason="claude_tool needs pip install 'pytest-karenina[claude]'")

KEY = "ak-7f3"
"""Shorter than the secret-looking values the environment scrub catches: only the model's
own secrets can keep it out."""
FAST_RETRIES = {
    name: {"max_attempts": 2, "backoff_min": 0, "backoff_max": 0}
    for name in ("rate_limit", "server_error", "connection", "timeout")
}


@pytest.fixture(scope="module", autouse=True)
def claude_calls_imported() -> None:
    """One streamed call and one structured call through the SDK before any run: what the SDK
    imports on first use then stays loaded (an in-process run drops what it imported)."""
    from pytest_karenina.config.model import ModelConfig
    from pytest_karenina.llm.adapters.claude_tool import ClaudeToolModel
    from pytest_karenina.llm.ports import ChatMessage, ModelRequest

    with AnthropicServer() as server:
        server.set_default({"capital": "Paris"})
        model = ClaudeToolModel(ModelConfig(id="warm", interface="claude_tool",
                                            model_name="claude-warm",
                                            anthropic_base_url=server.url,
                                            anthropic_api_key="warm-up"))  # fmt: skip
        question = (ChatMessage("user", "Capital of France?"),)
        model.invoke(ModelRequest(question, "answer_generation"))
        schema = {"type": "object", "properties": {"capital": {"type": "string"}}}
        model.invoke(ModelRequest(question, "parsing", json_schema=schema, schema_name="A"))


@pytest.fixture
def claude_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


def preset(directory: Path, server: AnthropicServer, **answering: Any) -> Path:
    base = {"interface": "claude_tool", "anthropic_base_url": server.url}
    path = directory / "claude.json"
    path.write_text(json.dumps({"config": {
        "answering_models": [{**base, "id": "claude", "model_name": "claude-answer",
                              **answering}],
        "parsing_models": [{**base, "id": "judge", "model_name": "claude-judge"}],
        "retry_policy": FAST_RETRIES,
    }}))  # fmt: skip
    return path


def judge_rules(server: AnthropicServer, capitals: dict[str, str]) -> None:
    """The judge extracts the capital each answer names."""
    for said, capital in capitals.items():
        server.add_rule({"capital": capital}, model="claude-judge", structured=True,
                        contains=said)  # fmt: skip


def run_args(pytester: pytest.Pytester, server: AnthropicServer, **answering: Any) -> list[str]:
    path = capitals_checkpoint(pytester.path)
    config = preset(pytester.path, server, **answering)
    return ["--karenina", str(path), f"--karenina-config={config}", "-p", "no:cacheprovider"]


def records(export: Path) -> dict[str, dict[str, Any]]:
    return {r["metadata"]["question_id"]: r for r in json.loads(export.read_text())["results"]}


@pytest.mark.usefixtures("claude_key")
def test_claude_answers_and_judges(
    pytester: pytest.Pytester, anthropic_server: AnthropicServer, dist: list[str]
) -> None:
    for country, capital in list(COUNTRIES.values())[:2]:
        anthropic_server.add_rule(f"The capital of {country} is {capital}.",
                                  model="claude-answer", contains=country)  # fmt: skip
    anthropic_server.add_rule("It is Kyoto.", model="claude-answer", contains="Japan")
    judge_rules(anthropic_server, {"France is Paris": "Paris", "Italy is Rome": "Rome",
                                   "Kyoto": "Kyoto"})  # fmt: skip
    export = pytester.path / "results.json"
    junit = pytester.path / "junit.xml"

    result = pytester.runpytest(*run_args(pytester, anthropic_server), *dist,
                                f"--karenina-results={export}", f"--junitxml={junit}")  # fmt: skip

    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*capital: 'Kyoto' != 'Tokyo'*"])
    found = records(export)
    meta = found["q1"]["metadata"]
    assert (meta["answering"]["interface"], meta["parsing"]["interface"]) == (
        "claude_tool", "claude_tool",
    )  # fmt: skip
    assert found["q1"]["template"]["parsed_llm_response"] == {"capital": "Paris"}
    usage = found["q1"]["template"]["usage_metadata"]
    assert usage["answer_generation"]["input_tokens"] and usage["parsing"]["output_tokens"]
    judged = [r for r in anthropic_server.messages_requests if r.model == "claude-judge"]
    assert len(judged) == 3 and all("output_config" in r.body for r in judged)
    assert all(r.stream for r in anthropic_server.messages_requests)
    for artifact in (export, junit):
        assert KEY not in artifact.read_text()


@needs_agents_extra
@pytest.mark.usefixtures("claude_key")
def test_a_claude_tool_loop_over_mcp(
    pytester: pytest.Pytester,
    anthropic_server: AnthropicServer,
    mcp_server: MCPServer,
    dist: list[str],
) -> None:
    for country, capital in COUNTRIES.values():
        answer = f"The capital of {country} is {capital}."
        anthropic_server.add_rule(answer, model="claude-answer", role="tool", last_contains=capital)
        call = ToolUse("lookup_capital", {"country": country})
        anthropic_server.add_rule(call, model="claude-answer", contains=country)
    judge_rules(anthropic_server, {f"{c} is {cap}": cap for c, cap in COUNTRIES.values()})
    export = pytester.path / "results.json"

    result = pytester.runpytest(
        *run_args(pytester, anthropic_server, mcp_urls_dict={"facts": mcp_server.url}), *dist,
        f"--karenina-results={export}",
    )  # fmt: skip

    result.assert_outcomes(passed=3)
    assert sorted(c["country"] for c in mcp_server.tool_calls("lookup_capital")) == sorted(
        country for country, _ in COUNTRIES.values()
    )
    first = records(export)["q1"]
    assert first["template"]["answering_mcp_servers"] == ["facts"]
    roles = [m["role"] for m in first["template"]["trace_messages"]]
    assert roles == ["assistant", "tool", "assistant"]
    assert first["template"]["agent_metrics"]["tool_calls"] == 1


@needs_agents_extra
@pytest.mark.usefixtures("claude_key")
def test_bad_replies_error_only_their_question_naming_the_model(
    pytester: pytest.Pytester, anthropic_server: AnthropicServer, mcp_server: MCPServer
) -> None:
    """France: 529s until the retries run out; Italy: a stream cut every time; Japan: a call
    of a tool the model was not given. Spain answers."""
    countries = {**COUNTRIES, "q4": ("Spain", "Madrid")}
    anthropic_server.add_rule(AnthropicFault.overloaded(0), model="claude-answer",
                              contains="France")  # fmt: skip
    anthropic_server.add_rule(AnthropicFault.stream_cut(4), model="claude-answer",
                              contains="Italy")  # fmt: skip
    anthropic_server.add_rule(ToolUse("drop_tables", {}), model="claude-answer", contains="Japan")
    anthropic_server.add_rule("The capital of Spain is Madrid.", model="claude-answer",
                              contains="Spain")  # fmt: skip
    judge_rules(anthropic_server, {"Madrid": "Madrid"})
    path = capitals_checkpoint(pytester.path, countries)
    config = preset(pytester.path, anthropic_server, mcp_urls_dict={"facts": mcp_server.url},
                    mcp_tool_filter=["lookup_capital"])  # fmt: skip

    result = pytester.runpytest("--karenina", str(path), f"--karenina-config={config}",
                                "-p", "no:cacheprovider")  # fmt: skip

    result.assert_outcomes(passed=1, errors=3)
    out = result.stdout.str()
    assert "claude_tool model 'claude-answer'" in out
    result.stdout.fnmatch_lines_random([
        "*rate_limit error in an agent model call*HTTP 529 overloaded_error: Overloaded*",
        "*connection error in an agent model call*the reply stream ended before message_stop*",
        "*called tool 'drop_tables', which it was not given (its tools: lookup_capital)*",
        "*answering claude-answer (claude_tool)*",
    ])  # fmt: skip
    france = [r for r in anthropic_server.messages_requests if "France" in r.text]
    assert len(france) == 3  # the first call and its 2 retries


def test_a_missing_key_stops_the_run_before_it_starts(
    pytester: pytest.Pytester, anthropic_server: AnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)

    result = pytester.runpytest(*run_args(pytester, anthropic_server), "--karenina-replay=off")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "  - claude (answering) calls live (--karenina-replay off) and has no API key: " \
        "set ANTHROPIC_API_KEY" in err  # fmt: skip
    assert "  - judge (parsing) calls live" in err
    assert anthropic_server.requests == []


@pytest.mark.usefixtures("claude_key")
def test_recorded_claude_calls_replay_with_no_server(
    pytester: pytest.Pytester, anthropic_server: AnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for country, capital in COUNTRIES.values():
        anthropic_server.add_rule(f"The capital of {country} is {capital}.",
                                  model="claude-answer", contains=country)  # fmt: skip
    judge_rules(anthropic_server, {f"{c} is {cap}": cap for c, cap in COUNTRIES.values()})
    store = pytester.path / "calls.jsonl"
    args = [*run_args(pytester, anthropic_server), f"--karenina-replay-store={store}"]
    pytester.runpytest(*args, "--karenina-replay=record").assert_outcomes(passed=3)
    anthropic_server.stop()
    monkeypatch.delenv("ANTHROPIC_API_KEY")

    replayed = pytester.runpytest(*args, "--karenina-replay=strict")

    replayed.assert_outcomes(passed=3)
    entries = [json.loads(line) for line in store.read_text().splitlines()]
    assert {e["identity"]["adapter"] for e in entries} == {"claude_tool"}
    assert KEY not in store.read_text()


@pytest.mark.usefixtures("claude_key")
def test_a_key_the_model_repeats_is_scrubbed(
    pytester: pytest.Pytester, anthropic_server: AnthropicServer
) -> None:
    anthropic_server.add_rule(f"The capital of France is Paris (my key is {KEY}).",
                              model="claude-answer", contains="France")  # fmt: skip
    anthropic_server.add_rule("No idea.", model="claude-answer")
    judge_rules(anthropic_server, {"France is Paris": "Paris", "No idea": "none"})
    export = pytester.path / "results.json"

    result = pytester.runpytest(*run_args(pytester, anthropic_server),
                                f"--karenina-results={export}")  # fmt: skip

    result.assert_outcomes(passed=1, failed=2)
    assert KEY not in export.read_text() and KEY not in result.stdout.str()
    assert "my key is ***" in records(export)["q1"]["template"]["raw_llm_response"]


@pytest.mark.usefixtures("claude_key")
def test_the_interface_option_builds_claude_models_from_their_names(
    pytester: pytest.Pytester, anthropic_server: AnthropicServer
) -> None:
    for country, capital in COUNTRIES.values():
        anthropic_server.add_rule(f"The capital of {country} is {capital}.",
                                  model="claude-answer", contains=country)  # fmt: skip
    judge_rules(anthropic_server, {f"{c} is {cap}": cap for c, cap in COUNTRIES.values()})
    path = capitals_checkpoint(pytester.path)

    result = pytester.runpytest(
        "--karenina", str(path), "--karenina-interface", "claude_tool",
        "--karenina-endpoint", anthropic_server.url, "--karenina-answering-model",
        "claude-answer", "--karenina-parsing-model", "claude-judge", "-p", "no:cacheprovider",
    )  # fmt: skip

    result.assert_outcomes(passed=3)
    assert {r.model for r in anthropic_server.messages_requests} == {
        "claude-answer",
        "claude-judge",
    }


@pytest.mark.parametrize(
    ("interface", "name", "expected"),
    [
        ("openrouter", "openai/gpt-4.1", {"model_name": "openai/gpt-4.1"}),
        ("claude_tool", "claude-sonnet-4-5", {"anthropic_base_url": None}),
        ("langchain_deep_agents", "openai:gpt-4.1", {"model_provider": "openai"}),
    ],
)
def test_the_interface_option_is_the_models_interface(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    interface: str,
    name: str,
    expected: dict[str, Any],
) -> None:
    from pytest_karenina.plugin.stash import CONFIG_KEY

    for variable in ("ANTHROPIC_API_KEY", "OPENROUTER_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.setenv(variable, "key-for-the-check")
    path = capitals_checkpoint(pytester.path)

    config = pytester.parseconfigure("--karenina", str(path), "--karenina-interface", interface,
                                     "--karenina-answering-model", name)  # fmt: skip

    (model,) = config.stash[CONFIG_KEY].answering_models
    assert model.interface == interface and model.id == name
    assert {field: getattr(model, field) for field in expected} == expected


def test_a_live_call_without_a_key_errors_only_its_question(
    pytester: pytest.Pytester, anthropic_server: AnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recorded questions replay; the one the store lacks goes live, has no key, and errors
    naming the variable (the pre-run check lets a recorded run start)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    for country, capital in COUNTRIES.values():
        anthropic_server.add_rule(f"The capital of {country} is {capital}.",
                                  model="claude-answer", contains=country)  # fmt: skip
    judge_rules(anthropic_server, {f"{c} is {cap}": cap for c, cap in COUNTRIES.values()})
    store = pytester.path / "calls.jsonl"
    args = [*run_args(pytester, anthropic_server), f"--karenina-replay-store={store}"]
    pytester.runpytest(*args, "--karenina-replay=record").assert_outcomes(passed=3)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    capitals_checkpoint(pytester.path, {**COUNTRIES, "q4": ("Spain", "Madrid")})
    sent = len(anthropic_server.requests)

    result = pytester.runpytest(*args, "--karenina-replay=replay")

    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(
        ["*ERROR*q4*", "*claude_tool model 'claude' has no API key: set ANTHROPIC_API_KEY*"]
    )
    assert len(anthropic_server.requests) == sent
