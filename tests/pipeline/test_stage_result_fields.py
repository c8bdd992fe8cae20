"""FinalizeResult (seed stage 13; spec 5.6, 5.8): the metadata and template fields of the
result one run produces.
"""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from pytest_karenina.pipeline.stages.finalize import FinalizeResultStage
from pytest_karenina.results import VerificationResult
from pytest_karenina.templates import template_id
from tests.pipeline.pipeline_helpers import ANSWER, CLASSIC, VERIFIED_ANY_OF
from tests.support.fake_llm import DEFAULT_USAGE, FakeLLM, fake_config, question, run_one

PARIS = {"capital": "Paris"}
REFERENCE = "Paris is the capital of France."


def passing_run(**config_fields: Any) -> tuple[VerificationResult, FakeLLM]:
    config = fake_config(**config_fields)
    fake = FakeLLM().answer(ANSWER).abstention(False).sufficiency(True).parse_as(PARIS)
    item = question(CLASSIC, raw_answer=REFERENCE, keywords=["geography", "europe"])
    return run_one(item, config, fake, replicate=2), fake


def test_metadata_identifies_question_template_and_models() -> None:
    result, _ = passing_run()
    metadata = result.metadata
    item = question(CLASSIC)
    assert metadata.question_id == item.id
    assert metadata.question_text == item.text
    assert metadata.raw_answer == REFERENCE  # the checkpoint's reference answer
    assert metadata.keywords == ["geography", "europe"]
    assert metadata.template_id == template_id(CLASSIC)
    assert re.fullmatch(r"[0-9a-f]{32}", metadata.template_id)
    assert (metadata.answering.interface, metadata.answering.model_name) == (
        "openai_endpoint",
        "answer-model",
    )
    assert (metadata.parsing.interface, metadata.parsing.model_name) == (
        "openai_endpoint",
        "judge-model",
    )
    assert metadata.answering.config_id == "answerer"
    assert metadata.parsing.tools == []
    assert metadata.replicate == 2
    assert metadata.completed_without_errors is True
    assert metadata.error is None


@pytest.mark.parametrize("mode", ["template_only", "template_and_rubric"])
def test_evaluation_mode_is_filled(mode: str) -> None:
    result, _ = passing_run(evaluation_mode=mode)
    assert result.metadata.evaluation_mode == mode


def test_result_id_is_16_hex_and_timestamp_is_local_wall_clock() -> None:
    result, _ = passing_run()
    assert re.fullmatch(r"[0-9a-f]{16}", result.metadata.result_id)
    time.strptime(result.metadata.timestamp, "%Y-%m-%d %H:%M:%S")
    assert isinstance(result.metadata.execution_time, float)
    assert result.metadata.execution_time >= 0.0


def test_system_prompts_are_reported() -> None:
    result, _ = passing_run()
    assert result.template is not None
    system = [m["content"] for m in result.template.conversation_context if m["role"] == "system"]
    assert system == [result.metadata.answering_system_prompt]
    assert result.metadata.answering_system_prompt
    assert result.metadata.parsing_system_prompt is None


def test_template_answer_fields() -> None:
    result, _ = passing_run()
    template = result.template
    assert template is not None
    assert template.raw_llm_response == f"--- AI Message ---\n{ANSWER}"
    assert [m["role"] for m in template.trace_messages] == ["assistant"]
    assert template.trace_messages[0]["content"] == ANSWER
    assert [m["role"] for m in template.conversation_context] == ["system", "user"]
    assert template.conversation_context[1]["content"] == question(CLASSIC).text
    assert template.agent_metrics == {"iterations": 1, "limit_reached": False}
    assert template.recursion_limit_reached is False
    assert template.answering_mcp_servers is None


def test_usage_metadata_per_stage_and_total() -> None:
    result, _ = passing_run()
    usage = result.template.usage_metadata if result.template else None
    assert usage is not None
    assert set(usage) == {"answer_generation", "parsing", "total"}
    one_call = DEFAULT_USAGE.total_tokens
    assert usage["answer_generation"]["total_tokens"] == one_call
    assert usage["parsing"]["input_tokens"] == DEFAULT_USAGE.input_tokens
    stages = [name for name in usage if name != "total"]
    for field in ("input_tokens", "output_tokens", "total_tokens"):
        assert usage["total"][field] == sum(usage[name][field] for name in stages)


def test_usage_of_the_checks_is_recorded_too() -> None:
    result, _ = passing_run(abstention_enabled=True, sufficiency_enabled=True)
    usage = result.template.usage_metadata if result.template else None
    assert usage is not None
    assert set(usage) == {
        "answer_generation",
        "abstention_check",
        "sufficiency_check",
        "parsing",
        "total",
    }
    assert usage["total"]["total_tokens"] == 4 * (DEFAULT_USAGE.total_tokens or 0)


def test_every_stage_usage_entry_names_its_model() -> None:
    # Spec 5.6: each per-stage entry is {input_tokens, output_tokens, total_tokens,
    # model: <display string>}.
    result, _ = passing_run(abstention_enabled=True, sufficiency_enabled=True)
    usage = result.template.usage_metadata if result.template else None
    assert usage is not None
    answering = result.metadata.answering.display_string
    judge = result.metadata.parsing.display_string
    assert usage["answer_generation"]["model"] == answering
    for stage in ("abstention_check", "sufficiency_check", "parsing"):
        assert usage[stage].get("model") == judge, stage


def test_verification_fields_of_a_verified_field_template() -> None:
    config = fake_config()
    fake = FakeLLM().answer("Paris on the Seine.").parse_as({"capital": "Paris", "river": "Seine"})
    result = run_one(question(VERIFIED_ANY_OF), config, fake)
    template = result.template
    assert template is not None
    assert template.template_verification_performed is True
    assert template.verify_result is True
    assert template.verify_granular_result == pytest.approx(0.75)  # AnyOf: max(3, 1) / 4
    assert template.parsed_llm_response == {"capital": "Paris", "river": "Seine"}
    assert "id" not in (template.parsed_llm_response or {})


def test_finalize_result_runs_even_after_an_error() -> None:
    assert FinalizeResultStage().always_runs is True
    config = fake_config()
    fake = FakeLLM().fail("answer_generation", RuntimeError("model exploded"))
    result = run_one(question(CLASSIC), config, fake)
    assert result.metadata.question_id == question(CLASSIC).id
    assert result.metadata.template_id == template_id(CLASSIC)
    assert re.fullmatch(r"[0-9a-f]{16}", result.metadata.result_id)
    assert result.metadata.evaluation_mode == "template_only"
