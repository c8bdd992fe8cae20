"""Agentic rubric traits through pytest with real parts: deep agents (``langchain_deep_agents``)
over HTTP to the scripted OpenAI-compatible server, real workspaces under the checkpoint's
directory. The answering agent writes answer.txt; the judge reads it back, and the extraction
of its report decides the trait. Both rubric modes (template_and_rubric with either
strategy), template_only leaving the traits alone, ``-n 2``, the terminal, JUnit, pytest-html,
the export, strict replay of recorded runs (replicates keyed apart), a failing investigation,
and the baseline's score comparison."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.checkpoint import Benchmark, Question, save_checkpoint
from pytest_karenina.results import VerificationResultSet
from pytest_karenina.rubrics.traits import AgenticRubricTrait, Rubric
from tests.plugin.plugin_helpers import (
    CAPITAL_TEMPLATE,
    COUNTRIES,
    rendered_dom,
    rendered_rows,
)
from tests.plugin.test_html import extras_html, report_data
from tests.support.agents_extra import needs_agents_extra
from tests.support.openai_rules import Fault, messages_of, request_text
from tests.support.openai_server import OpenAIServer

pytestmark = needs_agents_extra

SAVED = "SavedAnswer"
DOCUMENTED = "Documented"


def checkpoint(directory: Path, *, documented: bool = False) -> Path:
    """The capitals; each question's rubric: answer.txt in the workspace names its capital
    (and, with ``documented``, a second trait whose investigation always fails)."""
    questions = []
    for qid, (country, capital) in COUNTRIES.items():
        traits = [AgenticRubricTrait(name=SAVED, description=f"answer.txt names {capital}",
                                     context_mode="workspace_only")]  # fmt: skip
        if documented:
            traits.append(AgenticRubricTrait(name=DOCUMENTED, description="A README exists"))
        questions.append(Question(
            id=qid, text=f"What is the capital of {country}?", raw_answer=capital,
            template_code=CAPITAL_TEMPLATE.format(capital=capital), finished=True,
            rubric=Rubric(agentic_traits=traits),
        ))  # fmt: skip
    path = directory / "capitals.jsonld"
    save_checkpoint(Benchmark(name="capitals", questions=questions), path)
    return path


def preset(directory: Path, server: OpenAIServer, **config: Any) -> Path:
    def deep(name: str) -> dict[str, Any]:
        return {"id": name, "model_name": name, "interface": "langchain_deep_agents",
                "model_provider": "openai",
                "extra_kwargs": {"base_url": server.base_url, "api_key": "test-key"}}  # fmt: skip

    path = directory / "agentic.json"
    path.write_text(json.dumps({"config": {
        "answering_models": [deep("answerer")], "parsing_models": [deep("judge")], **config,
    }}))  # fmt: skip
    return path


def has_tools(body: dict[str, Any]) -> bool:
    return bool(body.get("tools"))


def script(server: OpenAIServer, **cities: str) -> None:
    """Each answer goes to answer.txt (the capital, or the city given for the question id);
    the judge reads it back; the extraction compares it with the criterion's capital."""
    server.reset()
    server.add_rule(Fault.http_error(400, "the README tool is broken"), model="judge",
                    contains=f"## Criterion: {DOCUMENTED}", when=has_tools)  # fmt: skip

    def extract(body: dict[str, Any]) -> str:
        text = request_text(body)
        wanted = re.search(r"answer\.txt names (\w+)", text)
        found = re.search(r"answer\.txt holds: (\w+)", text)
        return json.dumps({"result": bool(wanted and found and wanted[1] == found[1])})

    server.add_rule(extract, model="judge", contains="Investigation report:")
    # The template's own parse (template_and_rubric): the city the answering agent wrote.
    server.add_rule(lambda body: {"capital": re.findall(r"Saved (\w+)", request_text(body))[-1]},
                    model="judge", contains="capital city named")  # fmt: skip
    server.add_rule({"file_path": "/answer.txt"}, model="judge", tool="read_file", role="user",
                    when=has_tools)  # fmt: skip

    def report(body: dict[str, Any]) -> str:  # the file's last line, after read_file's header
        return f"answer.txt holds: {str(messages_of(body)[-1]['content']).splitlines()[-1]}"

    server.add_rule(report, model="judge", role="tool")
    for qid, (country, capital) in COUNTRIES.items():
        city = cities.get(qid, capital)
        server.add_rule({"file_path": "/answer.txt", "content": city}, model="answerer",
                        tool="write_file", role="user", last_contains=country)  # fmt: skip
        server.add_rule(f"Saved {city} in answer.txt.", model="answerer", role="tool",
                        contains=country)  # fmt: skip


def args(pytester: pytest.Pytester, server: OpenAIServer, *extra: str, **config: Any) -> list[str]:
    path = checkpoint(pytester.path, documented=config.pop("documented", False))
    return ["--karenina", str(path), f"--karenina-config={preset(pytester.path, server, **config)}",
            "-p", "no:cacheprovider", *extra]  # fmt: skip


def records(export: Path) -> dict[str, dict[str, Any]]:
    return {r["metadata"]["question_id"]: r for r in json.loads(export.read_text())["results"]}


def properties(junit: Path, name: str) -> dict[str, str]:
    for case in ET.parse(junit).getroot().iter("testcase"):
        if case.get("name") == name:
            return {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
    raise AssertionError(f"no testcase {name}")


def test_agentic_traits_decide_rubric_only_items(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    script(openai_server, q3="Kyoto")
    junit, export = pytester.path / "junit.xml", pytester.path / "results.json"

    result = pytester.runpytest(*args(
        pytester, openai_server, "--karenina-mode=rubric_only", f"--junitxml={junit}",
        f"--karenina-results={export}", *dist,
    ))  # fmt: skip

    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([
        "*rubric gate: 1 of 1 gated traits failed",
        f"*trait {SAVED} (agentic boolean): false, needs == true; judge: 'answer.txt holds: Kyoto'",
    ])  # fmt: skip
    assert properties(junit, "q1")[f"karenina.rubric.{SAVED}"] == "True"
    assert properties(junit, "q3")[f"karenina.rubric.{SAVED}"] == "False"
    found = records(export)
    rubric = found["q3"]["rubric"]
    assert rubric["agentic_trait_scores"] == {SAVED: False}
    assert "answer.txt holds: Kyoto" in rubric["agentic_trait_investigation_traces"][SAVED]
    assert rubric["trait_provenance"] == {SAVED: "question_specific"}
    usage = found["q1"]["template"]["usage_metadata"]
    assert {"rubric_agentic_trait_investigation", "rubric_agentic_trait_extraction"} <= set(usage)
    # The export reads back with the agentic fields as written.
    loaded = VerificationResultSet.from_export_json(export.read_text())
    back = {r.metadata.question_id: r.rubric for r in loaded.results}
    assert back["q3"] is not None and back["q3"].model_dump(exclude_none=True) == {
        key: value for key, value in rubric.items() if value is not None
    }
    # Each judge read its own question's workspace, and every working copy is gone.
    reports = [r.text for r in openai_server.chat_requests if "Investigation report:" in r.text]
    assert sorted(re.findall(r"holds: (\w+)", "\n".join(reports))) == ["Kyoto", "Paris", "Rome"]
    assert [p.name for p in pytester.path.iterdir() if "_run_" in p.name] == []


@pytest.mark.parametrize("strategy", ["individual", "shared"])
def test_template_and_rubric_reports_agentic_traits_beside_the_template_verdict(
    pytester: pytest.Pytester, openai_server: OpenAIServer, strategy: str
) -> None:
    script(openai_server, q2="Milan")
    export = pytester.path / "results.json"

    result = pytester.runpytest(*args(
        pytester, openai_server, "--karenina-mode=template_and_rubric",
        f"--karenina-results={export}", agentic_rubric_strategy=strategy,
    ))  # fmt: skip

    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*capital: 'Milan' != 'Rome'*"])
    found = records(export)
    assert found["q2"]["rubric"]["agentic_trait_scores"] == {SAVED: False}
    assert found["q1"]["rubric"]["agentic_trait_scores"] == {SAVED: True}
    assert found["q1"]["metadata"]["evaluation_mode"] == "template_and_rubric"


def test_template_only_leaves_agentic_traits_uninvestigated(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    script(openai_server, q2="Milan")
    export = pytester.path / "results.json"

    result = pytester.runpytest(*args(
        pytester, openai_server, "--karenina-mode=template_only", f"--karenina-results={export}",
    ))  # fmt: skip

    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*capital: 'Milan' != 'Rome'*"])
    found = records(export)
    assert {qid: record["rubric"] for qid, record in found.items()} == dict.fromkeys(found)
    assert found["q1"]["metadata"]["evaluation_mode"] == "template_only"
    assert not [r for r in openai_server.chat_requests if "Investigation report:" in r.text]


def test_a_failing_investigation_errors_only_its_trait(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    script(openai_server)
    export, report = pytester.path / "results.json", pytester.path / "report.html"

    result = pytester.runpytest(*args(
        pytester, openai_server, "--karenina-mode=rubric_only", f"--karenina-results={export}",
        f"--html={report}", "--self-contained-html", documented=True,
    ))  # fmt: skip

    result.assert_outcomes(errors=3)  # a gated trait without a value: nothing unmeasured passes
    result.stdout.fnmatch_lines([
        "rubric traits that decide the verdict could not be measured:",
        f"  trait {DOCUMENTED} (agentic boolean): no value (the investigation failed:*400*",
    ])  # fmt: skip
    rubric = records(export)["q1"]["rubric"]
    assert rubric["agentic_trait_scores"] == {SAVED: True}
    assert rubric["trait_errors"][DOCUMENTED].startswith("the investigation failed:")
    # The HTML's rubric table: the finding, the whole investigation folded below it.
    entries = report_data(report)["tests"]["capitals.jsonld::q1"]  # the error's setup row
    extras = "".join(extras_html(entry) for entry in entries)
    assert '<details class="karenina-investigation"><summary>investigation</summary>' in extras
    assert "answer.txt holds: Paris" in extras

    passing = pytester.runpytest(*args(
        pytester, openai_server, "--karenina-mode=rubric_only", f"--karenina-results={export}",
        f"--karenina-rubric-gates={DOCUMENTED} off", documented=True,
    ))  # fmt: skip
    passing.assert_outcomes(passed=3)


def test_recorded_agentic_judges_replay_strictly_with_no_server(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    script(openai_server, q3="Kyoto")
    store = pytester.path / "calls.jsonl"
    run_args = args(pytester, openai_server, "--karenina-mode=rubric_only",
                    "--karenina-replicates=2", f"--karenina-replay-store={store}")  # fmt: skip
    pytester.runpytest(*run_args, "--karenina-replay=record").assert_outcomes(passed=4, failed=2)
    kinds = [json.loads(line).get("call_kind") for line in store.read_text().splitlines()]
    # One recorded investigation per question and replicate.
    assert kinds.count("rubric_agentic_trait_investigation") == 6
    openai_server.stop()

    replayed = pytester.runpytest(*run_args, "--karenina-replay=strict")

    replayed.assert_outcomes(passed=4, failed=2)  # a miss would be an error
    replayed.stdout.fnmatch_lines([f"*trait {SAVED} (agentic boolean): false*Kyoto*"])


def test_the_baseline_compares_agentic_scores(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    baseline = pytester.path / "karenina-baseline.json"
    script(openai_server)
    common = ("--karenina-mode=rubric_only", f"--karenina-baseline={baseline}")
    accepted = pytester.runpytest(*args(pytester, openai_server, *common,
                                        "--karenina-baseline-update"))  # fmt: skip
    assert accepted.ret == pytest.ExitCode.OK, accepted.stdout.str()
    entry = json.loads(baseline.read_text())["entries"][0]
    assert entry["rubric"] == {SAVED: 1.0} and entry["fingerprint"]["rubric"] != "none"
    script(openai_server, q1="Lyon")

    result = pytester.runpytest(*args(pytester, openai_server, *common))

    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["  regression: q1 [[]answerer[]]: pass -> fail*"])


@pytest.mark.subprocess
def test_the_html_folds_the_investigation_in_headless_chromium(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    script(openai_server, q3="Kyoto")
    report = pytester.path / "report.html"
    pytester.runpytest(*args(
        pytester, openai_server, "--karenina-mode=rubric_only", f"--html={report}",
        "--self-contained-html",
    )).assert_outcomes(passed=2, failed=1)  # fmt: skip

    dom = rendered_dom(pytester, report)
    assert rendered_rows(dom, "capitals.jsonld::q3")
    row = dom.split('id="capitals.jsonld::q3"', 1)[1].split('<tbody class="results-table-row')[0]
    table = row.split('<table class="karenina-rubric">', 1)[1].split("</table>", 1)[0]
    assert f"<td>{SAVED}</td><td>agentic boolean</td><td>false</td>" in table
    # The finding in the cell; the whole run folded (closed) below it.
    assert "answer.txt holds: Kyoto<details" in table
    assert '<details class="karenina-investigation"><summary>investigation</summary>' in table
