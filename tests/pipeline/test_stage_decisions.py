"""What the pipeline records about who decided a verdict: template code that raised (seed 000
section 8: the seed's fields, plus a ``template error`` warning with the template's line), and
the stage that changed ``verify_result`` with its reason (``metadata.failure``): a custom
stage (seed 002), deep judgment's stages 10 and 12."""

from __future__ import annotations

import json
from typing import Any

from pytest_karenina.pipeline import ArtifactKeys, BaseVerificationStage, VerificationContext
from pytest_karenina.pipeline.orchestrator import StageOrchestrator
from pytest_karenina.pipeline.stage import VERDICT_REASON
from pytest_karenina.pipeline.stage_list import default_stages
from pytest_karenina.results import VerificationResult
from pytest_karenina.rubrics.traits import LLMRubricTrait, Rubric
from tests.pipeline.pipeline_helpers import ANSWER, CLASSIC, GRANULAR_RAISES
from tests.support.fake_llm import FakeLLM, fake_config, question, run_one

PARIS = {"capital": "Paris"}
TYPO = CLASSIC.replace("return self.capital.strip()", "return self.captial.strip()")
TYPO_LINE = 1 + TYPO.split("\n").index(
    '        return self.captial.strip().lower() == self.correct["capital"].lower()'
)
BAD_PATTERN = """
class Answer(BaseAnswer):
    capital: str = Field(description="The capital city named in the response")

    def ground_truth(self):
        self.correct = {"capital": "Paris"}
        self.regex = {"names_paris": {"pattern": "(Paris", "expected": "Paris"}}

    def verify(self) -> bool:
        return self.capital == "Paris"
"""


def template_errors(result: VerificationResult) -> list[str]:
    return [w for w in result.metadata.warnings if w.startswith("template error: ")]


def test_verify_raising_keeps_the_seeds_fields_and_warns_with_the_template_line() -> None:
    result = run_one(question(TYPO), fake_config(), FakeLLM().answer(ANSWER).parse_as(PARIS))

    template = result.template
    assert template is not None and template.verify_result is False
    assert template.field_verification_error == (
        "Field verification failed: AttributeError: 'Answer' object has no attribute 'captial'"
    )
    assert template.verify_granular_result is None
    assert result.metadata.completed_without_errors is True and result.metadata.error is None
    assert template_errors(result) == [
        "template error: verify() raised AttributeError: 'Answer' object has no attribute "
        f"'captial' (template line {TYPO_LINE})"
    ]


def test_verify_granular_raising_is_a_template_error_with_its_line() -> None:
    result = run_one(
        question(GRANULAR_RAISES), fake_config(), FakeLLM().answer(ANSWER).parse_as(PARIS)
    )

    assert result.verify_result is True and result.metadata.failure is None
    line = 1 + GRANULAR_RAISES.split("\n").index(
        '        raise ZeroDivisionError("granular exploded")'
    )
    assert template_errors(result) == [
        "template error: verify_granular() raised ZeroDivisionError: granular exploded "
        f"(template line {line})"
    ]


def test_a_regex_pattern_that_cannot_run_is_a_template_error() -> None:
    result = run_one(question(BAD_PATTERN), fake_config(), FakeLLM().answer(ANSWER).parse_as(PARIS))

    assert result.verify_result is False
    (warning,) = template_errors(result)
    assert warning.startswith("template error: regex check 'names_paris': the pattern cannot")


class FlaggingStage(BaseVerificationStage):
    """Seed 002's ToxicityCheck in miniature: fails the verdict when ``flag`` is in the
    response, through the artifact, the result field or both, with or without a reason."""

    def __init__(self, flag: str, *, where: str = "both", reason: str | None = None) -> None:
        self.flag, self.where, self.reason = flag, where, reason

    @property
    def name(self) -> str:
        return "ToxicityCheck"

    @property
    def produces(self) -> list[str]:
        return ["toxicity_passed"]

    def execute(self, context: VerificationContext) -> None:
        passed = self.flag not in str(context.get_artifact(ArtifactKeys.RAW_LLM_RESPONSE))
        context.set_result_field("toxicity_passed", passed)
        if passed:
            return
        if self.reason is not None:
            context.set_artifact(VERDICT_REASON, self.reason)
        if self.where in ("artifact", "both"):
            context.set_artifact(ArtifactKeys.VERIFY_RESULT, False)
        if self.where in ("field", "both"):
            context.set_result_field(ArtifactKeys.VERIFY_RESULT, False)


def run_with(stage: BaseVerificationStage, answer: str = ANSWER, **parsed: Any) -> Any:
    config = fake_config()
    stages = default_stages(config)
    at = next(i for i, s in enumerate(stages) if s.name == "VerifyTemplate")
    stages.insert(at + 1, stage)
    fake = FakeLLM().answer(answer).parse_as(parsed or PARIS)
    return run_one(question(CLASSIC), config, fake, orchestrator=StageOrchestrator(stages))


def test_a_custom_stage_that_fails_a_right_answer_is_the_failures_stage() -> None:
    result = run_with(FlaggingStage("Paris"))

    failure = result.metadata.failure
    assert failure is not None and failure.category == "content"
    # Without a reason of its own, the result fields it declares tell.
    assert (failure.stage, failure.reason) == (
        "ToxicityCheck",
        "ToxicityCheck: toxicity_passed False",
    )


def test_a_custom_stage_gives_its_reason_and_may_set_only_the_result_field() -> None:
    result = run_with(FlaggingStage("Paris", where="field", reason="score 0.93 >= 0.8"))

    failure = result.metadata.failure
    assert failure is not None
    assert (failure.stage, failure.reason) == ("ToxicityCheck", "ToxicityCheck: score 0.93 >= 0.8")


def test_a_stage_that_fails_an_already_wrong_answer_did_not_decide() -> None:
    result = run_with(FlaggingStage("Paris"), capital="Lyon")

    failure = result.metadata.failure
    assert failure is not None
    assert (failure.stage, failure.reason) == ("verify_template", "verify_template returned False")


def test_stage_10_gives_the_unquoted_attributes_as_its_reason() -> None:
    invented = {"capital": [{"text": "Paris has been the capital since 987", "confidence": "high"}]}
    fake = FakeLLM().answer(ANSWER).on("deep_judgment_excerpts", reply=json.dumps(invented))
    fake.on("deep_judgment_reasoning", reply=json.dumps({"capital": "Names Paris."}))

    result = run_one(
        question(CLASSIC), fake_config(deep_judgment_mode="full"), fake.parse_as(PARIS)
    )

    failure = result.metadata.failure
    assert failure is not None and failure.stage == "DeepJudgmentAutoFail"
    assert failure.reason == "deep judgment: no verbatim quote for capital"


def test_stage_12_gives_the_unquoted_traits_as_its_reason() -> None:
    grounded = LLMRubricTrait(name="Grounded", description="Names the capital", kind="boolean")
    fake = FakeLLM().answer(ANSWER).parse_as(PARIS)
    fake.on(
        "rubric_evaluation",
        reply=json.dumps({"excerpts": [{"text": "Lyon is the capital", "confidence": "high"}]}),
        contains="You collect evidence",
    )
    config = fake_config(
        evaluation_mode="template_and_rubric", deep_judgment_rubric_mode="enable_all"
    )
    asked = question(CLASSIC).model_copy(update={"rubric": Rubric.from_traits([grounded])})

    result = run_one(asked, config, fake)

    failure = result.metadata.failure
    assert failure is not None and failure.stage == "DeepJudgmentRubricAutoFail"
    assert failure.reason == "rubric deep judgment: no verbatim quote for Grounded"
