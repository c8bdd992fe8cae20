"""``claude_agent_sdk`` through pytest: the real Claude Code CLI answers in each question's
workspace and, as the judge, investigates it (agentic parsing), against the scripted
Anthropic server with a fake key, with and without -n 2; strict replay of a recorded run; a
timeout's partial trace; a cut stream erroring its question only; the pre-run checks; the
key never in an artifact."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.plugin.plugin_helpers import capitals_checkpoint
from tests.support.anthropic_server import AnthropicFault, AnthropicServer, ToolUse, Turn
from tests.support.claude_cli import (
    FAKE_KEY,
    answered,
    claude_model,
    files_holding,
    fresh,
    last_result,
    needs_claude_extra,
)

pytestmark = needs_claude_extra
ANSWERS = {"France": "Paris", "Italy": "Rome", "Japan": "Kyoto"}
"""What the answering agent writes: Japan's answer is wrong."""


@pytest.fixture(scope="module", autouse=True)
def sdks_imported() -> None:
    """The SDKs loaded before any run (an in-process run drops what it imported)."""
    pytest.importorskip("anthropic")
    import claude_agent_sdk  # noqa: F401


def extracting(body: dict[str, Any]) -> bool:
    """A one-call judge reply asking for the template's schema (not a CLI request, whose
    ``output_config`` holds only its effort)."""
    return "format" in (body.get("output_config") or {})


def script_answers(server: AnthropicServer, model: str = "claude-answerer") -> None:
    """The answering agent writes its capital to answer.txt, then says where it is."""
    server.add_rule("Saved in answer.txt.", model=model, when=answered)
    for country, capital in ANSWERS.items():
        server.add_rule(Turn(f"Writing {capital}.",
                             ToolUse("Write", {"file_path": "answer.txt", "content": capital})),
                        model=model, contains=country, when=fresh)  # fmt: skip


def script_judge(server: AnthropicServer) -> None:
    """The judge reads answer.txt and reports it; the extraction reads the report."""
    for capital in ANSWERS.values():
        server.add_rule({"capital": capital}, model="claude-judge", when=extracting,
                        contains=f"answer.txt holds: {capital}")  # fmt: skip
    server.add_rule(lambda body: f"answer.txt holds: {last_result(body).split(chr(9))[-1]}",
                    model="claude-judge", when=answered)  # fmt: skip
    server.add_rule(ToolUse("Read", {"file_path": "answer.txt"}), model="claude-judge",
                    when=fresh)  # fmt: skip


def preset(directory: Path, server: AnthropicServer, **settings: Any) -> Path:
    answering = settings.pop("answering", {})
    path = directory / "claude.json"
    path.write_text(json.dumps({"config": {
        "answering_models": [claude_model(server, "claude-answerer", id="claude", **answering)],
        "parsing_models": [claude_model(server, "claude-judge", id="judge")],
        "agentic_parsing": True, "agentic_judge_context": "workspace_only", **settings,
    }}))  # fmt: skip
    return path


def run_args(pytester: pytest.Pytester, server: AnthropicServer, **settings: Any) -> list[str]:
    path = capitals_checkpoint(pytester.path)
    config = preset(pytester.path, server, **settings)
    return ["--karenina", str(path), f"--karenina-config={config}", "-p", "no:cacheprovider"]


def records(export: Path) -> dict[str, dict[str, Any]]:
    return {r["metadata"]["question_id"]: r for r in json.loads(export.read_text())["results"]}


@pytest.mark.subprocess
def test_claude_code_answers_in_its_workspace_and_judges_it(
    pytester: pytest.Pytester, anthropic_server: AnthropicServer, dist: list[str]
) -> None:
    script_answers(anthropic_server)
    script_judge(anthropic_server)
    export, junit = pytester.path / "results.json", pytester.path / "junit.xml"
    html = pytester.path / "report.html"

    result = pytester.runpytest(*run_args(pytester, anthropic_server), *dist,
                                f"--karenina-results={export}", f"--junitxml={junit}",
                                f"--html={html}", "--self-contained-html")  # fmt: skip

    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*capital: 'Kyoto' != 'Tokyo'*"])
    found = records(export)
    template = found["q1"]["template"]
    assert [m["role"] for m in template["trace_messages"]] == ["assistant", "tool", "assistant"]
    assert template["trace_messages"][0]["tool_calls"][0]["name"] == "Write"
    assert template["agent_metrics"]["tool_calls"] == 1
    assert template["agent_metrics"]["tools_used"] == ["Write"]
    assert template["agentic_parsing_performed"] is True
    assert "answer.txt holds: Paris" in template["investigation_trace"]
    assert template["parsed_llm_response"] == {"capital": "Paris"}
    usage = template["usage_metadata"]
    assert usage["answer_generation"]["input_tokens"] > 0
    assert usage["agentic_parsing_investigation"]["output_tokens"] > 0
    meta = found["q1"]["metadata"]
    assert (meta["answering"]["interface"], meta["parsing"]["interface"]) == (
        "claude_agent_sdk", "claude_agent_sdk",
    )  # fmt: skip
    # The answering agent was told its workspace (the CLI's working directory); the judge's
    # CLI had no write tool; every working copy is gone.
    first = next(r for r in anthropic_server.messages_requests if r.model == "claude-answerer")
    assert "Workspace directory: .\n" in first.text
    judge_tools = {t for r in anthropic_server.messages_requests if r.model == "claude-judge"
                   for t in r.tools}  # fmt: skip
    assert "Read" in judge_tools and not {"Write", "Edit", "Bash"} & judge_tools
    assert not [p for p in pytester.path.iterdir() if "_run_" in p.name]
    assert files_holding(pytester.path, FAKE_KEY) == [pytester.path / "claude.json"]  # its own


@pytest.mark.subprocess
def test_a_recorded_run_replays_strictly_without_the_cli_or_the_server(
    pytester: pytest.Pytester, anthropic_server: AnthropicServer
) -> None:
    script_answers(anthropic_server)
    script_judge(anthropic_server)
    store = pytester.path / "calls.jsonl"
    args = [*run_args(pytester, anthropic_server, replicate_count=2),
            f"--karenina-replay-store={store}"]  # fmt: skip
    pytester.runpytest(*args, "--karenina-replay=record").assert_outcomes(passed=4, failed=2)
    calls = len(anthropic_server.requests)
    anthropic_server.stop()

    export = pytester.path / "replayed.json"
    replayed = pytester.runpytest(*args, "--karenina-replay=strict",
                                  f"--karenina-results={export}")  # fmt: skip

    replayed.assert_outcomes(passed=4, failed=2)  # a miss would be an error
    assert len(anthropic_server.requests) == calls
    entries = [json.loads(line) for line in store.read_text().splitlines()]
    runs = [e for e in entries if e["call_kind"] == "answer_generation"]
    assert len(runs) == 6  # each replicate's run recorded apart
    assert {"agentic_parsing_investigation"} <= {e["call_kind"] for e in entries}
    results = json.loads(export.read_text())["results"]
    assert all(r["template"]["trace_messages"][1]["name"] == "Write" for r in results)
    assert files_holding(pytester.path, FAKE_KEY) == [pytester.path / "claude.json"]  # its own


@pytest.mark.subprocess
@pytest.mark.parametrize("scoring", [True, False], ids=["judged", "not-judged"])
def test_a_run_past_its_time_limit_keeps_its_partial_trace(
    pytester: pytest.Pytester, anthropic_server: AnthropicServer, scoring: bool
) -> None:
    anthropic_server.add_rule("too late", model="claude-answerer", when=answered, latency=60)
    script_answers(anthropic_server)
    anthropic_server.add_rule({"capital": "Paris"}, model="claude-judge", when=extracting)
    export = pytester.path / "results.json"
    settings = {"agentic_parsing": False, "allow_partial_trace_scoring": scoring}
    args = run_args(pytester, anthropic_server, answering={"agent_timeout": 2}, **settings)

    result = pytester.runpytest(*args, "-k", "q1", f"--karenina-results={export}")

    template = records(export)["q1"]["template"]
    assert template["response_timeout_partial"] is True
    assert [m["role"] for m in template["trace_messages"]] == ["assistant", "tool"]
    if scoring:
        result.assert_outcomes(passed=1, deselected=2)
        assert template["parsed_llm_response"] == {"capital": "Paris"}
    else:
        result.assert_outcomes(errors=1, deselected=2)
        result.stdout.fnmatch_lines(["*did not finish within its time limit*"])


@pytest.mark.subprocess
def test_a_stream_cut_short_errors_its_question_only_naming_the_model(
    pytester: pytest.Pytester, anthropic_server: AnthropicServer
) -> None:
    anthropic_server.add_rule(AnthropicFault.stream_cut(3), model="claude-answerer",
                              contains="Japan")  # fmt: skip
    script_answers(anthropic_server)
    script_judge(anthropic_server)
    export = pytester.path / "results.json"

    result = pytester.runpytest(*run_args(pytester, anthropic_server),
                                f"--karenina-results={export}")  # fmt: skip

    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*Adapter call failed: claude_agent_sdk model 'claude': the run "
                                 "failed: API Error: Connection to the API was lost*"])  # fmt: skip
    details = records(export)["q3"]["metadata"]["failure"]["details"]
    assert "claude_agent_sdk model 'claude'" in details["error_message"]


def test_models_without_a_key_are_named_before_the_run(
    pytester: pytest.Pytester, anthropic_server: AnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    args = run_args(pytester, anthropic_server, answering={"anthropic_api_key": None})

    result = pytester.runpytest(*args)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*claude*ANTHROPIC_API_KEY*"])
    assert anthropic_server.requests == []


def test_without_the_claude_extra_the_run_is_a_usage_error_naming_it(
    pytester: pytest.Pytester, anthropic_server: AnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pytest_karenina.llm.agents.claude_code_setup as setup

    monkeypatch.setattr(
        setup, "missing_claude_extra",
        lambda: f"claude_agent_sdk models need claude-agent-sdk: {setup.CLAUDE_EXTRA}",
    )  # fmt: skip

    result = pytester.runpytest(*run_args(pytester, anthropic_server))

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*need claude-agent-sdk: pip install 'pytest-karenina?claude?'"])
    assert anthropic_server.requests == []


@pytest.mark.subprocess
def test_a_claude_code_judge_grades_agentic_rubric_traits(
    pytester: pytest.Pytester, anthropic_server: AnthropicServer
) -> None:
    """Stage 11b through the same agent port: the judge's CLI reads what the answering
    agent's CLI wrote, and its report is extracted into the trait's value."""
    from pytest_karenina.checkpoint import Benchmark, Question, save_checkpoint
    from pytest_karenina.rubrics.traits import AgenticRubricTrait, Rubric
    from tests.plugin.plugin_helpers import CAPITAL_TEMPLATE, COUNTRIES
    from tests.support.anthropic_rules import request_text

    questions = [
        Question(id=qid, text=f"What is the capital of {country}?", raw_answer=capital,
                 template_code=CAPITAL_TEMPLATE.format(capital=capital), finished=True,
                 rubric=Rubric(agentic_traits=[AgenticRubricTrait(
                     name="Saved", description=f"answer.txt names {capital}",
                     context_mode="workspace_only")]))
        for qid, (country, capital) in COUNTRIES.items()
    ]  # fmt: skip
    path = pytester.path / "capitals.jsonld"
    save_checkpoint(Benchmark(name="capitals", questions=questions), path)

    def extract(body: dict[str, Any]) -> dict[str, bool]:
        text = request_text(body)
        wanted = text.split("answer.txt names ", 1)[1].split()[0].strip(".")
        return {"result": f"answer.txt holds: {wanted}" in text}

    anthropic_server.add_rule(extract, model="claude-judge", when=extracting)
    script_answers(anthropic_server)
    script_judge(anthropic_server)
    config = preset(pytester.path, anthropic_server, agentic_parsing=False,
                    evaluation_mode="rubric_only")  # fmt: skip
    export = pytester.path / "results.json"

    result = pytester.runpytest(
        "--karenina", str(path), f"--karenina-config={config}", "-p", "no:cacheprovider",
        f"--karenina-results={export}",
    )  # fmt: skip

    result.assert_outcomes(passed=2, failed=1)
    rubric = records(export)["q3"]["rubric"]
    assert rubric["agentic_trait_scores"] == {"Saved": False}
    trace = rubric["agentic_trait_investigation_traces"]["Saved"]
    assert "answer.txt holds: Kyoto" in str(trace)
    models = {r.body.get("model") for r in anthropic_server.messages_requests}
    assert models == {"claude-answerer", "claude-judge"}


@pytest.mark.subprocess
def test_the_interface_option_builds_claude_code_models_from_their_names(
    pytester: pytest.Pytester, anthropic_server: AnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    for country, capital in ANSWERS.items():
        anthropic_server.add_rule(f"It is {capital}.", model="claude-answerer", contains=country)
        anthropic_server.add_rule({"capital": capital}, model="claude-judge", when=extracting,
                                  contains=f"It is {capital}.")  # fmt: skip
    path = capitals_checkpoint(pytester.path)

    result = pytester.runpytest(
        "--karenina", str(path), "--karenina-interface", "claude_agent_sdk",
        "--karenina-endpoint", anthropic_server.url, "--karenina-answering-model",
        "claude-answerer", "--karenina-parsing-model", "claude-judge", "-p", "no:cacheprovider",
    )  # fmt: skip

    result.assert_outcomes(passed=2, failed=1)
    answering = [r for r in anthropic_server.messages_requests if r.model == "claude-answerer"]
    assert len(answering) == 3 and all(r.path.endswith("?beta=true") for r in answering)
