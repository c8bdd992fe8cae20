"""Rubric deep judgment of one trait with a scripted judge: quotes, reasoning, verdict."""

from __future__ import annotations

from pytest_karenina.pipeline.deep_judgment.rubric_trait import TraitSettings, judge_trait
from pytest_karenina.rubrics.traits import LLMRubricTrait
from tests.pipeline.test_deep_judgment_template import ScriptedJudge

ANSWER = "BCL2 is an anti-apoptotic proto-oncogene. It blocks cell death in lymphocytes."
CLEAR = LLMRubricTrait(name="Mechanism", description="Explains the mechanism", kind="boolean")
DEPTH = LLMRubricTrait(name="Depth", description="How deep", kind="score", min_score=0, max_score=3)


def _quotes(*texts: str) -> dict[str, object]:
    return {"excerpts": [{"text": t, "confidence": "high"} for t in texts]}


def test_a_grounded_trait_reasons_from_its_quotes_and_gets_its_verdict() -> None:
    judge = ScriptedJudge(
        _quotes("It blocks cell death in lymphocytes."),
        "Evidence: it blocks cell death. Interpretation: a mechanism. Conclusion: yes.",
        {"result": True},
    )
    outcome = judge_trait(judge, CLEAR, ANSWER, TraitSettings())
    assert outcome.value is True and outcome.error is None
    assert outcome.metadata() == {
        "stages_completed": ["excerpt_extraction", "reasoning_generation", "score_extraction"],
        "model_calls": 3, "had_excerpts": True, "excerpt_retry_count": 0,
        "excerpt_validation_failed": False,
    }  # fmt: skip
    assert '- "It blocks cell death in lymphocytes." (high)' in judge.requests[1][1][1].content
    assert all(kind == "rubric_evaluation" for kind, _ in judge.requests)


def test_retries_only_while_no_quote_is_valid_and_then_the_trait_has_no_value() -> None:
    judge = ScriptedJudge(_quotes("It cures cancer."), _quotes("It is a vaccine."))
    outcome = judge_trait(judge, CLEAR, ANSWER, TraitSettings(retry_attempts=1))
    assert outcome.value is None and outcome.excerpt_validation_failed
    assert outcome.retries == 1 and outcome.model_calls == 2
    metadata = outcome.metadata()  # Karenina's meanings: the failed stage is not completed,
    assert metadata["stages_completed"] == []  # and had_excerpts says the trait quotes
    assert metadata["had_excerpts"] is True and metadata["excerpt_validation_failed"] is True
    assert '"It cures cancer." (similarity' in judge.requests[1][1][-1].content


def test_a_score_is_clamped_to_the_traits_own_bounds_and_zero_stays_zero() -> None:
    for reply, expected in (({"score": 0}, 0), ({"score": 9}, 3), ("I would say 2.", 2)):
        judge = ScriptedJudge(_quotes("anti-apoptotic"), "Conclusion: shallow.", reply)
        assert judge_trait(judge, DEPTH, ANSWER, TraitSettings()).value == expected
    assert "a whole number from 0 to 3" in judge.requests[2][1][0].content


def test_without_excerpts_the_reasoning_reads_the_answer_and_failures_are_trait_errors() -> None:
    judge = ScriptedJudge("Conclusion: it explains the mechanism.", "yes")
    outcome = judge_trait(judge, CLEAR, ANSWER, TraitSettings(excerpts=False))
    assert outcome.value is True
    assert outcome.metadata()["stages_completed"] == ["reasoning_generation", "score_extraction"]
    assert f"<answer>\n{ANSWER}\n</answer>" in judge.requests[0][1][1].content

    unreadable = judge_trait(
        ScriptedJudge("Conclusion: unclear.", "maybe"), CLEAR, ANSWER, TraitSettings(excerpts=False)
    )
    assert unreadable.value is None and unreadable.error is not None
    assert unreadable.metadata()["stages_completed"] == ["reasoning_generation"]
    assert unreadable.metadata()["had_excerpts"] is False
    assert unreadable.metadata()["error"] == unreadable.error
    assert not unreadable.excerpt_validation_failed


def test_a_failing_call_is_an_error_of_the_trait_not_an_excerpt_failure() -> None:
    from collections.abc import Sequence

    from pytest_karenina.llm.ports import ChatMessage, ChatResponse, LLMCallError

    class FailingSecond(ScriptedJudge):
        def chat(self, messages: Sequence[ChatMessage], *, call_kind: str) -> ChatResponse:
            if self.requests:
                raise LLMCallError(call_kind, "rate limited for good")
            return super().chat(messages, call_kind=call_kind)

    outcome = judge_trait(FailingSecond(_quotes("anti-apoptotic")), CLEAR, ANSWER, TraitSettings())
    assert outcome.error == "deep judgment: rate limited for good"
    assert outcome.value is None and not outcome.excerpt_validation_failed
    assert outcome.excerpts  # the quotes it got are kept


def test_which_traits_are_deep_judged_and_with_what_settings() -> None:
    """compat 4.8; unset numbers take the rubric defaults (7 / 0.8 / 2), not the template's.
    (Rubric deep judgment is still refused by validation: the configs are copied, not built.)"""
    from pytest_karenina.config.sections import DeepJudgmentRubricCustomConfig
    from pytest_karenina.config.verification import VerificationConfig
    from pytest_karenina.pipeline.deep_judgment.rubric_trait import trait_settings
    from tests.support.fake_llm import fake_config

    base = fake_config(deep_judgment_max_excerpts_per_attribute=2)

    def mode(name: str, **more: object) -> VerificationConfig:
        return base.model_copy(update={"deep_judgment_rubric_mode": name, **more})

    own = CLEAR.model_copy(update={"deep_judgment_enabled": True, "deep_judgment_max_excerpts": 4})
    assert trait_settings(mode("disabled"), CLEAR, "q1") is None
    assert trait_settings(mode("disabled"), own, "q1") == TraitSettings(4, 0.8, 2, True)
    assert trait_settings(mode("use_checkpoint"), own, "q1") == TraitSettings(4, 0.8, 2, True)
    everything = mode("enable_all", deep_judgment_rubric_global_excerpts=False)
    assert trait_settings(everything, CLEAR, "q1") == TraitSettings(7, 0.8, 2, False)
    literal = LLMRubricTrait(name="Tone", kind="literal", classes={"formal": "f", "casual": "c"})
    assert trait_settings(everything, literal, "q1") is None
    entries = DeepJudgmentRubricCustomConfig.model_validate({
        "global": {"Mechanism": {"max_excerpts": 3}},
        "question_specific": {"q2": {"Mechanism": {"enabled": False}}},
    })  # fmt: skip
    custom = mode("custom", deep_judgment_rubric_config=entries)
    assert trait_settings(custom, CLEAR, "q1") == TraitSettings(3, 0.8, 2, True)
    assert trait_settings(custom, CLEAR, "q2") is None
    assert trait_settings(custom, DEPTH, "q1") is None
