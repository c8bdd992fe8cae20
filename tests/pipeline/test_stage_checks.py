"""AbstentionCheck and SufficiencyCheck: the skip cascades and pass -> fail overrides of the
seed "13 Stages in Detail" (stages 5 and 6), run through the real stages with a fake model.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_karenina.pipeline.embedding import EMBEDDINGS
from tests.pipeline.pipeline_helpers import ANSWER, CLASSIC, recording_orchestrator
from tests.support.fake_llm import MALFORMED, FakeLLM, fake_config, question, request_text, run_one

CHECKS: dict[str, Any] = {"abstention_enabled": True, "sufficiency_enabled": True}
PARIS = {"capital": "Paris"}
REFUSAL = "I cannot answer questions about capitals."
VAGUE = "It is a well-known city in Europe."


@pytest.fixture
def similarity_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, str]]:
    """Records embedding similarity requests (none should happen in these tests)."""
    calls: list[tuple[str, str, str]] = []

    def similarity(name: str, first: str, second: str) -> float:
        calls.append((name, first, second))
        return 1.0

    monkeypatch.setattr(EMBEDDINGS, "similarity", similarity)
    return calls


# --- abstention --------------------------------------------------------------------


def test_abstention_detected_cascade(similarity_calls: list[tuple[str, str, str]]) -> None:
    # Embedding is enabled to show it is skipped too (no field verification result).
    config = fake_config(embedding_check_enabled=True, **CHECKS)
    orchestrator, executed = recording_orchestrator(config)
    fake = FakeLLM().answer(REFUSAL).abstention(True, "The model declined to answer.")
    fake.sufficiency(True).parse_as(PARIS)

    result = run_one(question(CLASSIC), config, fake, orchestrator=orchestrator)

    assert executed == ["ValidateTemplate", "GenerateAnswer", "AbstentionCheck", "FinalizeResult"]
    assert fake.kinds() == ["answer_generation", "abstention_check"]
    assert similarity_calls == []
    template = result.template
    assert template is not None
    assert template.verify_result is False
    assert template.abstention_check_performed is True
    assert template.abstention_detected is True
    assert template.abstention_override_applied is True
    assert template.abstention_reasoning == "The model declined to answer."
    assert template.sufficiency_check_performed is False
    assert template.template_verification_performed is False
    assert template.embedding_check_performed is False
    assert template.parsed_llm_response is None
    assert result.metadata.completed_without_errors is True
    failure = result.metadata.failure
    assert failure is not None
    assert (failure.category, failure.group) == ("abstention", "abstained")
    assert failure.reason == "The model declined to answer."


@pytest.mark.parametrize(("detected", "verdict"), [(False, True), (True, False)])
def test_abstention_turns_a_pass_into_a_fail(detected: bool, verdict: bool) -> None:
    config = fake_config(abstention_enabled=True)
    fake = FakeLLM().answer(ANSWER).abstention(detected).parse_as(PARIS)
    result = run_one(question(CLASSIC), config, fake)
    assert result.verify_result is verdict
    assert result.template is not None
    assert result.template.abstention_override_applied is detected
    assert (result.metadata.failure is None) is verdict


def test_checks_use_a_judge_copy_at_temperature_zero() -> None:
    config = fake_config(**CHECKS)
    fake = FakeLLM().answer(ANSWER).abstention(False).sufficiency(True).parse_as(PARIS)
    run_one(question(CLASSIC), config, fake)
    judge = config.parsing_models[0]
    for kind in ("abstention_check", "sufficiency_check"):
        (model,) = fake.models_for(kind)
        assert model is not None
        assert (model.id, model.temperature) == (judge.id, 0.0)
        (request,) = fake.calls(kind)
        assert ANSWER in request_text(request)
    (parser,) = fake.models_for("parsing")
    assert parser is not None
    assert parser.temperature == judge.temperature != 0.0


@pytest.mark.parametrize(
    "judge_failure", ["raises", "malformed"], ids=["judge-raises", "judge-unreadable"]
)
def test_abstention_judge_failure_is_not_fatal(judge_failure: str) -> None:
    config = fake_config(abstention_enabled=True)
    fake = FakeLLM().answer(ANSWER).parse_as(PARIS)
    if judge_failure == "raises":
        fake.fail("abstention_check", RuntimeError("judge exploded"))
    else:
        fake.malformed("abstention_check")
    result = run_one(question(CLASSIC), config, fake)
    template = result.template
    assert template is not None
    assert template.abstention_check_performed is False
    assert template.abstention_detected is False
    assert template.abstention_override_applied is False
    # The item continues: parsed, verified, passed, no error.
    assert fake.count("parsing") == 1
    assert template.verify_result is True
    assert result.metadata.completed_without_errors is True
    assert result.metadata.failure is None


TOOL_LAST_TRACE = (
    "--- AI Message ---\nLet me look that up.\n\n"
    "--- Tool Message (call_id: c1) ---\nParis is the capital of France."
)
"""A (manual) trace whose last message is a tool message: no final AI message."""


@pytest.mark.parametrize("check", ["abstention", "sufficiency"])
def test_check_is_skipped_when_the_final_ai_message_cannot_be_extracted(check: str) -> None:
    # Spec 5.5: the checks judge the final AI message; if it cannot be extracted the
    # check is skipped (check_performed False) instead of judging something else.
    enabled: dict[str, Any] = {f"{check}_enabled": True}
    config = fake_config("manual", **enabled)
    fake = FakeLLM().answer(TOOL_LAST_TRACE).abstention(True).sufficiency(False)
    fake.parse_as(PARIS)
    result = run_one(question(CLASSIC), config, fake)
    assert fake.count(f"{check}_check") == 0
    assert result.template is not None
    assert getattr(result.template, f"{check}_check_performed") is False
    assert getattr(result.template, f"{check}_override_applied") is False


# --- sufficiency -------------------------------------------------------------------


def test_insufficient_answer_cascade(similarity_calls: list[tuple[str, str, str]]) -> None:
    config = fake_config(embedding_check_enabled=True, **CHECKS)
    orchestrator, executed = recording_orchestrator(config)
    fake = FakeLLM().answer(VAGUE).abstention(False)
    fake.sufficiency(False, "No city is named.").parse_as(PARIS)

    result = run_one(question(CLASSIC), config, fake, orchestrator=orchestrator)

    assert executed == [
        "ValidateTemplate",
        "GenerateAnswer",
        "AbstentionCheck",
        "SufficiencyCheck",
        "FinalizeResult",
    ]
    assert fake.kinds() == ["answer_generation", "abstention_check", "sufficiency_check"]
    assert similarity_calls == []
    template = result.template
    assert template is not None
    assert template.verify_result is False
    assert template.sufficiency_check_performed is True
    assert template.sufficiency_detected is False
    assert template.sufficiency_override_applied is True
    assert template.sufficiency_reasoning == "No city is named."
    assert template.template_verification_performed is False
    assert template.embedding_check_performed is False
    assert result.metadata.completed_without_errors is True
    failure = result.metadata.failure
    assert failure is not None
    assert (failure.category, failure.group) == ("sufficiency", "abstained")
    assert failure.reason == "No city is named."


def test_sufficient_passing_answer_has_no_failure() -> None:
    # Karenina reports failure "sufficiency" for every *sufficient* item (spec 5.7,
    # item 5); pytest-karenina fixes the inversion.
    config = fake_config(sufficiency_enabled=True)
    fake = FakeLLM().answer(ANSWER).sufficiency(True, "The city is named.").parse_as(PARIS)
    result = run_one(question(CLASSIC), config, fake)
    template = result.template
    assert template is not None
    assert template.sufficiency_check_performed is True
    assert template.sufficiency_detected is True
    assert template.sufficiency_override_applied is False
    assert template.verify_result is True
    assert result.metadata.failure is None


def test_sufficient_but_wrong_answer_is_a_content_failure() -> None:
    config = fake_config(sufficiency_enabled=True)
    fake = FakeLLM().answer("The capital is Lyon.").sufficiency(True).parse_as({"capital": "Lyon"})
    result = run_one(question(CLASSIC), config, fake)
    assert result.verify_result is False
    failure = result.metadata.failure
    assert failure is not None
    assert failure.category == "content"


@pytest.mark.parametrize(("sufficient", "verdict"), [(True, True), (False, False)])
def test_sufficiency_turns_a_pass_into_a_fail(sufficient: bool, verdict: bool) -> None:
    config = fake_config(sufficiency_enabled=True)
    fake = FakeLLM().answer(ANSWER).sufficiency(sufficient).parse_as(PARIS)
    result = run_one(question(CLASSIC), config, fake)
    assert result.verify_result is verdict
    assert fake.count("parsing") == int(sufficient)


def test_sufficiency_judge_sees_the_template_schema() -> None:
    config = fake_config(sufficiency_enabled=True)
    fake = FakeLLM().answer(ANSWER).sufficiency(True).parse_as(PARIS)
    run_one(question(CLASSIC), config, fake)
    (request,) = fake.calls("sufficiency_check")
    text = request_text(request)
    assert '"capital"' in text
    assert "The capital city named in the response" in text


@pytest.mark.parametrize(
    "judge_failure", ["raises", "malformed"], ids=["judge-raises", "judge-unreadable"]
)
def test_sufficiency_judge_failure_is_not_fatal(judge_failure: str) -> None:
    config = fake_config(sufficiency_enabled=True)
    fake = FakeLLM().answer(ANSWER).parse_as(PARIS)
    if judge_failure == "raises":
        fake.fail("sufficiency_check", RuntimeError("judge exploded"))
    else:
        fake.malformed("sufficiency_check", MALFORMED)
    result = run_one(question(CLASSIC), config, fake)
    template = result.template
    assert template is not None
    assert template.sufficiency_check_performed is False
    assert template.sufficiency_detected is True
    assert template.sufficiency_override_applied is False
    assert fake.count("parsing") == 1
    assert template.verify_result is True
    assert result.metadata.failure is None


def test_abstention_takes_priority_over_sufficiency() -> None:
    config = fake_config(**CHECKS)
    fake = FakeLLM().answer(REFUSAL).abstention(True).sufficiency(False).parse_as(PARIS)
    result = run_one(question(CLASSIC), config, fake)
    assert fake.count("sufficiency_check") == 0
    failure = result.metadata.failure
    assert failure is not None
    assert failure.category == "abstention"
    assert result.template is not None
    assert result.template.sufficiency_detected is None


NO_SCHEMA = """class Blob:
    pass


class Answer(BaseAnswer):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    capital: str = Field(description="The capital city named in the response")
    blob: Blob | None = None

    def verify(self) -> bool:
        return self.capital == "Paris"
"""


def test_sufficiency_without_a_template_schema_is_not_performed_not_fatal() -> None:
    """Seed 000: the check is non-fatal. A template whose schema cannot be built skips it
    with a warning; it used to be the item's error."""
    config = fake_config(sufficiency_enabled=True)
    fake = FakeLLM().answer(ANSWER).sufficiency(True).parse_as(PARIS)
    result = run_one(question("from pydantic import ConfigDict\n" + NO_SCHEMA), config, fake)
    template = result.template
    assert template is not None
    assert (template.sufficiency_check_performed, template.sufficiency_detected) == (False, True)
    assert fake.count("sufficiency_check") == 0
    assert any("sufficiency check not performed" in w for w in result.metadata.warnings)
    assert "SufficiencyCheck" not in (result.metadata.error or "")
