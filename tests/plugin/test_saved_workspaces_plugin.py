"""Saved workspaces through pytest (``workspace_output_mode``), with real parts: deep agents
over HTTP to the scripted OpenAI-compatible server write files in copies of a question
workspace on disk; the saved trees are checked on disk, with and without ``-n 2``, and so are
the header line, JUnit properties, the pytest-html link and the results export, in the
template and rubric modes. A save that cannot be written errors its item only; a directory
saves must not go to is a usage error."""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.rubrics.traits import AgenticRubricTrait, RegexTrait, Rubric
from tests.plugin.plugin_helpers import COUNTRIES, capitals_checkpoint
from tests.support.agents_extra import needs_agents_extra
from tests.support.openai_server import OpenAIServer

pytestmark = needs_agents_extra


def workspace(directory: Path, rubric: Rubric | None = None) -> Path:
    """Every question's workspace ``task``: an input and a log the exclude pattern drops."""
    task = directory / "task"
    task.mkdir()
    (task / "input.txt").write_text("countries\n")
    (task / "notes.log").write_text("noise\n")
    return capitals_checkpoint(directory, workspace_path="task", rubric=rubric)


def preset(directory: Path, server: OpenAIServer, **saving: Any) -> Path:
    def deep(name: str) -> dict[str, Any]:
        return {"id": name, "model_name": name, "interface": "langchain_deep_agents",
                "model_provider": "openai",
                "extra_kwargs": {"base_url": server.base_url, "api_key": "test-key"}}  # fmt: skip

    path = directory / "saving.json"
    path.write_text(json.dumps({"config": {
        "answering_models": [deep("answerer")], "parsing_models": [deep("judge")],
        "agentic_parsing": True, "workspace_output_dir": "saved", **saving,
    }}))  # fmt: skip
    return path


def script(server: OpenAIServer) -> None:
    """Each answer goes to out/answer.txt; the judge reads it back and reports it."""
    for country, capital in COUNTRIES.values():
        server.add_rule({"file_path": "/out/answer.txt", "content": capital}, model="answerer",
                        tool="write_file", role="user", last_contains=country)  # fmt: skip
    server.add_rule("Saved in out/answer.txt.", model="answerer", role="tool")
    server.add_rule({"file_path": "/out/answer.txt"}, model="judge", tool="read_file",
                    role="user", when=lambda body: bool(body.get("tools")))  # fmt: skip
    server.add_rule(lambda body: f"It holds: {body['messages'][-1]['content']}", model="judge",
                    role="tool")  # fmt: skip

    def extract(body: dict[str, Any]) -> str:
        text = json.dumps(body["messages"])
        return json.dumps({"capital": next((c for _, c in COUNTRIES.values() if c in text), "")})

    server.add_rule(extract, model="judge", contains="Investigation report:")


def run(pytester: pytest.Pytester, server: OpenAIServer, *extra: str, **saving: Any) -> Any:
    script(server)
    path = workspace(pytester.path, saving.pop("rubric", None))
    config = preset(pytester.path, server, **saving)
    return pytester.runpytest("--karenina", str(path), f"--karenina-config={config}",
                              "-p", "no:cacheprovider", *extra)  # fmt: skip


def files(path: Path) -> dict[str, str]:
    return {p.relative_to(path).as_posix(): p.read_text() for p in path.rglob("*") if p.is_file()}


def junit_properties(junit: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        values = [p.get("value", "") for p in case.iter("property")
                  if p.get("name") == "karenina.saved_workspace"]  # fmt: skip
        found[case.get("name", "")] = values
    return found


def html_extras(report: Path) -> dict[str, str]:
    """Per test id, the html extras pytest-html renders for it."""
    blob = re.search(r'data-jsonblob="([^"]*)"', report.read_text(encoding="utf-8"))
    assert blob is not None
    data = json.loads(html.unescape(blob.group(1)))
    return {
        nodeid: "".join(e["content"] for row in rows for e in row["extras"]
                        if e["format_type"] == "html")
        for nodeid, rows in data["tests"].items()
    }  # fmt: skip


def test_full_saves_every_final_workspace_and_the_reports_say_where(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    junit, report = pytester.path / "junit.xml", pytester.path / "report.html"
    export = pytester.path / "results.json"

    result = run(pytester, openai_server, f"--junitxml={junit}", f"--html={report}",
                 f"--karenina-results={export}", *dist, workspace_output_mode="full",
                 workspace_output_exclude_patterns=["*.log"])  # fmt: skip

    result.assert_outcomes(passed=3)
    saved = pytester.path / "saved"
    result.stdout.fnmatch_lines([f"karenina: workspaces saved to {saved} (full, excluding *.log)"])
    for qid, (_, capital) in COUNTRIES.items():
        assert files(saved / f"{qid}__answerer") == {
            "input.txt": "countries\n", "out/answer.txt": capital,
        }  # fmt: skip
        record = json.loads((saved / f"{qid}__answerer.json").read_text())
        assert (record["question_id"], record["mode"]) == (qid, "full")
    assert junit_properties(junit) == {
        qid: [str(saved / f"{qid}__answerer")] for qid in COUNTRIES
    }  # fmt: skip
    extras = html_extras(report)
    for qid in COUNTRIES:
        assert f'<a href="saved/{qid}__answerer"' in extras[f"capitals.jsonld::{qid}"]
    exported = json.loads(export.read_text())["results"]
    assert sorted(r["saved_workspace"] for r in exported) == [
        str(saved / f"{qid}__answerer") for qid in COUNTRIES
    ]
    assert [p.name for p in pytester.path.iterdir() if "_run_" in p.name] == []


def test_produced_saves_what_each_replicate_wrote(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    result = run(pytester, openai_server, "--karenina-replicates=2", *dist,
                 workspace_output_mode="produced")  # fmt: skip

    result.assert_outcomes(passed=6)
    saved = pytester.path / "saved"
    names = sorted(p.name for p in saved.iterdir() if p.is_dir())
    assert names == [f"{qid}__answerer__rep{n}" for qid in COUNTRIES for n in (1, 2)]
    for name in names:
        capital = COUNTRIES[name.split("__")[0]][1]
        assert files(saved / name) == {"out/answer.txt": capital}
        assert json.loads((saved / f"{name}.json").read_text())["deleted"] == []


WROTE = AgenticRubricTrait(name="wrote_answer", description="out/answer.txt holds a capital",
                           context_mode="workspace_only")  # fmt: skip
SAYS = RegexTrait(name="says_saved", pattern=r"Saved in out/")


@pytest.mark.parametrize("mode", ["rubric_only", "template_and_rubric"])
def test_the_rubric_modes_save_each_final_workspace_too(
    pytester: pytest.Pytester, openai_server: OpenAIServer, mode: str
) -> None:
    """rubric_only has no agentic parsing: the agentic trait's judge gives the answer its
    workspace (Karenina has one only with agentic parsing, refused in rubric_only)."""
    openai_server.add_rule(json.dumps({"result": True}), model="judge",
                           contains="Investigation report:",
                           when=lambda body: WROTE.name in json.dumps(body))  # fmt: skip
    export = pytester.path / "results.json"
    parsing = {"agentic_parsing": False} if mode == "rubric_only" else {}

    result = run(pytester, openai_server, f"--karenina-mode={mode}",
                 f"--karenina-results={export}", workspace_output_mode="produced",
                 rubric=Rubric(agentic_traits=[WROTE], regex_traits=[SAYS]),
                 **parsing)  # fmt: skip

    result.assert_outcomes(passed=3)
    saved = pytester.path / "saved"
    for qid, (_, capital) in COUNTRIES.items():
        assert files(saved / f"{qid}__answerer") == {"out/answer.txt": capital}
    exported = {r["metadata"]["question_id"]: r for r in json.loads(export.read_text())["results"]}
    for qid, record in exported.items():
        assert record["metadata"]["evaluation_mode"] == mode
        assert record["rubric"]["agentic_trait_scores"] == {WROTE.name: True}
        assert record["rubric"]["regex_trait_scores"] == {SAYS.name: True}
        assert record["saved_workspace"] == str(saved / f"{qid}__answerer")
    assert [p.name for p in pytester.path.iterdir() if "_run_" in p.name] == []


def test_a_save_that_cannot_be_written_errors_its_item_only(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    export = pytester.path / "results.json"
    blocked = pytester.path / "saved" / "q2__answerer"
    blocked.parent.mkdir()
    blocked.write_text("in the way")

    result = run(pytester, openai_server, f"--karenina-results={export}", *dist,
                 workspace_output_mode="full")  # fmt: skip

    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines([f"*Could not save the workspace to {blocked}: that is a file*"])
    assert blocked.read_text() == "in the way"
    assert sorted(p.name for p in blocked.parent.iterdir() if p.is_dir()) == [
        "q1__answerer", "q3__answerer",
    ]  # fmt: skip
    records = {r["metadata"]["question_id"]: r for r in json.loads(export.read_text())["results"]}
    assert sorted(records) == ["q1", "q2", "q3"]
    failure = records["q2"]["metadata"]["failure"]
    assert str(blocked) in failure["details"]["error_message"]


@pytest.mark.parametrize(
    ("directory", "message"),
    [
        ("capitals.jsonld", "capitals.jsonld: that is a checkpoint of this run"),
        ("task/saved", "task/saved: that is inside the workspace of question 'q1'"),
        ("task/input.txt/x", "task/input.txt/x: */task/input.txt is a file, not a directory"),
    ],
)
def test_a_directory_saves_must_not_go_to_is_a_usage_error(
    pytester: pytest.Pytester, openai_server: OpenAIServer, directory: str, message: str
) -> None:
    result = run(pytester, openai_server, workspace_output_mode="full",
                 workspace_output_dir=directory)  # fmt: skip

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*workspace_output_dir {message}*"])
    assert openai_server.chat_requests == []
