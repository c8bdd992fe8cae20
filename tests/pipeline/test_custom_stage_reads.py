"""What a custom stage inserted into the stage list reads (seeds 002 and 004): the
deep-judgment artifacts ParseTemplate leaves, and the agentic settings every context
carries as fields of its own."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.checkpoint import Question
from pytest_karenina.config.verification import StampedModels, VerificationConfig
from pytest_karenina.pipeline import (
    ArtifactKeys,
    BaseVerificationStage,
    StageOrchestrator,
    VerificationContext,
)
from pytest_karenina.pipeline.llm_stack import LLMStack
from pytest_karenina.pipeline.run import expand_tasks, run_answer_group
from pytest_karenina.pipeline.stages.generate_answer import WORKSPACE_SLOT
from pytest_karenina.pipeline.workspace import WorkspaceSlot
from tests.pipeline.pipeline_helpers import ANSWER, CLASSIC, REGEX_ONLY
from tests.support.agents_extra import needs_agents_extra
from tests.support.fake_llm import FakeLLM, fake_config, question, run_one
from tests.support.openai_server import OpenAIServer

DEEP_KEYS = [
    ArtifactKeys.DEEP_JUDGMENT_PERFORMED,
    ArtifactKeys.EXTRACTED_EXCERPTS,
    ArtifactKeys.ATTRIBUTE_REASONING,
]
"""The deep-judgment keys of seed 002."""
SETTINGS = [
    "agentic_parsing", "agentic_judge_context", "agentic_parsing_max_turns",
    "agentic_parsing_timeout", "workspace_copy", "workspace_cleanup",
]  # fmt: skip
"""The context fields of seed 004, section 8, that come from the configuration."""
QUOTED = {"capital": [{"text": "capital of France is Paris", "confidence": "high"}]}
REASONED = {"capital": "The response names Paris as the capital."}


class Peek(BaseVerificationStage):
    """Records the given artifacts (which it requires) and context fields, then sets the
    context fields given as keywords."""

    def __init__(
        self, name: str, *, artifacts: Sequence[str] = (), fields: Sequence[str] = (), **sets: Any
    ) -> None:
        self._name = name
        self.artifacts = list(artifacts)
        self.fields = list(fields)
        self.sets = sets
        self.seen: dict[str, Any] = {}

    @property
    def name(self) -> str:
        return self._name

    @property
    def requires(self) -> list[str]:
        return self.artifacts

    def execute(self, context: VerificationContext) -> None:
        self.seen.update({key: context.get_artifact(key) for key in self.artifacts})
        self.seen.update({name: getattr(context, name) for name in self.fields})
        for name, value in self.sets.items():
            setattr(context, name, value)


def inserted(config: VerificationConfig, *after: tuple[str, Peek]) -> StageOrchestrator:
    """The config's stage list with each peek inserted after the stage it names (seed 002)."""
    stages = list(StageOrchestrator.from_config(config).stages)
    for name, peek in after:
        at = next(i for i, stage in enumerate(stages) if stage.name == name)
        stages.insert(at + 1, peek)
    return StageOrchestrator(stages)


def deep_judge() -> FakeLLM:
    fake = FakeLLM().answer(ANSWER).on("deep_judgment_excerpts", reply=json.dumps(QUOTED))
    return fake.on("deep_judgment_reasoning", reply=json.dumps(REASONED)).parse_as(
        {"capital": "Paris"}
    )


def test_a_stage_after_parse_template_reads_the_deep_judgment_artifacts() -> None:
    config = fake_config(deep_judgment_mode="full")
    peek = Peek("ReadsDeepJudgment", artifacts=DEEP_KEYS)

    result = run_one(question(CLASSIC), config, deep_judge(),
                     orchestrator=inserted(config, ("ParseTemplate", peek)))  # fmt: skip

    assert result.verify_result is True, result.metadata.error
    section = result.deep_judgment
    assert section is not None
    assert peek.seen[ArtifactKeys.DEEP_JUDGMENT_PERFORMED] is True
    excerpts = peek.seen[ArtifactKeys.EXTRACTED_EXCERPTS]
    assert [e["text"] for e in excerpts["capital"]] == ["capital of France is Paris"]
    assert excerpts == section.extracted_excerpts
    assert peek.seen[ArtifactKeys.ATTRIBUTE_REASONING] == REASONED
    assert result.custom_fields is None  # artifacts only, nothing added to the result


@pytest.mark.parametrize("template", [CLASSIC, REGEX_ONLY], ids=["classic", "regex-only"])
def test_without_deep_judgment_the_artifacts_say_it_was_not_performed(template: str) -> None:
    config = fake_config()
    peek = Peek("ReadsDeepJudgment", artifacts=DEEP_KEYS)
    fake = FakeLLM().answer(ANSWER).parse_as({"capital": "Paris"})

    result = run_one(question(template), config, fake,
                     orchestrator=inserted(config, ("ParseTemplate", peek)))  # fmt: skip

    assert result.metadata.error is None, result.metadata.error
    assert peek.seen == {
        ArtifactKeys.DEEP_JUDGMENT_PERFORMED: False,
        ArtifactKeys.EXTRACTED_EXCERPTS: None,
        ArtifactKeys.ATTRIBUTE_REASONING: None,
    }


def test_a_stage_reads_the_agentic_settings_from_the_context() -> None:
    values = {
        "agentic_judge_context": "trace_and_workspace", "agentic_parsing_max_turns": 7,
        "agentic_parsing_timeout": 33.0, "workspace_copy": False, "workspace_cleanup": False,
    }  # fmt: skip
    config = fake_config(**values)
    peek = Peek("ReadsSettings", fields=SETTINGS)
    fake = FakeLLM().answer(ANSWER).parse_as({"capital": "Paris"})

    result = run_one(question(CLASSIC), config, fake,
                     orchestrator=inserted(config, ("GenerateAnswer", peek)))  # fmt: skip

    assert result.metadata.error is None, result.metadata.error
    assert peek.seen == {"agentic_parsing": False, **values}


@dataclass
class Settings:
    workspace_copy: bool = True
    workspace_cleanup: bool = True


def test_the_workspace_follows_the_judges_contexts(tmp_path: Path) -> None:
    (tmp_path / "task").mkdir()
    original = WorkspaceSlot(tmp_path, "q", "task")
    assert original.get(Settings(workspace_copy=False)).path == (tmp_path / "task").resolve()
    assert original.release() is None and (tmp_path / "task").is_dir()  # never deleted

    slot = WorkspaceSlot(tmp_path, "q", "task")
    first, second = Settings(), Settings()
    workspace = slot.get(first)
    assert slot.get(second) == workspace and workspace.is_copy
    second.workspace_cleanup = False  # e.g. a custom stage of the second judge
    assert slot.release() is None
    assert workspace.path.is_dir()  # kept: one judge asked for it

    slot = WorkspaceSlot(tmp_path, "q", "task")
    workspace = slot.get(Settings())
    slot.release()
    assert not workspace.path.exists()


@needs_agents_extra
def test_agentic_parsing_settings_and_artifacts_reach_a_custom_stage(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    from tests.pipeline.test_agentic_parsing import (
        QUESTION,
        deep_model,
        script_answering,
        script_judge,
    )

    (tmp_path / "task").mkdir()
    script_answering(openai_server)
    script_judge(openai_server)
    config = VerificationConfig(
        answering_models=[deep_model(openai_server, "answerer")],
        parsing_models=[deep_model(openai_server, "judge")], agentic_parsing=True,
        agentic_judge_context="trace_and_workspace", agentic_parsing_max_turns=9,
    )  # fmt: skip
    # The first peek also keeps the workspace, as a custom stage may.
    settings = Peek("ReadsSettings", fields=[*SETTINGS, "workspace_path", "workspace_is_copy"],
                    workspace_cleanup=False)  # fmt: skip
    parsed = Peek("ReadsParse", artifacts=[ArtifactKeys.DEEP_JUDGMENT_PERFORMED])
    orchestrator = inserted(config, ("GenerateAnswer", settings), ("AgenticParseTemplate", parsed))

    results = run_agentic(config, QUESTION, orchestrator, tmp_path)

    assert [r.verify_result for r in results] == [True], results[0].metadata.error
    seen = settings.seen
    assert {name: seen[name] for name in SETTINGS} == {
        "agentic_parsing": True, "agentic_judge_context": "trace_and_workspace",
        "agentic_parsing_max_turns": 9, "agentic_parsing_timeout": 120.0,
        "workspace_copy": True, "workspace_cleanup": True,
    }  # fmt: skip
    assert seen["workspace_is_copy"] is True and seen["workspace_path"].parent == tmp_path
    assert parsed.seen == {ArtifactKeys.DEEP_JUDGMENT_PERFORMED: False}
    assert seen["workspace_path"].is_dir()  # the stage turned cleanup off: the copy stays


def test_a_stage_before_generate_answer_decides_the_workspace(tmp_path: Path) -> None:
    """``workspace_copy`` turned off by a stage before GenerateAnswer: the answer's workspace
    is the original, not a copy."""
    (tmp_path / "task").mkdir()
    item = Question(id="urn:q:ws", text="What is the capital of France?", raw_answer="Paris",
                    template_code=CLASSIC, finished=True, workspace_path="task")  # fmt: skip
    config = fake_config()
    first = Peek("TurnsCopyOff", workspace_copy=False)
    seen = Peek("ReadsWorkspace", fields=["workspace_path", "workspace_is_copy"])
    orchestrator = inserted(config, ("ValidateTemplate", first), ("GenerateAnswer", seen))
    fake = FakeLLM().answer(ANSWER).parse_as({"capital": "Paris"})
    slot = WorkspaceSlot(tmp_path, item.id, "task")

    run_one(item, config, fake, orchestrator=orchestrator,
            prepare=lambda context: context.set_artifact(WORKSPACE_SLOT, slot))  # fmt: skip

    assert seen.seen == {"workspace_path": (tmp_path / "task").resolve(),
                         "workspace_is_copy": False}  # fmt: skip


def run_agentic(
    config: VerificationConfig, item: Question, orchestrator: StageOrchestrator, root: Path
) -> list[Any]:
    """One answer group through ``orchestrator``, as run_verification runs it."""
    llm = LLMStack(config)
    tasks = expand_tasks([item], config, models=StampedModels(llm.answering_models,
                                                               llm.parsing_models))  # fmt: skip
    llm.prepare()
    try:
        return run_answer_group(tasks, config, llm, orchestrator, "run", workspace_root=root)
    finally:
        llm.close()
