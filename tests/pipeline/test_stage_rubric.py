"""RubricEvaluation (seed "13 Stages in Detail", stage 11) with a scripted judge: every trait
kind, dynamic rubrics, the evaluation input, and how failures stay at the trait."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.checkpoint import Question
from pytest_karenina.config.sections import PromptConfig
from pytest_karenina.llm.ports import ModelRequest
from pytest_karenina.llm.replay import ReplayMiss
from pytest_karenina.pipeline.artifacts import ArtifactKeys
from pytest_karenina.pipeline.context import VerificationContext
from pytest_karenina.results import VerificationResult
from pytest_karenina.rubrics.traits import (
    AgenticRubricTrait,
    CallableTrait,
    LLMRubricTrait,
    MetricRubricTrait,
    RegexTrait,
    Rubric,
)
from tests.pipeline.pipeline_helpers import ANSWER, CLASSIC
from tests.support.fake_llm import FakeLLM, fake_config, question, request_text, run_one

CLARITY = LLMRubricTrait(name="Clarity", description="Clear wording", kind="score")
ACCURATE = LLMRubricTrait(name="Accurate", description="Facts are right", kind="boolean")
TONE = LLMRubricTrait(
    name="Tone",
    description="The register of the answer",
    kind="literal",
    classes={"formal": "Formal wording", "casual": "Everyday wording"},
)
FACTS = LLMRubricTrait(
    name="Facts",
    description="What the answer states",
    kind="template",
    template_schema={
        "properties": {
            "city": {"type": "string", "description": "The city named"},
            "count": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["city"],
    },
)
CITIES = MetricRubricTrait(
    name="Cities",
    description="Cities named",
    metrics=["precision", "recall", "f1"],
    tp_instructions=["Paris", "Lyon", "Nice"],
)
MENTIONS_PARIS = RegexTrait(name="MentionsParis", pattern=r"\bParis\b")
HEADER = RegexTrait(name="Header", pattern=r"--- AI Message ---")


def ask(traits: list[Any]) -> Question:
    return question(CLASSIC).model_copy(update={"rubric": Rubric.from_traits(traits)})


def rubric_only(**fields: Any) -> Any:
    return fake_config(evaluation_mode="rubric_only", **fields)


def run(
    traits: list[Any], fake: FakeLLM, *, dynamic: list[Any] | None = None, **config: Any
) -> VerificationResult:
    def attach(context: VerificationContext) -> None:
        if dynamic is not None:
            context.dynamic_rubric = Rubric.from_traits(dynamic)

    item = ask(traits)
    return run_one(item, rubric_only(**config), fake, prepare=attach)


def schema_reply(replies: dict[str, Any]) -> Any:
    """A reply function answering each rubric call by its reply class name."""

    def reply(request: ModelRequest) -> str:
        return json.dumps(replies[request.schema_name or ""])

    return reply


def test_every_trait_kind_in_one_run() -> None:
    fake = FakeLLM().answer("Paris and Marseille are in France.")
    tone = {"trait_name": "Tone", "class_name": "FORMAL"}
    replies = {
        "FactsRecord": {"city": "Paris", "count": 2, "tags": ["capital"]},
        "TraitScoresReply": {"scores": {"Clarity": 4, "Accurate": True}},
        "LiteralBatchReply": {"classifications": [tone]},
        "ConfusionReply": {"tp": ["Paris", "paris"], "fn": ["Lyon", "Nice"], "fp": ["Marseille"]},
    }
    fake.on("rubric_evaluation", reply=schema_reply(replies))

    traits = [CLARITY, ACCURATE, TONE, FACTS, CITIES, MENTIONS_PARIS, HEADER]
    result = run(traits, fake)

    fake.assert_all_scripted()
    rubric = result.rubric
    assert rubric is not None and rubric.rubric_evaluation_performed
    assert rubric.llm_trait_scores == {
        "Facts.city": "Paris", "Facts.count": 2, "Facts.tags": ["capital"],
        "Clarity": 4, "Accurate": True, "Tone": 0,
    }  # fmt: skip
    assert rubric.llm_trait_labels == {"Tone": "formal"}  # case-insensitive, canonical name
    assert rubric.regex_trait_scores == {"MentionsParis": True, "Header": True}
    # tp deduplicated to 1 ("Paris"), fn 2, fp 1: precision 1/2, recall 1/3, f1 0.4.
    assert rubric.metric_trait_confusion_lists == {
        "Cities": {"tp": ["Paris"], "fn": ["Lyon", "Nice"], "fp": ["Marseille"], "tn": []}
    }
    metrics = (rubric.metric_trait_scores or {})["Cities"]
    assert metrics == pytest.approx({"precision": 0.5, "recall": 1 / 3, "f1": 0.4})
    assert rubric.trait_errors is None
    assert set(rubric.trait_provenance or {}) == {trait.name for trait in traits}
    # Template-kind first, then boolean/score, literal, metric (spec 5.5).
    order = [r.schema_name for r in fake.calls("rubric_evaluation")]
    assert order == ["FactsRecord", "TraitScoresReply", "LiteralBatchReply", "ConfusionReply"]
    usage = (result.template.usage_metadata or {}) if result.template else {}
    assert usage["rubric_evaluation"]["input_tokens"] == 4 * 11


def test_the_judge_sees_the_whole_trace_by_default_and_the_final_message_on_request() -> None:
    for full, expected in ((True, True), (False, False)):
        fake = FakeLLM().answer(ANSWER)
        result = run([HEADER], fake, use_full_trace_for_rubric=full)
        assert result.rubric is not None
        assert result.rubric.regex_trait_scores == {"Header": expected}


def test_skipped_when_trace_validation_failed_and_only_the_final_message_is_used() -> None:
    def failed_trace(context: VerificationContext) -> None:
        context.set_artifact(ArtifactKeys.TRACE_VALIDATION_FAILED, True)

    for full, evaluated in ((False, False), (True, True)):
        fake = FakeLLM().answer(ANSWER)
        config = rubric_only(use_full_trace_for_rubric=full)
        result = run_one(ask([HEADER]), config, fake, prepare=failed_trace)
        assert (result.rubric is not None) is evaluated


def test_a_failed_judge_call_costs_only_its_traits() -> None:
    fake = FakeLLM().answer(ANSWER).fail("rubric_evaluation", RuntimeError("judge is down"))

    result = run([CLARITY, ACCURATE, MENTIONS_PARIS], fake)

    rubric = result.rubric
    assert rubric is not None and result.metadata.error is None
    assert rubric.regex_trait_scores == {"MentionsParis": True}
    assert rubric.llm_trait_scores is None
    errors = rubric.trait_errors or {}
    assert set(errors) == {"Clarity", "Accurate"}
    assert "judge is down" in errors["Clarity"]
    assert any("Clarity" in warning for warning in result.metadata.warnings)


def test_literal_errors_follow_kareninas_conventions() -> None:
    fake = FakeLLM().answer(ANSWER)
    fake.on_json("rubric_evaluation", {"classifications": [{"trait_name": "x", "class_name": "y"}]})
    missing = run([TONE], fake)
    assert missing.rubric is not None
    assert missing.rubric.llm_trait_scores == {"Tone": -1}
    assert missing.rubric.llm_trait_labels == {"Tone": "[MISSING_FROM_RESPONSE]"}

    fake = FakeLLM().answer(ANSWER)
    fake.on_json("rubric_evaluation", {"classification": "shouty"})
    invalid = run([TONE], fake, rubric_evaluation_strategy="sequential")
    assert invalid.rubric is not None
    assert invalid.rubric.llm_trait_labels == {"Tone": "shouty"}
    assert "shouty" in (invalid.rubric.trait_errors or {})["Tone"]


def test_strict_replay_miss_errors_the_item() -> None:
    miss = ReplayMiss("rubric_evaluation", "q", "0" * 64, Path("calls.jsonl"))
    fake = FakeLLM().answer(ANSWER).fail("rubric_evaluation", miss)
    result = run([CLARITY], fake)
    assert result.metadata.error is not None and "strict replay" in result.metadata.error
    assert result.rubric is None


def test_a_name_clash_between_global_and_question_traits_errors_the_item() -> None:
    clash = RegexTrait(name="Clarity", pattern="x")

    def add_global(context: VerificationContext) -> None:
        context.global_rubric = Rubric.from_traits([CLARITY])

    fake = FakeLLM().answer(ANSWER)
    result = run_one(ask([clash]), rubric_only(), fake, prepare=add_global)

    error = result.metadata.error or ""
    assert "RubricConflictError" in error
    assert "global llm trait 'Clarity'" in error and "question-specific regex trait" in error
    assert fake.count("rubric_evaluation") == 0


def test_global_traits_come_first_and_carry_their_provenance() -> None:
    def add_global(context: VerificationContext) -> None:
        context.global_rubric = Rubric.from_traits([HEADER])

    fake = FakeLLM().answer(ANSWER)
    result = run_one(ask([MENTIONS_PARIS]), rubric_only(), fake, prepare=add_global)
    assert result.rubric is not None
    assert result.rubric.trait_provenance == {
        "Header": "global", "MentionsParis": "question_specific",
    }  # fmt: skip
    assert list(result.rubric.regex_trait_scores or {}) == ["Header", "MentionsParis"]


def test_rubric_trait_names_limits_the_evaluated_traits() -> None:
    fake = FakeLLM().answer(ANSWER)
    result = run([HEADER, MENTIONS_PARIS, CLARITY], fake, rubric_trait_names=["Header"])
    assert result.rubric is not None
    assert result.rubric.trait_provenance == {"Header": "question_specific"}
    assert fake.count("rubric_evaluation") == 0


def test_dynamic_traits_are_graded_only_when_present() -> None:
    present = RegexTrait(name="Cites", pattern=r"\[\d\]", summary="Citations")
    absent = RegexTrait(name="Dosage", pattern="mg", description="Dosage advice")
    fake = FakeLLM().answer("Paris [1].")
    fake.on_json(
        "rubric_presence_check",
        {"results": [{"trait_name": "Cites", "present": True},
                     {"trait_name": "Dosage", "present": False}]},
    )  # fmt: skip

    result = run([MENTIONS_PARIS], fake, dynamic=[present, absent])

    rubric = result.rubric
    assert rubric is not None
    assert rubric.regex_trait_scores == {"MentionsParis": True, "Cites": True}
    assert rubric.dynamic_rubric_promoted_traits == ["Cites"]
    assert list(rubric.dynamic_rubric_skipped_traits or {}) == ["Dosage"]
    assert (rubric.trait_provenance or {})["Cites"] == "dynamic"
    presence = request_text(fake.calls("rubric_presence_check")[0])
    assert "Citations" in presence and "Dosage advice" in presence  # summary, else description


def test_an_unreadable_presence_reply_skips_every_dynamic_trait() -> None:
    dynamic = [RegexTrait(name="Cites", pattern="x", summary="Citations")]
    fake = FakeLLM().answer(ANSWER).malformed("rubric_presence_check")
    result = run([MENTIONS_PARIS], fake, dynamic=dynamic)
    assert result.rubric is not None and result.metadata.error is None
    assert "could not be read" in (result.rubric.dynamic_rubric_skipped_traits or {})["Cites"]


def test_a_dynamic_trait_named_like_a_static_one_errors_the_item_before_any_call() -> None:
    dynamic = [RegexTrait(name="MentionsParis", pattern="x", summary="Paris")]
    fake = FakeLLM().answer(ANSWER)
    result = run([MENTIONS_PARIS], fake, dynamic=dynamic)
    assert "RubricConflictError" in (result.metadata.error or "")
    assert "dynamic regex trait 'MentionsParis'" in (result.metadata.error or "")
    assert fake.count("rubric_presence_check") == 0


def test_an_agentic_trait_without_a_deep_agent_judge_errors_that_trait_only() -> None:
    agentic = AgenticRubricTrait(name="Workspace", description="Files are tidy")
    fake = FakeLLM().answer(ANSWER)
    result = run([agentic, MENTIONS_PARIS], fake)
    assert result.rubric is not None and result.metadata.error is None
    error = (result.rubric.trait_errors or {})["Workspace"]
    assert "need a deep-agent judge" in error and "interface 'openai_endpoint'" in error
    assert result.rubric.regex_trait_scores == {"MentionsParis": True}
    assert (result.rubric.trait_provenance or {})["Workspace"] == "question_specific"


def test_prompt_config_instructions_reach_the_rubric_calls() -> None:
    fake = FakeLLM().answer(ANSWER)
    fake.on_json("rubric_evaluation", {"scores": {"Clarity": 3}})
    config = {"prompt_config": PromptConfig(rubric_evaluation="Be strict about jargon.")}
    run([CLARITY], fake, **config)
    assert "Be strict about jargon." in fake.calls("rubric_evaluation")[0].messages[0].content


def test_an_unexpected_exception_gives_no_rubric_and_a_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(
        "pytest_karenina.pipeline.stages.rubric_evaluation.score_regex_traits", broken
    )
    result = run([MENTIONS_PARIS], FakeLLM().answer(ANSWER))
    assert result.rubric is None and result.metadata.error is None
    assert "Rubric evaluation failed: ZeroDivisionError: boom" in result.metadata.warnings


def test_rubric_evaluation_runs_after_a_failed_template_verdict() -> None:
    fake = FakeLLM().answer("The capital is Lyon.").parse_as({"capital": "Lyon"})
    config = fake_config(evaluation_mode="template_and_rubric")
    result = run_one(ask([MENTIONS_PARIS]), config, fake)
    assert result.verify_result is False
    assert result.rubric is not None
    assert result.rubric.regex_trait_scores == {"MentionsParis": False}


def test_a_stage_after_rubric_evaluation_reads_the_seeds_rubric_keys() -> None:
    """Seed 002's VERIFY_RUBRIC, LLM_TRAIT_LABELS and METRIC_TRAIT_METRICS are written."""
    from pytest_karenina.pipeline import ArtifactKeys, BaseVerificationStage, StageOrchestrator
    from pytest_karenina.pipeline.stage_list import default_stages

    seen: dict[str, Any] = {}

    class RubricReader(BaseVerificationStage):
        @property
        def name(self) -> str:
            return "RubricReader"

        @property
        def requires(self) -> list[str]:
            return [ArtifactKeys.VERIFY_RUBRIC]

        def execute(self, context: VerificationContext) -> None:
            for key in (
                ArtifactKeys.VERIFY_RUBRIC,
                ArtifactKeys.LLM_TRAIT_LABELS,
                ArtifactKeys.METRIC_TRAIT_METRICS,
            ):
                seen[key] = context.get_artifact(key)

    fake = FakeLLM().answer("Paris and Marseille are in France.")
    replies = {
        "TraitScoresReply": {"scores": {"Clarity": 4}},
        "LiteralBatchReply": {"classifications": [{"trait_name": "Tone", "class_name": "formal"}]},
        "ConfusionReply": {"tp": ["Paris"], "fn": ["Lyon"], "fp": []},
    }
    fake.on("rubric_evaluation", reply=schema_reply(replies))
    config = rubric_only()
    stages = default_stages(config, rubric=True)
    stages[-1:-1] = [RubricReader()]

    run_one(
        ask([CLARITY, TONE, CITIES, MENTIONS_PARIS]), config, fake,
        orchestrator=StageOrchestrator(stages),
    )  # fmt: skip

    assert seen[ArtifactKeys.VERIFY_RUBRIC] == {"Clarity": 4, "Tone": 0, "MentionsParis": True}
    assert seen[ArtifactKeys.LLM_TRAIT_LABELS] == {"Tone": "formal"}
    assert seen[ArtifactKeys.METRIC_TRAIT_METRICS]["Cities"] == pytest.approx(
        {"precision": 1.0, "recall": 0.5, "f1": 2 / 3}
    )


def test_a_rubric_without_any_value_was_still_evaluated() -> None:
    """Seed 001: ``rubric_evaluation_performed`` says the evaluation ran, values or not."""
    fake = FakeLLM().answer(ANSWER)
    result = run([CallableTrait(name="Broken", kind="boolean")], fake)
    assert result.rubric is not None and result.rubric.trait_errors
    assert result.rubric.rubric_evaluation_performed is True
