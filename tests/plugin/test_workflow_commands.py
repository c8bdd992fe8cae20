"""Hostile benchmarks and model replies forge no GitHub workflow command (issue 24, item 7).

The output of each run is read as the Actions runner reads a step's log (``actions/runner``,
``ActionCommandManager`` and ``ActionCommand``): per line, ``::name ...::data`` after leading
whitespace, or ``##[name ...]data`` anywhere in the line; ``::stop-commands::<token>`` stops
every command until ``::<token>::``. The commands it would execute must be the plugin's own
annotations, one per failed question, and nothing else: not a line forged by a question id
with ``\\r\\n::error ...`` (also where a log record quotes it, under "Captured log setup"),
a model reply, a tool name chosen by the model or a rejected deep judgment quote.

pytester splits its captured output with ``str.splitlines`` (on ``\\r``, ``\\n`` and a few
more separators than the runner's ``\\r``, ``\\n``, ``\\r\\n``): every line the runner sees
starts a line here too, so a command the runner would execute is found here as well.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.plugin.plugin_helpers import (
    COUNTRIES,
    capitals_checkpoint,
    copy_checkpoint,
    endpoint_args,
    scripted,
)
from tests.support.agents_extra import needs_agents_extra
from tests.support.openai_rules import request_text
from tests.support.openai_server import OpenAIServer

if TYPE_CHECKING:
    from tests.support.mcp_server import MCPServer

REGISTERED = {
    "add-mask", "add-matcher", "add-path", "debug", "echo", "endgroup", "error", "group",
    "notice", "remove-matcher", "save-state", "set-env", "set-output", "stop-commands",
    "warning",
}  # fmt: skip
"""The runner's registered workflow commands (its command extensions)."""
FORGED = "\r\n::error title=forged::{where}\r\n##[error]forged {where}\r::warning::forged"
HOSTILE_ID = "q2" + FORGED.format(where="question id")
HOSTILE_REPLY = "##[error]forged reply ![p](https://e.x/p.png)" + FORGED.format(where="reply")


@dataclass(frozen=True)
class Command:
    name: str
    properties: dict[str, str]
    data: str


def _parse(line: str) -> Command | None:
    """A command of one log line, as ``ActionCommand.TryParseV2`` then ``TryParse`` read it
    (any name; whether it is registered is decided by the caller)."""
    message = line.lstrip()
    if message.startswith("::"):
        end = message.find("::", 2)
        if end >= 0:
            name, _, props = message[2:end].partition(" ")
            pairs = (p.split("=", 1) for p in props.split(",") if "=" in p)
            return Command(name.lower(), {k: v for k, v in pairs}, message[end + 2 :])
    start = line.find("##[")
    close = line.find("]", start) if start >= 0 else -1
    if close >= 0:
        name, _, props = line[start + 3 : close].partition(" ")
        pairs = (p.split("=", 1) for p in props.split(";") if "=" in p)
        return Command(name.lower(), {k: v for k, v in pairs}, line[close + 1 :])
    return None


def executed_commands(lines: list[str], honour_stops: bool = True) -> list[Command]:
    """The workflow commands the runner would execute for these log lines, honouring
    ``stop-commands`` and its resume token (stop and resume lines are left out); with
    ``honour_stops=False``, those of a runner that ignored them."""
    executed: list[Command] = []
    token: str | None = None
    for line in lines:
        command = _parse(line)
        if command is None:
            continue
        if token is not None:
            if command.name == token.lower():
                token = None
        elif command.name == "stop-commands":
            token = command.data if honour_stops else None
        elif command.name in REGISTERED:
            executed.append(command)
    return executed


def annotations_only(result: pytest.RunResult, file: str, failed: int) -> list[Command]:
    """Assert that the run executes only the plugin's own annotations: one ``::error`` per
    failed question, each naming the checkpoint file (a forged one names none). The hostile
    text is defused where it is printed too: without ``stop-commands`` no more would run."""
    lines = [*result.stdout.lines, *result.stderr.lines]
    expected = [("error", file)] * failed
    for honour_stops in (True, False):
        executed = executed_commands(lines, honour_stops)
        found = [(c.name, c.properties.get("file")) for c in executed]
        assert found == expected, (honour_stops, "\n".join(lines))
    return executed_commands(lines)


def assert_literal(markdown: str) -> None:
    """Nothing in the job summary can render as an image, a link, an autolink, HTML or code:
    once the backslash-escaped characters are set aside, no bracket, angle bracket, backtick
    or ``scheme://`` is left."""
    unescaped = re.sub(r"\\.", "", markdown)
    assert not set("[]<>`") & set(unescaped), unescaped
    assert "://" not in unescaped, unescaped


@pytest.fixture
def step_summary(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = pytester.path / "step_summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(path))
    return path


def test_the_parser_reads_lines_as_the_runner_does() -> None:
    lines = [
        "  ::error file=a.py,title=t::message",
        "text ##[warning]legacy",
        "::unknown::not registered",
        "::stop-commands::tok3n",
        "::error::stopped",
        "##[tok3n]",  # the resume token works in either form
        "::notice::resumed",
        "no :: command",
    ]
    assert executed_commands(lines) == [
        Command("error", {"file": "a.py", "title": "t"}, "message"),
        Command("warning", {}, "legacy"),
        Command("notice", {}, "resumed"),
    ]


def test_commands_are_stopped_for_the_whole_run_but_the_annotations(
    pytester: pytest.Pytester, openai_server: OpenAIServer, step_summary: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """``::stop-commands::<token>`` is the first line; the token resumes commands right before
    the annotations, a fresh one stops them after, and the last line resumes them for good.
    Every run draws new tokens; without GitHub output nothing is stopped."""
    from tests.plugin.test_github import answers

    answers(openai_server, q3="Osaka")
    checkpoint = capitals_checkpoint(pytester.path)
    args = ["--karenina", str(checkpoint), *endpoint_args(openai_server)]
    tokens: list[str] = []
    for _ in range(2):
        lines = pytester.runpytest(*args).stdout.lines
        first = re.fullmatch(r"::stop-commands::([0-9a-f]{32})", lines[0])
        assert first is not None, lines
        at = next(i for i, line in enumerate(lines) if line.startswith("::error "))
        assert lines[at - 1] == f"::{first.group(1)}::"
        second = re.fullmatch(r"::stop-commands::([0-9a-f]{32})", lines[at + 1])
        assert second is not None, lines
        assert lines[-1] == f"::{second.group(1)}::"
        assert [line for line in lines if line.startswith("::")] == [
            lines[0], lines[at - 1], lines[at], lines[at + 1], lines[-1]
        ]  # fmt: skip
        tokens += [first.group(1), second.group(1)]
    assert len(set(tokens)) == 4

    monkeypatch.delenv("GITHUB_ACTIONS")
    assert "stop-commands" not in pytester.runpytest(*args).stdout.str()


def test_a_hostile_question_id_and_model_reply_forge_no_command(
    pytester: pytest.Pytester, openai_server: OpenAIServer, step_summary: Path,
    dist: list[str],
) -> None:  # fmt: skip
    """The question with the hostile id is answered twice (replicates disagree: it is listed
    as flaky), once right and once with the hostile reply."""
    countries = {"q1": COUNTRIES["q1"], HOSTILE_ID: COUNTRIES["q2"], "q3": COUNTRIES["q3"]}
    for reply in ("Rome", HOSTILE_REPLY):
        openai_server.add_rule(f"It is {reply}.", structured=False, contains="of Italy", times=1)
    for country, capital in countries.values():
        openai_server.add_rule(f"It is {capital}.", structured=False, contains=f"of {country}")
    for capital in ("Paris", "Rome", "Tokyo", HOSTILE_REPLY):
        openai_server.add_rule({"capital": capital}, structured=True, contains=f"It is {capital}.")
    checkpoint = capitals_checkpoint(pytester.path, countries)

    result = pytester.runpytest(
        "--karenina", str(checkpoint), *endpoint_args(openai_server), "--karenina-replicates=2",
        "--karenina-replicate-policy=majority", "-ra", "-v", *dist,
    )  # fmt: skip

    result.assert_outcomes(passed=2, failed=1)
    assert "flaky: 1 items" in result.stdout.str()
    (annotation,) = annotations_only(result, "capitals.jsonld", failed=1)
    assert annotation.properties["title"].startswith("q2%0D%0A%3A%3Aerror title=forged")
    markdown = step_summary.read_text()
    assert "forged reply" in markdown and "p.png" in markdown
    assert_literal(markdown)


def _hostile_excerpts(body: dict[str, Any]) -> str:
    """The judge quotes the answer for each trait, except for Accuracy of rq001: there it
    invents a quote that breaks the line into workflow commands."""
    text = request_text(body)
    trait = re.search(r'<trait name="([^"]+)">', text)
    answer = re.search(r"<answer>\n(.*?)\n</answer>", text, re.S)
    assert trait is not None and answer is not None
    grounded = answer.group(1).strip().splitlines()[-1]
    invented = trait.group(1) == "Accuracy" and grounded.startswith("BCL2")
    quote = "BCL2 " + FORGED.format(where="quote") if invented else grounded
    return json.dumps({"excerpts": [{"text": quote, "confidence": "high"}]})


def test_a_rejected_deep_judgment_quote_forges_no_command(
    pytester: pytest.Pytester, openai_server: OpenAIServer, step_summary: Path,
    dist: list[str],
) -> None:  # fmt: skip
    """The judge invents a quote for one trait of rq001; rq001's id breaks the line too, and
    its pipeline logs the id (``Captured log setup``) when the rubric gate fails."""
    from tests.plugin.test_deep_judgment_rubric_plugin import NOT_GATED, script_rubric_deep_judgment

    openai_server.add_rule(_hostile_excerpts, contains="You collect evidence")  # first wins
    script_rubric_deep_judgment(openai_server)
    scripted(openai_server, "with_rubrics.jsonld")
    path = copy_checkpoint(pytester, "with_rubrics.jsonld")
    hostile_id = json.dumps("urn:karenina:test:rq001" + FORGED.format(where="logged id"))
    path.write_text(path.read_text().replace('"urn:karenina:test:rq001"', hostile_id))

    result = pytester.runpytest(
        "--karenina", str(path), *endpoint_args(openai_server), NOT_GATED,
        "--karenina-deep-judgment-rubric=enable_all", "--karenina-mode=rubric_only",
        "-ra", "--log-level=WARNING", *dist,
    )  # fmt: skip

    result.assert_outcomes(passed=2, failed=1)
    shown = result.stdout.str()
    assert "forged quote" in shown and "Captured log setup" in shown  # shown, as text
    assert "forged logged id" in shown
    annotations_only(result, "with_rubrics.jsonld", failed=1)


@needs_agents_extra
def test_a_tool_name_chosen_by_the_model_forges_no_command(
    pytester: pytest.Pytester, openai_server: OpenAIServer, mcp_server: MCPServer,
    step_summary: Path,
) -> None:  # fmt: skip
    """In one process: the two tests above hold the controller's output under xdist, and
    tests/plugin/test_agents_plugin.py an agent's trace crossing from a worker."""
    from tests.plugin.test_agents_plugin import preset

    tool = "lookup" + FORGED.format(where="tool name")
    openai_server.add_rule({"country": "any"}, model="agent-model", tool=tool, role="user")
    openai_server.add_rule("I believe it is Kyoto.", model="agent-model", role="tool")
    openai_server.add_rule({"capital": "Kyoto"}, model="judge-model", contains="Kyoto")
    path = capitals_checkpoint(pytester.path)
    config = preset(pytester.path, openai_server, mcp_server)

    result = pytester.runpytest("--karenina", str(path), f"--karenina-config={config}", "-ra")

    result.assert_outcomes(passed=0, failed=3)
    assert "tool name" in result.stdout.str()
    annotations_only(result, "capitals.jsonld", failed=3)
