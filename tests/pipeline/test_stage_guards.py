"""RecursionLimitAutoFail and TraceValidationAutoFail (seed stages 3 and 4): pass -> fail
overrides, what they skip, and failure classification (spec 5.7, rule 1).

The answering stack of pytest-karenina never reports a recursion limit (no agents yet),
so the limit is forced through the cached-answer path of GenerateAnswer.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_karenina.llm.ports import Usage
from pytest_karenina.pipeline.artifacts import ArtifactKeys
from pytest_karenina.pipeline.context import VerificationContext
from pytest_karenina.pipeline.stages.generate_answer import CACHED_ANSWER
from tests.pipeline.pipeline_helpers import ANSWER, CLASSIC, recording_orchestrator
from tests.support.fake_llm import FakeInterface, FakeLLM, fake_config, question, run_one

CHECKS: dict[str, Any] = {"abstention_enabled": True, "sufficiency_enabled": True}
PARIS = {"capital": "Paris"}


def cached_answer(
    raw: str, *, recursion_limit_reached: bool = False, trace: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """An answer as GenerateAnswer shares it with other judges (spec 5.3)."""
    return {
        ArtifactKeys.RAW_LLM_RESPONSE: raw,
        ArtifactKeys.TRACE_MESSAGES: trace
        or [{"role": "assistant", "content": raw, "block_index": 0}],
        ArtifactKeys.CONVERSATION_CONTEXT: [],
        ArtifactKeys.RECURSION_LIMIT_REACHED: recursion_limit_reached,
        ArtifactKeys.AGENT_METRICS: {"iterations": 25, "limit_reached": recursion_limit_reached},
        ArtifactKeys.ANSWERING_MCP_SERVERS: None,
        "usage": Usage(input_tokens=3, output_tokens=4),
        "model": "openai_endpoint:answer-model (answerer)",
    }


LOOPING = "--- AI Message ---\nThe capital of France is Paris."


def test_recursion_limit_fails_a_passing_answer() -> None:
    config = fake_config(**CHECKS)
    orchestrator, executed = recording_orchestrator(config)
    fake = FakeLLM().abstention(False).sufficiency(True).parse_as(PARIS)

    result = run_one(
        question(CLASSIC),
        config,
        fake,
        orchestrator=orchestrator,
        cached_answer=cached_answer(LOOPING, recursion_limit_reached=True),
    )

    # Abstention, sufficiency, parsing and verification all skip on a recursion limit.
    assert executed == [
        "ValidateTemplate",
        "GenerateAnswer",
        "RecursionLimitAutoFail",
        "FinalizeResult",
    ]
    assert fake.requests == []
    template = result.template
    assert template is not None
    assert template.verify_result is False
    assert template.recursion_limit_reached is True
    assert template.template_verification_performed is False
    assert template.abstention_check_performed is False
    # The trace and tokens are kept, and it is not an error.
    assert template.raw_llm_response == LOOPING
    assert template.usage_metadata is not None
    assert template.usage_metadata["answer_generation"]["total_tokens"] == 7
    assert result.metadata.completed_without_errors is True
    assert result.metadata.error is None
    failure = result.metadata.failure
    assert failure is not None
    assert (failure.category, failure.stage, failure.group) == (
        "recursion_limit",
        "RecursionLimitAutoFail",
        "autofail",
    )


def test_recursion_limit_forced_through_the_prepare_hook() -> None:
    config = fake_config()

    def prepare(context: VerificationContext) -> None:
        context.set_artifact(CACHED_ANSWER, cached_answer(LOOPING, recursion_limit_reached=True))

    fake = FakeLLM().parse_as(PARIS)
    result = run_one(question(CLASSIC), config, fake, prepare=prepare)
    assert result.verify_result is False
    assert result.metadata.failure is not None
    assert result.metadata.failure.category == "recursion_limit"


def test_no_recursion_limit_no_autofail() -> None:
    config = fake_config()
    orchestrator, executed = recording_orchestrator(config)
    fake = FakeLLM().parse_as(PARIS)
    result = run_one(
        question(CLASSIC),
        config,
        fake,
        orchestrator=orchestrator,
        cached_answer=cached_answer(LOOPING),
    )
    assert "RecursionLimitAutoFail" not in executed
    assert fake.kinds() == ["parsing"]
    assert result.verify_result is True
    assert result.metadata.failure is None


# --- trace validation --------------------------------------------------------------

TOOL_LAST = "--- AI Message ---\nSearching.\n\n--- Tool Message (call_id: c1) ---\nParis"
TOOL_LAST_TRACE = [
    {"role": "assistant", "content": "Searching.", "block_index": 0,
     "tool_calls": [{"id": "c1", "name": "search", "input": {}}]},
    {"role": "tool", "content": "Paris", "block_index": 1,
     "tool_result": {"tool_use_id": "c1", "is_error": False}},
]  # fmt: skip


def with_mcp_tools(context: VerificationContext) -> None:
    """Make the answering model an MCP agent for this run (the config refuses MCP tools)."""
    context.answering_model = context.answering_model.model_copy(
        update={"mcp_urls_dict": {"search": "http://127.0.0.1:9/mcp"}}
    )


def test_malformed_agent_trace_fails_and_skips_parsing() -> None:
    config = fake_config(**CHECKS)
    orchestrator, executed = recording_orchestrator(config)
    fake = FakeLLM().abstention(False).sufficiency(True).parse_as(PARIS)
    result = run_one(
        question(CLASSIC),
        config,
        fake,
        orchestrator=orchestrator,
        cached_answer=cached_answer(TOOL_LAST, trace=TOOL_LAST_TRACE),
        prepare=with_mcp_tools,
    )
    assert "TraceValidationAutoFail" in executed
    for skipped in ("SufficiencyCheck", "ParseTemplate", "VerifyTemplate"):
        assert skipped not in executed
    assert fake.count("parsing") == fake.count("sufficiency_check") == 0
    assert result.verify_result is False
    assert result.trace_extraction_error
    failure = result.metadata.failure
    assert failure is not None
    assert (failure.category, failure.stage) == ("trace_validation", "TraceValidationAutoFail")


@pytest.mark.parametrize("interface", ["openai_endpoint", "manual"])
def test_non_agent_traces_are_not_validated(interface: FakeInterface) -> None:
    # A trace that ends with a tool message would fail validation; plain LLM answers
    # and manual traces are trusted.
    config = fake_config(interface)
    orchestrator, executed = recording_orchestrator(config)
    fake = FakeLLM().answer(TOOL_LAST).parse_as(PARIS)
    result = run_one(question(CLASSIC), config, fake, orchestrator=orchestrator)
    assert "TraceValidationAutoFail" not in executed
    assert fake.count("parsing") == 1
    assert result.verify_result is True
    assert result.metadata.failure is None


def test_trace_validation_writes_the_seeds_artifacts() -> None:
    """Seed 000 stage 4: ``mcp_enabled``, ``trace_validation_failed`` and
    ``trace_validation_error`` are there for later stages."""
    contexts: list[VerificationContext] = []

    def agent(context: VerificationContext) -> None:
        with_mcp_tools(context)
        contexts.append(context)

    config = fake_config()
    fake = FakeLLM().parse_as(PARIS)
    run_one(
        question(CLASSIC),
        config,
        fake,
        cached_answer=cached_answer(TOOL_LAST, trace=TOOL_LAST_TRACE),
        prepare=agent,
    )
    run_one(question(CLASSIC), config, fake.answer(ANSWER), prepare=contexts.append)

    keys = (
        ArtifactKeys.MCP_ENABLED,
        ArtifactKeys.TRACE_VALIDATION_FAILED,
        ArtifactKeys.TRACE_VALIDATION_ERROR,
    )
    failed, plain = ([context.get_artifact(key) for key in keys] for context in contexts)
    assert failed == [True, True, "Last message in trace is not an AI message"]
    assert plain == [False, None, None]
