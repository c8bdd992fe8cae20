"""Stage 11b's strategies (``agentic_rubric_strategy``, ``agentic_rubric_parallel``) and its
failures, with scripted deep-agent judges: a failing investigation, a run that hits its limit
and a failing extraction each leave only their trait without a value; a strict-replay miss
errors the item."""

from __future__ import annotations

import threading
from pathlib import Path

from pytest_karenina.llm.agent_ports import AgentError, AgentResult, AgentRunConfig
from pytest_karenina.llm.ports import ChatMessage, LLMCallError
from pytest_karenina.llm.replay import ReplayMiss
from pytest_karenina.rubrics.traits import AgenticRubricTrait
from tests.pipeline.agentic_rubric_helpers import (
    EXTRACTION,
    ScriptedAgents,
    criterion,
    override,
    report,
    run_agentic,
)
from tests.pipeline.pipeline_helpers import ANSWER
from tests.support.fake_llm import FakeLLM

TIDY = AgenticRubricTrait(name="Tidy", description="The files are tidy", max_turns=4,
                          timeout_seconds=20, context_mode="trace_only")  # fmt: skip
TESTED = AgenticRubricTrait(
    name="Tested", description="Tests cover the code", kind="score", max_turns=9,
    timeout_seconds=60, context_mode="workspace_only",
)  # fmt: skip
SHARED_REPORT = "Tidy: yes, every file is named well. Tested: 4 of 5, one module lacks tests."


def both_extracted() -> FakeLLM:
    fake = FakeLLM().answer(ANSWER)
    fake.on_json(EXTRACTION, {"result": True}, contains="## Criterion: Tidy")
    fake.on_json(EXTRACTION, {"score": 4}, contains="## Criterion: Tested")
    return fake


def test_shared_runs_one_investigation_for_every_trait(tmp_path: Path) -> None:
    agents = ScriptedAgents({"judge": lambda messages, config: report(SHARED_REPORT)})

    result = run_agentic([TIDY, TESTED], both_extracted(), agents, workspace=tmp_path,
                         agentic_rubric_strategy="shared")  # fmt: skip

    rubric = result.rubric
    assert rubric is not None and rubric.agentic_trait_scores == {"Tidy": True, "Tested": 4}
    ((messages, config),) = agents["judge"].runs
    assert "### Tidy" in messages[0].content and "### Tested" in messages[0].content
    # The most turns and time of the traits; the trace and the workspace, as one of them sees.
    assert (config.max_turns, config.timeout, config.workspace) == (9, 60.0, tmp_path)
    assert ANSWER in messages[-1].content and "workspace is /" in messages[-1].content
    traces = rubric.agentic_trait_investigation_traces or {}
    assert traces["Tidy"] == traces["Tested"] and SHARED_REPORT in traces["Tidy"]


def test_shared_falls_back_to_one_run_per_trait_when_it_fails(tmp_path: Path) -> None:
    def fails_when_shared(messages: list[ChatMessage], config: AgentRunConfig) -> AgentResult:
        if not criterion(messages):
            raise LLMCallError("rubric_agentic_trait_investigation", "overloaded")
        return report(f"{criterion(messages)}: fine.")

    agents = ScriptedAgents({"judge": fails_when_shared})

    result = run_agentic([TIDY, TESTED], both_extracted(), agents, workspace=tmp_path,
                         agentic_rubric_strategy="shared")  # fmt: skip

    assert result.rubric is not None
    assert result.rubric.agentic_trait_scores == {"Tidy": True, "Tested": 4}
    assert len(agents["judge"].runs) == 3
    assert any("shared investigation of the agentic rubric traits failed (the investigation "
               "failed: overloaded)" in w for w in result.metadata.warnings)  # fmt: skip


def test_shared_with_traits_of_different_judges_runs_one_per_trait(tmp_path: Path) -> None:
    audited = TESTED.model_copy(update={"model_override": override("auditor")})
    agents = ScriptedAgents()

    run_agentic([TIDY, audited], both_extracted(), agents, workspace=tmp_path,
                agentic_rubric_strategy="shared")  # fmt: skip

    assert [criterion(m) for m, _ in agents["judge"].runs] == ["Tidy"]
    assert [criterion(m) for m, _ in agents["auditor"].runs] == ["Tested"]


def test_parallel_investigates_the_traits_at_once(tmp_path: Path) -> None:
    # Each investigation waits for the other: one after the other, the first would wait in vain.
    barrier = threading.Barrier(2, timeout=60)

    def meets_the_other(messages: list[ChatMessage], config: AgentRunConfig) -> AgentResult:
        barrier.wait()
        return report(f"{criterion(messages)}: fine.")

    agents = ScriptedAgents({"judge": meets_the_other})

    result = run_agentic([TIDY, TESTED], both_extracted(), agents, workspace=tmp_path,
                         agentic_rubric_parallel=True)  # fmt: skip

    assert result.rubric is not None
    assert result.rubric.agentic_trait_scores == {"Tidy": True, "Tested": 4}
    assert result.rubric.trait_errors is None


def test_a_failing_investigation_errors_only_its_trait(tmp_path: Path) -> None:
    limited = TIDY.model_copy(update={"name": "Limited"})
    crashed = TIDY.model_copy(update={"name": "Crashed"})
    unread = TIDY.model_copy(update={"name": "Unread"})

    def script(messages: list[ChatMessage], config: AgentRunConfig) -> AgentResult:
        name = criterion(messages)
        if name == "Limited":
            return report("Still looking at main.py", calls=4, limit_reached=True)
        if name == "Crashed":
            partial = report("Opened main.py")
            raise AgentError("rubric_agentic_trait_investigation", "server gone", partial=partial)
        return report(f"{name}: fine.")

    fake = both_extracted().fail(EXTRACTION, RuntimeError("parser down"))
    agents = ScriptedAgents({"judge": script})

    result = run_agentic([limited, crashed, unread, TIDY], fake, agents, workspace=tmp_path)

    rubric = result.rubric
    assert rubric is not None and result.metadata.error is None
    assert rubric.agentic_trait_scores == {"Tidy": True}
    errors = rubric.trait_errors or {}
    assert errors["Limited"] == "the investigation hit its turn limit (4 model calls)"
    assert errors["Crashed"] == "the investigation failed: server gone"
    assert "extraction of the investigation's finding failed" in errors["Unread"]
    assert "parser down" in errors["Unread"]
    traces = rubric.agentic_trait_investigation_traces or {}
    assert "Still looking" in traces["Limited"] and "Opened main.py" in traces["Crashed"]
    assert "Unread: fine." in traces["Unread"]


def test_a_strict_replay_miss_errors_the_item(tmp_path: Path) -> None:
    def missing(messages: list[ChatMessage], config: AgentRunConfig) -> AgentResult:
        raise ReplayMiss(config.call_kind, config.question_id, "k", tmp_path / "calls.jsonl")

    result = run_agentic([TIDY], both_extracted(), ScriptedAgents({"judge": missing}))

    assert "strict replay: no recorded reply" in (result.metadata.error or "")
    failure = result.metadata.failure
    assert failure is not None and (failure.details or {}).get("replay_miss") is True
