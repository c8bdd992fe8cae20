"""The stage API of the seed "Writing Custom Stages", with its two examples."""

from __future__ import annotations

import logging

import pytest

from pytest_karenina.config.model import ModelConfig
from pytest_karenina.llm.ports import Usage
from pytest_karenina.pipeline import (
    ArtifactKeys,
    BaseAutoFailStage,
    BaseCheckStage,
    BaseVerificationStage,
    StageOrchestrator,
    StageRegistry,
    VerificationContext,
    VerificationStage,
)

logger = logging.getLogger(__name__)


def make_context(response: str | None = None) -> VerificationContext:
    model = ModelConfig(id="manual", interface="manual")
    context = VerificationContext(
        question_id="urn:q:1",
        question_text="What is the capital of France?",
        template_code="",
        answering_model=model,
        parsing_model=model,
    )
    if response is not None:
        context.set_artifact(ArtifactKeys.RAW_LLM_RESPONSE, response)
    return context


class CannedAnswerStage(BaseVerificationStage):
    """Stands in for GenerateAnswer."""

    def __init__(self, text: str) -> None:
        self.text = text

    @property
    def name(self) -> str:
        return "CannedAnswer"

    @property
    def produces(self) -> list[str]:
        return [ArtifactKeys.RAW_LLM_RESPONSE]

    def execute(self, context: VerificationContext) -> None:
        context.set_artifact_and_result(ArtifactKeys.RAW_LLM_RESPONSE, self.text)
        context.set_artifact_and_result(ArtifactKeys.VERIFY_RESULT, True)


# --- the seed's minimal example, with our import path ---------------------------------
class WordCountCheckStage(BaseVerificationStage):
    """Fail verification if the response is too short."""

    def __init__(self, min_words: int = 10):
        self.min_words = min_words

    @property
    def name(self) -> str:
        return "WordCountCheck"

    @property
    def requires(self) -> list[str]:
        return [ArtifactKeys.RAW_LLM_RESPONSE]

    @property
    def produces(self) -> list[str]:
        return ["word_count", "word_count_passed"]

    def should_run(self, context: VerificationContext) -> bool:
        if not super().should_run(context):
            return False
        return context.has_artifact(ArtifactKeys.RAW_LLM_RESPONSE)

    def execute(self, context: VerificationContext) -> None:
        response = context.get_artifact(ArtifactKeys.RAW_LLM_RESPONSE)
        word_count = len(response.split())
        passed = word_count >= self.min_words
        context.set_artifact("word_count", word_count)
        context.set_artifact("word_count_passed", passed)
        context.set_result_field("word_count", word_count)
        context.set_result_field("word_count_passed", passed)


# --- the seed's complete example, with our import path ---------------------------------
class ToxicityCheckStage(BaseVerificationStage):
    """Check response for toxic content and optionally fail verification."""

    def __init__(self, threshold: float = 0.8, fail_on_toxic: bool = True):
        self.threshold = threshold
        self.fail_on_toxic = fail_on_toxic

    @property
    def name(self) -> str:
        return "ToxicityCheck"

    @property
    def requires(self) -> list[str]:
        return [ArtifactKeys.RAW_LLM_RESPONSE]

    @property
    def produces(self) -> list[str]:
        return ["toxicity_score", "toxicity_passed"]

    def should_run(self, context: VerificationContext) -> bool:
        if not super().should_run(context):
            return False
        return context.has_artifact(ArtifactKeys.RAW_LLM_RESPONSE)

    def execute(self, context: VerificationContext) -> None:
        response = context.get_artifact(ArtifactKeys.RAW_LLM_RESPONSE)
        score = self._classify(response)
        passed = score < self.threshold
        context.set_artifact("toxicity_score", score)
        context.set_artifact("toxicity_passed", passed)
        context.set_result_field("toxicity_score", score)
        context.set_result_field("toxicity_passed", passed)
        if not passed and self.fail_on_toxic:
            context.set_artifact(ArtifactKeys.VERIFY_RESULT, False)
            context.set_result_field(ArtifactKeys.VERIFY_RESULT, False)
            logger.warning("Toxicity check failed for %s (score=%.2f)", context.question_id, score)

    def _classify(self, text: str) -> float:
        toxic_words = {"harmful", "dangerous", "illegal"}
        words = set(text.lower().split())
        return len(words & toxic_words) / max(len(words), 1)


def test_examples_satisfy_the_protocol() -> None:
    assert isinstance(WordCountCheckStage(), VerificationStage)
    assert isinstance(ToxicityCheckStage(), VerificationStage)


@pytest.mark.parametrize(
    ("text", "count", "passed"), [("one two three", 3, False), ("a " * 12, 12, True)]
)
def test_word_count_stage_runs_after_the_answer(text: str, count: int, passed: bool) -> None:
    context = make_context()
    StageOrchestrator([CannedAnswerStage(text), WordCountCheckStage(min_words=10)]).run(context)
    assert context.get_result_field("word_count") == count
    assert context.get_artifact("word_count_passed") is passed


def test_toxicity_stage_overrides_the_verdict() -> None:
    context = make_context()
    stages = [CannedAnswerStage("harmful dangerous illegal"), ToxicityCheckStage(threshold=0.5)]
    StageOrchestrator(stages).run(context)
    assert context.get_result_field("toxicity_score") == pytest.approx(1.0)
    assert context.get_result_field(ArtifactKeys.VERIFY_RESULT) is False

    benign = make_context()
    StageOrchestrator([CannedAnswerStage("Paris is lovely"), ToxicityCheckStage()]).run(benign)
    assert benign.get_result_field(ArtifactKeys.VERIFY_RESULT) is True


def test_dependency_validation_names_the_missing_artifact() -> None:
    errors = StageRegistry.validate_dependencies([WordCountCheckStage()])
    assert errors == [
        "stage 'WordCountCheck' requires 'raw_llm_response', which no earlier stage produces"
    ]
    assert (
        StageRegistry.validate_dependencies([CannedAnswerStage("x"), WordCountCheckStage()]) == []
    )
    with pytest.raises(ValueError, match="requires 'raw_llm_response'"):
        StageOrchestrator([WordCountCheckStage()])


def test_registry_refuses_duplicates_and_non_stages() -> None:
    registry = StageRegistry([WordCountCheckStage()])
    assert "WordCountCheck" in registry and len(registry) == 1
    with pytest.raises(ValueError, match="already registered"):
        registry.register(WordCountCheckStage(min_words=3))
    with pytest.raises(TypeError, match="VerificationStage protocol"):
        registry.register(object())  # type: ignore[arg-type]
    with pytest.raises(KeyError, match="no stage named 'Nope'"):
        registry.get("Nope")


class ExplodingStage(BaseVerificationStage):
    @property
    def name(self) -> str:
        return "Exploding"

    def execute(self, context: VerificationContext) -> None:
        raise RuntimeError("kaboom")


class Finalizer(BaseVerificationStage):
    always_runs = True

    @property
    def name(self) -> str:
        return "Finalize"

    def execute(self, context: VerificationContext) -> None:
        context.set_artifact("final_result", ("done", context.error))


def test_a_stage_exception_becomes_the_error_and_the_finalizer_still_runs() -> None:
    context = make_context()
    stages = [CannedAnswerStage("x y z"), ExplodingStage(), WordCountCheckStage(1), Finalizer()]
    outcome = StageOrchestrator(stages).run(context)
    message = "Stage Exploding raised exception: RuntimeError: kaboom"
    assert context.error == message and context.error_stage == "Exploding"
    assert not context.has_artifact("word_count")  # skipped after the error
    assert outcome == ("done", message)


def test_the_finalizer_must_be_last() -> None:
    with pytest.raises(ValueError, match="'Finalize' must be the last stage"):
        StageOrchestrator([Finalizer(), CannedAnswerStage("x")])


class ShoutingCheck(BaseCheckStage):
    @property
    def name(self) -> str:
        return "ShoutingCheck"

    @property
    def _artifact_prefix(self) -> str:
        return "shouting"

    def _detect(
        self, context: VerificationContext
    ) -> tuple[bool | None, bool, str | None, Usage | None]:
        text = context.get_artifact(ArtifactKeys.RAW_LLM_RESPONSE)
        return text.isupper(), True, "all capitals", Usage(10, 2)

    def _should_trigger_override(self, detected: bool | None, check_performed: bool) -> bool:
        return bool(check_performed and detected)


@pytest.mark.parametrize(("text", "verdict"), [("PARIS!", False), ("Paris.", True)])
def test_check_stage_writes_prefixed_fields_and_overrides(text: str, verdict: bool) -> None:
    context = make_context()
    StageOrchestrator([CannedAnswerStage(text), ShoutingCheck()]).run(context)
    fields = context.result_fields
    assert fields["shouting_check_performed"] is True
    assert fields["shouting_detected"] is (not verdict)
    assert fields["shouting_override_applied"] is (not verdict)
    assert fields["shouting_reasoning"] == "all capitals"
    assert fields[ArtifactKeys.VERIFY_RESULT] is verdict
    assert context.usage_tracker().to_metadata()["shouting_check"]["total_tokens"] == 12


class TooShortAutoFail(BaseAutoFailStage):
    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def should_run(self, context: VerificationContext) -> bool:
        text = context.get_artifact(ArtifactKeys.RAW_LLM_RESPONSE, "")
        return super().should_run(context) and len(text) < 5

    def _get_autofail_reason(self, context: VerificationContext) -> str:
        return "answer shorter than 5 characters"


def test_autofail_forces_false_and_the_first_guard_wins() -> None:
    context = make_context()
    stages = [CannedAnswerStage("ok"), TooShortAutoFail("GuardA"), TooShortAutoFail("GuardB")]
    StageOrchestrator(stages).run(context)
    assert context.get_result_field(ArtifactKeys.VERIFY_RESULT) is False
    assert context.get_artifact(ArtifactKeys.FAILED_STAGE) == "GuardA"
    assert TooShortAutoFail("x").produces == []


def test_custom_result_fields_reach_the_result_and_its_export() -> None:
    """Seed 002: ``set_result_field`` values are included in the final result. Fields no
    section takes land in ``custom_fields`` (JSON-native; ``repr`` of anything else)."""
    from pytest_karenina.pipeline.stage_list import default_stages
    from tests.pipeline.pipeline_helpers import ANSWER, CLASSIC
    from tests.support.fake_llm import FakeLLM, fake_config, question, run_one

    class OddValueStage(BaseVerificationStage):
        @property
        def name(self) -> str:
            return "OddValue"

        def execute(self, context: VerificationContext) -> None:
            context.set_result_field("seen", {3})  # a set: exported as a list
            context.set_result_field("stage", self)  # no JSON form: its repr

    config = fake_config()
    stages = default_stages(config)
    stages[-1:-1] = [WordCountCheckStage(min_words=3), OddValueStage()]
    fake = FakeLLM().answer(ANSWER).parse_as({"capital": "Paris"})

    result = run_one(question(CLASSIC), config, fake, orchestrator=StageOrchestrator(stages))

    assert result.template is not None
    words = len(result.template.raw_llm_response.split())
    expected = {
        "word_count": words, "word_count_passed": True, "seen": [3], "stage": repr(stages[-2]),
    }  # fmt: skip
    assert result.custom_fields == expected
    assert result.export_dict()["custom_fields"] == expected
    plain = run_one(question(CLASSIC), config, fake)
    assert plain.custom_fields is None and "custom_fields" not in plain.export_dict()
