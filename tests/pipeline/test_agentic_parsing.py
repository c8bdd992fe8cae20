"""Agentic evaluation (seed 004) with real parts: ``langchain_deep_agents`` models over HTTP to
the scripted OpenAI-compatible server, with deepagents' file tools rooted at a real
workspace. The answering agent writes a file; the judge agent reads it; the judge's report
is extracted into the template. Karenina bugs 14 and 15 (outline D) have regression tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.checkpoint import Benchmark, Question
from pytest_karenina.config.verification import VerificationConfig
from pytest_karenina.pipeline.run import run_verification
from pytest_karenina.pipeline.stage_list import default_stages
from pytest_karenina.results import VerificationResult
from tests.support.agents_extra import needs_agents_extra
from tests.support.openai_rules import messages_of
from tests.support.openai_server import OpenAIServer

TEMPLATE = """
class Answer(BaseAnswer):
    value: int = Field(description="The number the agent computed")

    def ground_truth(self):
        self.correct = {"value": 42}

    def verify(self) -> bool:
        return self.value == self.correct["value"]
"""
QUESTION = Question(id="urn:q:1", text="Compute the answer and save it in result.txt.",
                    raw_answer="42", template_code=TEMPLATE, finished=True,
                    workspace_path="task")  # fmt: skip

pytestmark = needs_agents_extra


def deep_model(server: OpenAIServer, name: str) -> dict[str, Any]:
    return {"id": name, "model_name": name, "interface": "langchain_deep_agents",
            "model_provider": "openai",
            "extra_kwargs": {"base_url": server.base_url, "api_key": "test-key"}}  # fmt: skip


def has_tools(body: dict[str, Any]) -> bool:
    return bool(body.get("tools"))


def script_answering(server: OpenAIServer, content: str = "42") -> None:
    server.add_rule("I saved the answer in result.txt.", model="answerer", role="tool")
    server.add_rule({"file_path": "/result.txt", "content": content}, model="answerer",
                    tool="write_file", role="user")  # fmt: skip


def script_judge(server: OpenAIServer, judge: str = "judge") -> None:
    def report(body: dict[str, Any]) -> str:
        found = str(messages_of(body)[-1].get("content"))
        return f"The file result.txt contains: {found.strip()}"

    server.add_rule(report, model=judge, role="tool", when=has_tools)
    server.add_rule({"file_path": "/result.txt"}, model=judge, tool="read_file", role="user",
                    when=has_tools)  # fmt: skip

    def extract(body: dict[str, Any]) -> str:
        text = "\n".join(str(m.get("content")) for m in messages_of(body))
        return json.dumps({"value": 42 if "42" in text else 0})

    server.add_rule(extract, model=judge, contains="Investigation report:")


def run(
    server: OpenAIServer, root: Path, *, judges: tuple[str, ...] = ("judge",), **options: Any
) -> list[VerificationResult]:
    config = VerificationConfig(
        answering_models=[deep_model(server, "answerer")],
        parsing_models=[deep_model(server, judge) for judge in judges],
        agentic_parsing=True, **options,
    )  # fmt: skip
    benchmark = Benchmark(name="b", questions=[QUESTION])
    return list(run_verification(benchmark, config, workspace_root=root).results)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "task").mkdir()
    (tmp_path / "task" / "input.txt").write_text("6 x 7\n")
    return tmp_path


def test_the_judge_reads_what_the_answering_agent_wrote(
    openai_server: OpenAIServer, root: Path
) -> None:
    script_answering(openai_server)
    script_judge(openai_server)

    (result,) = run(openai_server, root)

    assert result.metadata.error is None, result.metadata.error
    template = result.template
    assert template is not None and template.agentic_parsing_performed is True
    assert "The file result.txt contains" in (template.investigation_trace or "")
    assert result.verify_result is True
    usage = template.usage_metadata or {}
    assert {"agentic_parsing_investigation", "agentic_parsing_extraction"} <= set(usage)
    # The answering model was told where its workspace is; the copy is gone, the original kept.
    first = openai_server.chat_requests[0]
    assert "Workspace directory: /" in first.text
    assert sorted(p.name for p in root.iterdir()) == ["task"]
    assert not (root / "task" / "result.txt").exists()


def test_the_stage_replaces_parse_template_and_never_runs_beside_it() -> None:
    config = VerificationConfig(
        answering_models=[{"id": "a", "model_name": "a", "model_provider": "openai"}],
        parsing_models=[{"id": "j", "model_name": "j", "model_provider": "openai",
                         "interface": "langchain_deep_agents"}],
        agentic_parsing=True,
    )  # fmt: skip
    names = [stage.name for stage in default_stages(config)]
    assert "AgenticParseTemplate" in names and "ParseTemplate" not in names


def test_two_judges_of_one_answer_share_its_workspace(
    openai_server: OpenAIServer, root: Path
) -> None:
    """Karenina bug 14: each judge got a fresh copy of the original, without the file the
    answering agent wrote."""
    script_answering(openai_server)
    script_judge(openai_server, "judge")
    script_judge(openai_server, "judge2")

    results = run(openai_server, root, judges=("judge", "judge2"))

    assert [r.verify_result for r in results] == [True, True]
    answering = [r for r in openai_server.chat_requests if r.model == "answerer"]
    assert len(answering) == 2  # one answer (two model calls), shared by both judges
    assert sorted(p.name for p in root.iterdir()) == ["task"]


def test_trace_only_gives_the_judge_no_workspace(openai_server: OpenAIServer, root: Path) -> None:
    """Karenina bug 15: ``trace_only`` still handed the judge the workspace."""
    script_answering(openai_server)
    script_judge(openai_server)

    (result,) = run(openai_server, root, agentic_judge_context="trace_only")

    judge_first = next(r for r in openai_server.chat_requests if r.model == "judge")
    assert "--- ANSWERING AGENT TRACE ---" in judge_first.text
    assert "Workspace" not in str(messages_of(judge_first.body)[-1]["content"])
    # Its file tools are not on the workspace: the file is not there for it.
    assert result.verify_result is False


def test_workspace_only_shows_no_trace_and_trace_and_workspace_shows_both(
    openai_server: OpenAIServer, root: Path
) -> None:
    for mode, trace_shown in (("workspace_only", False), ("trace_and_workspace", True)):
        openai_server.reset()
        script_answering(openai_server)
        script_judge(openai_server)
        (result,) = run(openai_server, root, agentic_judge_context=mode)
        judge_first = next(r for r in openai_server.chat_requests if r.model == "judge")
        user = str(messages_of(judge_first.body)[-1]["content"])
        assert ("--- ANSWERING AGENT TRACE ---" in user) is trace_shown, mode
        assert "workspace is /" in user and result.verify_result is True


def test_the_judge_cannot_write_in_the_workspace(openai_server: OpenAIServer, root: Path) -> None:
    script_answering(openai_server)
    openai_server.add_rule("I could not write.", model="judge", role="tool", when=has_tools)
    openai_server.add_rule({"file_path": "/result.txt", "content": "0"}, model="judge",
                           tool="write_file", role="user", when=has_tools)  # fmt: skip
    openai_server.add_rule('{"value": 42}', model="judge", contains="Investigation report:")

    (result,) = run(openai_server, root, workspace_cleanup=False)

    (copy,) = [p for p in root.iterdir() if p.name != "task"]
    assert (copy / "result.txt").read_text() == "42"  # the answering agent's, untouched
    trace = result.template.investigation_trace if result.template else ""
    assert "permission denied" in (trace or "").lower()


def test_missing_question_workspace_and_escaping_paths_error_the_item(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    for path, message in (("nowhere", "Question workspace not found"),
                          ("../outside", "is outside the workspace root")):  # fmt: skip
        question = QUESTION.model_copy(update={"workspace_path": path})
        config = VerificationConfig(
            answering_models=[deep_model(openai_server, "answerer")],
            parsing_models=[deep_model(openai_server, "judge")], agentic_parsing=True,
        )  # fmt: skip
        (result,) = run_verification(
            Benchmark(name="b", questions=[question]), config, workspace_root=tmp_path
        ).results
        assert message in (result.metadata.error or ""), result.metadata.error
    assert openai_server.chat_requests == []


@pytest.mark.parametrize("persist", [False, True])
def test_a_materialized_trace_is_a_workspace_file_the_judge_is_told_about(
    openai_server: OpenAIServer, root: Path, persist: bool
) -> None:
    script_answering(openai_server)
    script_judge(openai_server)

    (result,) = run(
        openai_server, root, agentic_judge_context="trace_and_workspace",
        agentic_parsing_materialize_trace=True, agentic_parsing_persist_trace=persist,
        workspace_cleanup=False,
    )  # fmt: skip

    assert result.verify_result is True
    judge_first = next(r for r in openai_server.chat_requests if r.model == "judge")
    user = str(messages_of(judge_first.body)[-1]["content"])
    assert ".karenina_answering_trace.txt" in user and "--- ANSWERING AGENT TRACE ---" not in user
    (copy,) = [p for p in root.iterdir() if p.name != "task"]
    kept = copy / ".karenina_answering_trace.txt"
    assert kept.exists() is persist
    if persist:
        assert "--- AI Message ---" in kept.read_text()
