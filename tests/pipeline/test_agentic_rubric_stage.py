"""Stage 11b, AgenticRubricEvaluation, with scripted deep-agent judges: each trait kind is
investigated then extracted into the rubric section's agentic fields; what the judge is shown
follows the trait's context mode; materialized traces, model overrides, dynamic traits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_karenina.checkpoint import Benchmark
from pytest_karenina.llm.agent_ports import AgentResult, AgentRunConfig
from pytest_karenina.llm.ports import ChatMessage, ModelRequest
from pytest_karenina.pipeline.llm_stack import LLMStack
from pytest_karenina.pipeline.run import run_verification
from pytest_karenina.pipeline.stages.agentic_rubric_evaluation import TRACE_FILE
from pytest_karenina.prompts.agentic_parsing import TRACE_BLOCK
from pytest_karenina.rubrics.traits import AgenticRubricTrait, RegexTrait, Rubric
from tests.pipeline.agentic_rubric_helpers import (
    EXTRACTION,
    INVESTIGATION,
    JUDGE_KEY,
    ScriptedAgents,
    agentic_config,
    criterion,
    override,
    report,
    run_agentic,
)
from tests.pipeline.pipeline_helpers import ANSWER, CLASSIC
from tests.support.fake_llm import FakeLLM, question, request_text

TIDY = AgenticRubricTrait(name="Tidy", description="The files are tidy", max_turns=7,
                          timeout_seconds=30)  # fmt: skip
QUALITY = AgenticRubricTrait(name="Quality", description="How good the code is", kind="score",
                             context_mode="workspace_only")  # fmt: skip
LIBRARY = AgenticRubricTrait(
    name="Library", description="Which library the code uses", kind="literal",
    classes={"numpy": "Uses numpy", "pandas": "Uses pandas"}, context_mode="trace_only",
)  # fmt: skip
FORM = AgenticRubricTrait(
    name="Form", description="What the workspace holds", kind="template",
    template_schema={"properties": {"files": {"type": "integer"}, "lang": {"type": "string"}},
                     "required": ["files"]},
)  # fmt: skip
REPORTS = {
    "Tidy": "Every file has a clear name: tidy.",
    "Quality": "The code is good enough: 4 of 5.",
    "Library": "main.py imports pandas.",
    "Form": 'Two Python files.\n{"files": 2, "lang": "python"}',
}


def by_trait(messages: list[ChatMessage], config: AgentRunConfig) -> AgentResult:
    return report(REPORTS.get(criterion(messages), "Nothing found."))


def extractions(fake: FakeLLM, replies: dict[str, Any]) -> FakeLLM:
    for name, value in replies.items():
        fake.on_json(EXTRACTION, value, contains=f"## Criterion: {name}")
    return fake


def test_each_kind_is_investigated_then_extracted(tmp_path: Path) -> None:
    fake = extractions(FakeLLM().answer(ANSWER), {
        "Tidy": {"result": True}, "Quality": {"score": 9}, "Library": {"classification": "pandas"},
    })  # fmt: skip
    agents = ScriptedAgents({"judge": by_trait})

    result = run_agentic([TIDY, QUALITY, LIBRARY, FORM], fake, agents, workspace=tmp_path)

    rubric = result.rubric
    assert rubric is not None and result.metadata.error is None
    assert rubric.agentic_trait_scores == {
        "Tidy": True, "Quality": 5, "Library": 1, "Form.files": 2, "Form.lang": "python",
    }  # fmt: skip
    traces = rubric.agentic_trait_investigation_traces or {}
    assert sorted(traces) == ["Form", "Library", "Quality", "Tidy"]
    assert all(REPORTS[name] in trace for name, trace in traces.items())
    assert rubric.agentic_trait_extraction_metadata == {
        "Form": {"method": "local_json", "local_json_error": None, "parser_error": None}
    }
    assert set((rubric.trait_provenance or {}).values()) == {"question_specific"}
    assert rubric.trait_errors is None
    assert fake.count(EXTRACTION) == 3  # the template record came from the report itself
    assert any("score 9" in w and "clamped to 5" in w for w in result.metadata.warnings)
    usage = (result.template.usage_metadata if result.template else None) or {}
    assert {INVESTIGATION, EXTRACTION} <= set(usage)
    # Each trait's own limits; the judge never writes.
    judge = agents["judge"]
    _, tidy = judge.run_of("Tidy")
    assert (tidy.max_turns, tidy.timeout, tidy.read_only) == (7, 30.0, True)
    assert all(config.read_only for _, config in judge.runs)


def test_the_context_mode_decides_what_the_judge_sees(tmp_path: Path) -> None:
    fake = extractions(FakeLLM().answer(ANSWER), {
        "Tidy": {"result": True}, "Quality": {"score": 4}, "Library": {"classification": "numpy"},
    })  # fmt: skip
    agents = ScriptedAgents({"judge": by_trait})

    run_agentic([TIDY, QUALITY, LIBRARY], fake, agents, workspace=tmp_path)

    judge = agents["judge"]
    for name, trace_shown, workspace in (("Tidy", True, tmp_path), ("Quality", False, tmp_path),
                                         ("Library", True, None)):  # fmt: skip
        messages, config = judge.run_of(name)
        user = messages[-1].content
        assert (TRACE_BLOCK in user) is trace_shown, name
        assert (ANSWER in user) is trace_shown, name
        assert ("workspace is /" in user) is (workspace is not None), name
        assert config.workspace == workspace, name


def test_a_materialized_trace_is_a_workspace_file_for_the_investigation_only(
    tmp_path: Path,
) -> None:
    seen: list[str] = []

    def reads_the_file(messages: list[ChatMessage], config: AgentRunConfig) -> AgentResult:
        seen.append((tmp_path / TRACE_FILE).read_text())
        return report("Tidy.")

    fake = extractions(FakeLLM().answer(ANSWER), {"Tidy": {"result": True}})
    materialized = TIDY.model_copy(update={"materialize_trace": True})
    agents = ScriptedAgents({"judge": reads_the_file})

    run_agentic([materialized], fake, agents, workspace=tmp_path)

    assert ANSWER in seen[0]
    user = agents["judge"].runs[0][0][-1].content
    assert TRACE_FILE in user and TRACE_BLOCK not in user
    assert not (tmp_path / TRACE_FILE).exists()
    kept = materialized.model_copy(update={"persist_trace": True})
    run_agentic([kept], fake, ScriptedAgents({"judge": reads_the_file}), workspace=tmp_path)
    assert ANSWER in (tmp_path / TRACE_FILE).read_text()


def test_a_link_where_the_trace_file_goes_errors_the_item(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / TRACE_FILE).symlink_to(outside)
    materialized = TIDY.model_copy(update={"materialize_trace": True})
    agents = ScriptedAgents({"judge": by_trait})

    result = run_agentic([materialized], FakeLLM().answer(ANSWER), agents, workspace=workspace)

    assert "answering trace could not be written" in (result.metadata.error or "")
    assert outside.read_text() == "keep me"
    assert all(agent.runs == [] for agent in agents.built.values())


def test_a_trait_with_a_model_override_is_judged_by_that_model(tmp_path: Path) -> None:
    audited = TIDY.model_copy(update={"model_override": override("auditor")})
    fake = extractions(FakeLLM().answer(ANSWER), {"Tidy": {"result": False}})
    agents = ScriptedAgents({"auditor": by_trait})

    result = run_agentic([audited], fake, agents, workspace=tmp_path)

    assert result.rubric is not None and result.rubric.agentic_trait_scores == {"Tidy": False}
    assert len(agents["auditor"].runs) == 1 and agents["judge"].runs == []
    (model,) = fake.models_for(EXTRACTION)
    assert model is not None and model.id == "auditor"
    usage = (result.template.usage_metadata if result.template else None) or {}
    assert "auditor" in usage[INVESTIGATION]["model"]


def test_an_override_that_is_not_a_deep_agent_errors_that_trait_only() -> None:
    plain = {"id": "plain", "model_name": "m", "interface": "openai_endpoint",
             "endpoint_base_url": "http://127.0.0.1:9/v1"}  # fmt: skip
    broken = TIDY.model_copy(update={"model_override": plain})
    invalid = QUALITY.model_copy(update={"name": "Bad", "model_override": {"interface": 3}})
    fake = FakeLLM().answer(ANSWER)
    names = RegexTrait(name="Names", pattern="Paris")

    result = run_agentic([broken, invalid, names], fake, ScriptedAgents())

    rubric = result.rubric
    assert rubric is not None and result.metadata.error is None
    errors = rubric.trait_errors or {}
    assert "model_override model" in errors["Tidy"] and "'openai_endpoint'" in errors["Tidy"]
    assert "model_override is not a valid model configuration: interface" in errors["Bad"]
    assert rubric.regex_trait_scores == {"Names": True}
    assert rubric.agentic_trait_scores is None
    assert any("agentic rubric traits without a value: Tidy, Bad" in w
               for w in result.metadata.warnings)  # fmt: skip


def test_dynamic_agentic_traits_are_graded_without_a_presence_check(tmp_path: Path) -> None:
    fake = extractions(FakeLLM().answer(ANSWER), {"Tidy": {"result": True}})
    agents = ScriptedAgents({"judge": by_trait})

    names = RegexTrait(name="Names", pattern="Paris")
    result = run_agentic([names], fake, agents, workspace=tmp_path, dynamic=[TIDY])

    rubric = result.rubric
    assert rubric is not None and rubric.agentic_trait_scores == {"Tidy": True}
    assert rubric.trait_provenance == {"Names": "question_specific", "Tidy": "dynamic"}
    assert rubric.dynamic_rubric_skipped_traits is None
    assert fake.count("rubric_presence_check") == 0


def test_template_and_rubric_keeps_the_template_verdict(tmp_path: Path) -> None:
    fake = extractions(FakeLLM().answer(ANSWER).parse_as({"capital": "Paris"}),
                       {"Tidy": {"result": False}})  # fmt: skip
    agents = ScriptedAgents({"judge": by_trait})

    result = run_agentic([TIDY], fake, agents, workspace=tmp_path,
                         evaluation_mode="template_and_rubric")  # fmt: skip

    assert result.verify_result is True
    assert result.rubric is not None and result.rubric.agentic_trait_scores == {"Tidy": False}


def test_a_template_record_the_report_lacks_is_asked_of_the_judge(tmp_path: Path) -> None:
    def no_json(messages: list[ChatMessage], config: AgentRunConfig) -> AgentResult:
        return report("Two files, in Python.")

    def record(request: ModelRequest) -> str:
        assert "Two files, in Python." in request_text(request)
        return json.dumps({"files": 2, "lang": "python"})

    fake = FakeLLM().answer(ANSWER).on(EXTRACTION, reply=record)
    result = run_agentic([FORM], fake, ScriptedAgents({"judge": no_json}), workspace=tmp_path)

    rubric = result.rubric
    assert rubric is not None
    assert rubric.agentic_trait_scores == {"Form.files": 2, "Form.lang": "python"}
    metadata = (rubric.agentic_trait_extraction_metadata or {})["Form"]
    assert metadata["method"] == "parser_after_local_json_failed"
    assert metadata["local_json_error"] and metadata["parser_error"] is None

    failing = FakeLLM().answer(ANSWER).fail(EXTRACTION, RuntimeError("judge down"))
    result = run_agentic([FORM], failing, ScriptedAgents({"judge": no_json}), workspace=tmp_path)
    rubric = result.rubric
    assert rubric is not None and rubric.agentic_trait_scores is None
    metadata = (rubric.agentic_trait_extraction_metadata or {})["Form"]
    assert metadata["method"] == "failed" and "judge down" in (metadata["parser_error"] or "")
    assert "extraction of the investigation's finding failed" in (rubric.trait_errors or {})["Form"]
    assert "Two files" in (rubric.agentic_trait_investigation_traces or {})["Form"]


def test_a_secret_the_judge_repeats_is_scrubbed_from_its_investigation(tmp_path: Path) -> None:
    def leaks(messages: list[ChatMessage], config: AgentRunConfig) -> AgentResult:
        return report(f"Tidy. The key in config.py is {JUDGE_KEY}.")

    fake = extractions(FakeLLM().answer(ANSWER), {"Tidy": {"result": True}})

    result = run_agentic([TIDY], fake, ScriptedAgents({"judge": leaks}), workspace=tmp_path)

    assert result.rubric is not None
    trace = (result.rubric.agentic_trait_investigation_traces or {})["Tidy"]
    assert "The key in config.py is ***" in trace
    assert JUDGE_KEY not in result.model_dump_json() and JUDGE_KEY not in fake.all_text()


def test_a_plain_answering_model_is_not_told_the_judges_workspace(tmp_path: Path) -> None:
    """The workspace exists for the judge; a model without tools cannot use it, and its
    per-run path in the prompt would change the answering call's replay key every run."""
    (tmp_path / "task").mkdir()
    (tmp_path / "task" / "data.csv").write_text("a,b\n")
    fake = extractions(FakeLLM().answer(ANSWER), {"Quality": {"score": 4}})
    agents = ScriptedAgents({"judge": by_trait})
    config = agentic_config()
    item = question(CLASSIC).model_copy(
        update={"rubric": Rubric.from_traits([QUALITY]), "workspace_path": "task"}
    )
    stack = LLMStack(config, adapter_factory=fake.for_model, agent_factory=agents.build)

    (result,) = run_verification(Benchmark(name="b", questions=[item]), config, llm=stack,
                                 workspace_root=tmp_path).results  # fmt: skip

    assert result.rubric is not None and result.rubric.agentic_trait_scores == {"Quality": 4}
    (answering,) = fake.calls("answer_generation")
    assert "Workspace" not in request_text(answering)
    _, run = agents["judge"].run_of("Quality")
    assert run.workspace is not None and run.workspace.name.startswith("task_run_")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["task"]  # the copy is gone
