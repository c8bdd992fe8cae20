"""Error containment (seed "13 Stages in Detail", Error Behavior sections and Error
Containment; spec 5.4, 5.5 and 5.7): every item still gets a result, fatal errors stop the
later stages except FinalizeResult, non-fatal ones are recorded and the run goes on.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_karenina.checkpoint import Benchmark
from pytest_karenina.pipeline import run_verification
from tests.pipeline.pipeline_helpers import (
    ANSWER,
    BROKEN,
    CLASSIC,
    GRANULAR_RAISES,
    VERIFY_RAISES,
    recording_orchestrator,
)
from tests.support.fake_llm import MALFORMED, FakeLLM, fake_config, fake_factory, question, run_one

CHECKS: dict[str, Any] = {"abstention_enabled": True, "sufficiency_enabled": True}
PARIS = {"capital": "Paris"}
BROKEN_ID = "urn:uuid:question-broken-template-0001"


# --- ValidateTemplate ----------------------------------------------------------------


def test_template_that_does_not_compile() -> None:
    config = fake_config(**CHECKS)
    orchestrator, executed = recording_orchestrator(config)
    fake = FakeLLM().answer(ANSWER).abstention(False).sufficiency(True).parse_as(PARIS)

    result = run_one(
        question(BROKEN, question_id=BROKEN_ID), config, fake, orchestrator=orchestrator
    )

    assert executed == ["ValidateTemplate", "FinalizeResult"]
    assert fake.requests == []
    metadata = result.metadata
    assert metadata.completed_without_errors is False
    assert metadata.error is not None
    assert BROKEN_ID in metadata.error
    assert metadata.failure is not None
    assert metadata.failure.category == "template_validation"
    assert result.template is not None
    assert result.template.template_validation_error
    assert result.verify_result is None


def test_template_error_stays_with_its_question() -> None:
    # Error containment: one broken template does not stop the other questions.
    config = fake_config()
    good = question(CLASSIC)
    bad = question(BROKEN, text="Which city is the capital of Italy?", question_id=BROKEN_ID)
    fake = FakeLLM().answer(ANSWER).parse_as(PARIS)
    results = run_verification(
        Benchmark(name="mixed", questions=[bad, good]), config, llm=fake_factory(config, fake)
    ).results
    assert [r.metadata.question_id for r in results] == [bad.id, good.id]
    assert results[0].metadata.failure is not None
    assert results[0].metadata.failure.category == "template_validation"
    assert results[1].verify_result is True
    assert fake.kinds() == ["answer_generation", "parsing"]


# --- GenerateAnswer ------------------------------------------------------------------


def test_answer_generation_exception() -> None:
    config = fake_config(**CHECKS)
    orchestrator, executed = recording_orchestrator(config)
    fake = FakeLLM().fail("answer_generation", RuntimeError("model exploded"))
    fake.abstention(False).sufficiency(True).parse_as(PARIS)

    result = run_one(question(CLASSIC), config, fake, orchestrator=orchestrator)

    assert executed == ["ValidateTemplate", "GenerateAnswer", "FinalizeResult"]
    assert fake.kinds() == ["answer_generation"]
    metadata = result.metadata
    assert metadata.completed_without_errors is False
    assert metadata.error is not None
    assert metadata.error.startswith("Adapter call failed: ")
    assert "RuntimeError: model exploded" in metadata.error
    assert metadata.failure is not None
    assert (metadata.failure.category, metadata.failure.stage) == (
        "unexpected_error",
        "GenerateAnswer",
    )
    assert result.template is not None
    assert result.template.raw_llm_response == ""
    assert result.verify_result is None


# --- ParseTemplate -------------------------------------------------------------------


def test_judge_output_unreadable_after_all_attempts() -> None:
    config = fake_config(embedding_check_enabled=True)
    orchestrator, executed = recording_orchestrator(config)
    fake = FakeLLM().answer(ANSWER).malformed("parsing", "first bad reply", times=1)
    fake.malformed("parsing", MALFORMED)

    result = run_one(question(CLASSIC), config, fake, orchestrator=orchestrator)

    assert executed == ["ValidateTemplate", "GenerateAnswer", "ParseTemplate", "FinalizeResult"]
    assert fake.count("parsing") >= 2
    metadata = result.metadata
    assert metadata.completed_without_errors is False
    assert metadata.error is not None
    assert metadata.error.startswith("Parsing failed")
    assert result.trace_extraction_error == metadata.error
    assert result.verify_result is None
    assert result.template is not None
    assert result.template.template_verification_performed is False
    failure = metadata.failure
    assert failure is not None
    assert (failure.category, failure.group) == ("parsing", "system")
    assert failure.details is not None
    assert failure.details["judge_output"] == MALFORMED


def test_judge_call_exception_is_a_parse_failure() -> None:
    config = fake_config()
    fake = FakeLLM().answer(ANSWER).fail("parsing", RuntimeError("judge exploded"))
    result = run_one(question(CLASSIC), config, fake)
    assert result.verify_result is None
    assert result.metadata.error is not None
    assert result.metadata.error.startswith("Parsing failed")
    assert result.metadata.failure is not None
    assert result.metadata.failure.category == "parsing"


# --- VerifyTemplate ------------------------------------------------------------------


def test_verify_raising_fails_the_item_without_an_error() -> None:
    config = fake_config()
    fake = FakeLLM().answer(ANSWER).parse_as(PARIS)
    result = run_one(question(VERIFY_RAISES), config, fake)
    template = result.template
    assert template is not None
    assert template.verify_result is False
    assert template.field_verification_error is not None
    assert "no such key in correct" in template.field_verification_error
    # verify_granular() is defined but skipped after verify() raised.
    assert template.verify_granular_result is None
    assert template.template_verification_performed is True
    assert result.metadata.completed_without_errors is True
    assert result.metadata.error is None
    assert result.metadata.failure is not None
    assert result.metadata.failure.category == "content"


def test_verify_granular_raising_only_adds_a_warning() -> None:
    config = fake_config()
    fake = FakeLLM().answer(ANSWER).parse_as(PARIS)
    result = run_one(question(GRANULAR_RAISES), config, fake)
    template = result.template
    assert template is not None
    assert template.verify_result is True
    assert template.verify_granular_result is None
    assert template.field_verification_error is None
    assert any("granular exploded" in warning for warning in result.metadata.warnings)
    assert result.metadata.completed_without_errors is True
    assert result.metadata.failure is None


# --- the orchestrator ---------------------------------------------------------------


def test_a_crashing_stage_is_recorded_and_finalize_still_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pytest_karenina.pipeline.stages.verify_template import VerifyTemplateStage

    def explode(self: VerifyTemplateStage, context: object) -> None:
        raise RuntimeError("stage bug")

    monkeypatch.setattr(VerifyTemplateStage, "execute", explode)
    config = fake_config()
    fake = FakeLLM().answer(ANSWER).parse_as(PARIS)
    result = run_one(question(CLASSIC), config, fake)
    assert result.metadata.error == "Stage VerifyTemplate raised exception: RuntimeError: stage bug"
    assert result.metadata.failure is not None
    assert (result.metadata.failure.category, result.metadata.failure.stage) == (
        "unexpected_error",
        "VerifyTemplate",
    )
    assert result.verify_result is None


def test_sys_exit_in_verify_is_an_error_of_its_question() -> None:
    raising = 'raise KeyError("no such key in correct")'
    exiting = VERIFY_RAISES.replace(raising, "raise SystemExit(0)")
    config = fake_config()
    fake = FakeLLM().answer(ANSWER).parse_as(PARIS)

    result = run_one(question(exiting), config, fake)

    assert result.metadata.completed_without_errors is False
    assert result.metadata.error is not None and "SystemExit" in result.metadata.error
