"""Symbolic links a benchmark ships in its workspace lead nowhere outside it (issue 24, items 4
and 17), with real parts: deep agents over HTTP to the scripted server, real files and links
on disk. The materialized answering trace is never written through a link; a deep agent's
write through one is a failed tool call it recovers from, not an error of the item."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_karenina.checkpoint import Benchmark
from pytest_karenina.config.verification import VerificationConfig
from pytest_karenina.pipeline.run import run_verification
from tests.pipeline.test_agentic_parsing import (
    QUESTION,
    deep_model,
    run,
    script_answering,
    script_judge,
)
from tests.support.agents_extra import needs_agents_extra
from tests.support.openai_rules import messages_of
from tests.support.openai_server import OpenAIServer

pytestmark = needs_agents_extra
TRACE_FILE = ".karenina_answering_trace.txt"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory next to the workspace root, with a file the run must never touch."""
    found = tmp_path / "outside"
    found.mkdir()
    (found / "victim.txt").write_text("precious\n")
    return found


@pytest.fixture
def root(tmp_path: Path) -> Path:
    found = tmp_path / "root"
    (found / "task").mkdir(parents=True)
    (found / "task" / "input.txt").write_text("6 x 7\n")
    return found


def test_the_materialized_trace_is_never_written_through_a_shipped_link(
    openai_server: OpenAIServer, root: Path, outside: Path
) -> None:
    (root / "task" / TRACE_FILE).symlink_to(outside / "victim.txt")
    script_answering(openai_server)
    script_judge(openai_server)

    (result,) = run(
        openai_server, root, agentic_judge_context="trace_and_workspace",
        agentic_parsing_materialize_trace=True, agentic_parsing_persist_trace=True,
    )  # fmt: skip

    assert (outside / "victim.txt").read_text() == "precious\n"
    error = result.metadata.error or ""
    assert "answering trace could not be written" in error, error
    assert TRACE_FILE in error and "symbolic link" in error
    assert not any(r.model == "judge" for r in openai_server.chat_requests)
    assert sorted(p.name for p in root.iterdir()) == ["task"]  # the copy is gone


def test_a_trace_file_left_by_an_earlier_run_is_replaced_not_written_through(
    openai_server: OpenAIServer, root: Path, outside: Path
) -> None:
    """A hard link to a file outside: replacing the name leaves the other link's content."""
    (root / "task" / TRACE_FILE).hardlink_to(outside / "victim.txt")
    script_answering(openai_server)
    script_judge(openai_server)

    (result,) = run(
        openai_server, root, agentic_judge_context="trace_and_workspace",
        agentic_parsing_materialize_trace=True, agentic_parsing_persist_trace=True,
        workspace_copy=False,
    )  # fmt: skip

    assert result.metadata.error is None, result.metadata.error
    assert result.verify_result is True
    assert (outside / "victim.txt").read_text() == "precious\n"
    assert "--- AI Message ---" in (root / "task" / TRACE_FILE).read_text()


def script_escape(server: OpenAIServer) -> None:
    """The answering agent first writes through the link, then, told it failed, where it
    may."""
    server.add_rule("I saved 42 in result.txt.", model="answerer", role="tool",
                    last_contains="Updated file /result.txt")  # fmt: skip
    server.add_rule({"file_path": "/result.txt", "content": "42"}, model="answerer",
                    tool="write_file", role="tool")  # fmt: skip
    server.add_rule({"file_path": "/escape/pwned.txt", "content": "pwned"}, model="answerer",
                    tool="write_file", role="user")  # fmt: skip


def test_a_deep_agent_writing_through_a_link_out_of_the_root_gets_a_failed_tool_call(
    openai_server: OpenAIServer, root: Path, outside: Path
) -> None:
    (root / "task" / "escape").symlink_to(outside, target_is_directory=True)
    script_escape(openai_server)
    script_judge(openai_server)

    (result,) = run(openai_server, root)

    assert result.metadata.error is None, result.metadata.error
    assert result.verify_result is True
    assert sorted(p.name for p in outside.iterdir()) == ["victim.txt"]
    template = result.template
    assert template is not None
    failed = [m for m in template.trace_messages or [] if m.get("role") == "tool"]
    assert "leads out of the workspace" in str(failed[0].get("content")), failed
    # The model saw the failure as the tool's result, and went on.
    retry = [r for r in openai_server.chat_requests if r.model == "answerer"][1]
    assert "leads out of the workspace" in str(messages_of(retry.body)[-1].get("content"))


def test_the_workspace_root_itself_is_refused_as_a_question_workspace(
    openai_server: OpenAIServer, root: Path
) -> None:
    """``"."`` (and paths that come back to the root) would be copied next to the root,
    outside it."""
    for path in (".", "task/.."):
        question = QUESTION.model_copy(update={"workspace_path": path})
        config = VerificationConfig(
            answering_models=[deep_model(openai_server, "answerer")],
            parsing_models=[deep_model(openai_server, "judge")], agentic_parsing=True,
        )  # fmt: skip
        (result,) = run_verification(
            Benchmark(name="b", questions=[question]), config, workspace_root=root
        ).results
        error = result.metadata.error or ""
        assert f"Question workspace {path!r} is the workspace root" in error, error
    assert sorted(p.name for p in root.parent.iterdir()) == ["root"]
    assert sorted(p.name for p in root.iterdir()) == ["task"]
    assert openai_server.chat_requests == []
