"""Saved workspaces through ``run_verification`` with real parts: deep agents over HTTP to the
scripted server write real files; the answer's final workspace is saved once, after its last
judge, also when the agent timed out with a partial trace; a save that fails errors only its
answer, naming the path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.checkpoint import Benchmark
from pytest_karenina.config.verification import VerificationConfig
from pytest_karenina.pipeline.run import run_verification
from pytest_karenina.results import VerificationResult
from tests.pipeline.test_agentic_parsing import QUESTION, deep_model, script_answering, script_judge
from tests.support.agents_extra import needs_agents_extra
from tests.support.openai_server import Fault, OpenAIServer

pytestmark = needs_agents_extra


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "task").mkdir()
    (tmp_path / "task" / "input.txt").write_text("6 x 7\n")
    return tmp_path


def run(
    server: OpenAIServer,
    root: Path,
    questions: list[Any] | None = None,
    judges: tuple[str, ...] = ("judge",),
    answerer: dict[str, Any] | None = None,
    **options: Any,
) -> list[VerificationResult]:
    config = VerificationConfig(
        answering_models=[{**deep_model(server, "answerer"), **(answerer or {})}],
        parsing_models=[deep_model(server, judge) for judge in judges],
        agentic_parsing=True, workspace_output_dir=root / "saved", **options,
    )  # fmt: skip
    benchmark = Benchmark(name="b", questions=questions or [QUESTION])
    return list(run_verification(benchmark, config, workspace_root=root).results)


def files(path: Path) -> dict[str, str]:
    return {p.relative_to(path).as_posix(): p.read_text() for p in path.rglob("*") if p.is_file()}


def saved_dirs(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "saved").iterdir() if p.is_dir())


def test_the_final_workspace_is_saved_once_for_all_judges_of_an_answer(
    openai_server: OpenAIServer, root: Path
) -> None:
    script_answering(openai_server)
    script_judge(openai_server, "judge")
    script_judge(openai_server, "judge2")

    results = run(openai_server, root, judges=("judge", "judge2"), workspace_output_mode="full")

    assert [r.verify_result for r in results] == [True, True]
    (name,) = saved_dirs(root)
    saved = root / "saved" / name
    assert name.endswith("__answerer")
    assert files(saved) == {"input.txt": "6 x 7\n", "result.txt": "42"}
    assert {r.saved_workspace for r in results} == {str(saved)}
    assert results[0].export_dict()["saved_workspace"] == str(saved)
    record = json.loads((root / "saved" / f"{name}.json").read_text())
    assert record["original"] == str(root / "task") and record["mode"] == "full"
    assert sorted(p.name for p in root.iterdir()) == ["saved", "task"]  # the copy cleaned up


def test_each_replicate_is_saved_on_its_own_with_only_what_the_agent_produced(
    openai_server: OpenAIServer, root: Path
) -> None:
    script_answering(openai_server)
    script_judge(openai_server)

    results = run(openai_server, root, replicate_count=2, workspace_output_mode="produced")

    assert sorted(r.saved_workspace or "" for r in results) == [
        str(root / "saved" / name) for name in saved_dirs(root)
    ]
    assert [name.rsplit("__", 1)[1] for name in saved_dirs(root)] == ["rep1", "rep2"]
    for name in saved_dirs(root):
        assert files(root / "saved" / name) == {"result.txt": "42"}


@pytest.mark.parametrize("scored", [True, False], ids=["judged", "not-judged"])
def test_an_agent_that_timed_out_has_its_workspace_saved(
    openai_server: OpenAIServer, root: Path, scored: bool
) -> None:
    """The agent writes its file, then its next model call outlasts its time limit: judged on
    its partial trace or an error (``allow_partial_trace_scoring``), what it wrote is saved."""
    openai_server.add_rule(Fault.timeout(30), model="answerer", role="tool")
    openai_server.add_rule({"file_path": "/result.txt", "content": "42"}, model="answerer",
                           tool="write_file", role="user")  # fmt: skip
    script_judge(openai_server)

    (result,) = run(
        openai_server, root, answerer={"agent_timeout": 3},
        workspace_output_mode="produced", allow_partial_trace_scoring=scored,
    )  # fmt: skip

    template = result.template
    assert template is not None and template.response_timeout_partial is True
    if scored:
        assert result.metadata.error is None and result.verify_result is True
    else:
        failure = result.metadata.failure
        assert failure is not None and failure.category == "timeout"
    assert result.saved_workspace is not None
    assert files(Path(result.saved_workspace)) == {"result.txt": "42"}


def test_a_save_that_fails_errors_its_answer_only_naming_the_path(
    openai_server: OpenAIServer, root: Path
) -> None:
    script_answering(openai_server)
    script_judge(openai_server)
    other = QUESTION.model_copy(update={"id": "q2"})
    blocked = root / "saved" / "q2__answerer"
    blocked.parent.mkdir()
    blocked.write_text("in the way")

    first, second = run(openai_server, root, [QUESTION, other], workspace_output_mode="full")

    assert first.metadata.error is None and first.verify_result is True
    assert first.saved_workspace is not None and Path(first.saved_workspace).is_dir()
    error = second.metadata.error or ""
    assert f"Could not save the workspace to {blocked}: that is a file" in error, error
    assert second.saved_workspace is None and blocked.read_text() == "in the way"
    assert sorted(p.name for p in root.iterdir()) == ["saved", "task"]
