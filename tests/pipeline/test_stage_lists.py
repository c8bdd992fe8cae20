"""Which stages a configuration gets, in which order (seed "13 Stages in Detail", quick
reference; spec 5.4), and which of them execute in a plain run."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from pytest_karenina.pipeline import StageOrchestrator
from pytest_karenina.rubrics.traits import RegexTrait, Rubric
from tests.pipeline.pipeline_helpers import ANSWER, CLASSIC, TEMPLATE_STAGES, recording_orchestrator
from tests.support.fake_llm import FakeLLM, fake_config, question, run_one

PRE_PARSE_CHECKS = ["AbstentionCheck", "SufficiencyCheck"]
RUBRIC = Rubric(regex_traits=[RegexTrait(name="names_paris", pattern=r"\bParis\b")])


def names(**fields: Any) -> list[str]:
    return StageOrchestrator.from_config(fake_config(**fields)).stage_names


def with_checks(abstention: bool, sufficiency: bool) -> list[str]:
    """The template-mode list with the enabled checks after TraceValidationAutoFail."""
    checks = ["AbstentionCheck"] * abstention + ["SufficiencyCheck"] * sufficiency
    position = TEMPLATE_STAGES.index("ParseTemplate")
    return [*TEMPLATE_STAGES[:position], *checks, *TEMPLATE_STAGES[position:]]


def test_template_only_default_list_in_seed_order() -> None:
    assert names() == TEMPLATE_STAGES


@pytest.mark.parametrize(
    ("abstention", "sufficiency"), list(itertools.product([False, True], repeat=2))
)
@pytest.mark.parametrize("mode", ["template_only", "template_and_rubric"])
def test_checks_are_included_only_when_enabled(
    mode: str, abstention: bool, sufficiency: bool
) -> None:
    got = names(
        evaluation_mode=mode, abstention_enabled=abstention, sufficiency_enabled=sufficiency
    )
    assert got == with_checks(abstention, sufficiency)


def test_checks_run_after_the_guards_and_before_parsing() -> None:
    got = names(abstention_enabled=True, sufficiency_enabled=True)
    guard = got.index("TraceValidationAutoFail")
    assert got[guard + 1 : guard + 3] == PRE_PARSE_CHECKS
    assert got.index("SufficiencyCheck") + 1 == got.index("ParseTemplate")


def test_template_and_rubric_without_a_rubric_is_the_template_list() -> None:
    assert names(evaluation_mode="template_and_rubric") == TEMPLATE_STAGES


def test_rubric_only_has_no_template_stages() -> None:
    assert names(evaluation_mode="rubric_only") == [
        "GenerateAnswer",
        "RecursionLimitAutoFail",
        "TraceValidationAutoFail",
        "FinalizeResult",
    ]


def test_rubric_only_keeps_abstention_but_never_sufficiency() -> None:
    got = names(evaluation_mode="rubric_only", abstention_enabled=True, sufficiency_enabled=True)
    assert got == [
        "GenerateAnswer",
        "RecursionLimitAutoFail",
        "TraceValidationAutoFail",
        "AbstentionCheck",
        "FinalizeResult",
    ]


def test_keyword_options_override_the_config() -> None:
    config = fake_config()
    got = StageOrchestrator.from_config(
        config, abstention_enabled=True, sufficiency_enabled=True
    ).stage_names
    assert got == with_checks(True, True)
    rubric_only = StageOrchestrator.from_config(config, evaluation_mode="rubric_only")
    assert "ParseTemplate" not in rubric_only.stage_names


def test_unknown_option_is_refused() -> None:
    with pytest.raises(TypeError, match="deep_judgment_enabled"):
        StageOrchestrator.from_config(fake_config(), deep_judgment_enabled=True)


def test_no_config_gives_the_template_only_list() -> None:
    assert StageOrchestrator.from_config(None).stage_names == TEMPLATE_STAGES


@pytest.mark.parametrize("mode", ["template_only", "template_and_rubric", "rubric_only"])
@pytest.mark.parametrize("checks", [False, True])
def test_finalize_result_is_last_and_appears_once(mode: str, checks: bool) -> None:
    got = names(evaluation_mode=mode, abstention_enabled=checks, sufficiency_enabled=checks)
    assert got[-1] == "FinalizeResult"
    assert got.count("FinalizeResult") == 1
    assert len(got) == len(set(got))


@pytest.mark.parametrize("mode", ["template_and_rubric", "rubric_only"])
def test_rubric_modes_with_a_rubric_evaluate_it_before_finalizing(mode: str) -> None:
    stages = StageOrchestrator.from_config(fake_config(evaluation_mode=mode), rubric=RUBRIC)
    assert stages.stage_names[-4:] == [
        "RubricEvaluation", "DeepJudgmentRubricAutoFail", "AgenticRubricEvaluation",
        "FinalizeResult",
    ]  # fmt: skip
    fake = FakeLLM().answer(ANSWER).parse_as({"capital": "Paris"})
    item = question(CLASSIC).model_copy(update={"rubric": RUBRIC})
    result = run_one(item, fake_config(evaluation_mode=mode), fake)
    assert result.rubric is not None
    assert result.rubric.regex_trait_scores == {"names_paris": True}
    assert result.metadata.warnings == []


@pytest.mark.parametrize("rubric", [None, False, Rubric()])
def test_rubric_modes_without_rubric_traits_leave_the_stage_out(rubric: Any) -> None:
    config = fake_config(evaluation_mode="template_and_rubric")
    stages = StageOrchestrator.from_config(config, rubric=rubric).stage_names
    assert "RubricEvaluation" not in stages
    assert "DeepJudgmentRubricAutoFail" not in stages
    assert "AgenticRubricEvaluation" not in stages


def test_template_only_runs_carry_no_rubric() -> None:
    fake = FakeLLM().answer(ANSWER).parse_as({"capital": "Paris"})
    item = question(CLASSIC).model_copy(update={"rubric": RUBRIC})
    result = run_one(item, fake_config(), fake)
    assert result.rubric is None and result.metadata.warnings == []


def test_template_only_ignores_a_rubric() -> None:
    got = StageOrchestrator.from_config(fake_config(), rubric=RUBRIC).stage_names
    assert got == TEMPLATE_STAGES


# --- what executes in a plain, passing run ------------------------------------------


def test_plain_run_executes_every_stage_except_the_idle_guards_and_embedding() -> None:
    config = fake_config(abstention_enabled=True, sufficiency_enabled=True)
    orchestrator, executed = recording_orchestrator(config)
    fake = FakeLLM().answer(ANSWER).abstention(False).sufficiency(True)
    fake.parse_as({"capital": "Paris"})
    result = run_one(question(CLASSIC), config, fake, orchestrator=orchestrator)
    # The guards skip (no recursion limit, not an agent trace); EmbeddingCheck skips
    # because field verification passed.
    assert executed == [
        "ValidateTemplate",
        "GenerateAnswer",
        "AbstentionCheck",
        "SufficiencyCheck",
        "ParseTemplate",
        "VerifyTemplate",
        "FinalizeResult",
    ]
    assert fake.kinds() == ["answer_generation", "abstention_check", "sufficiency_check", "parsing"]
    assert result.verify_result is True
    fake.assert_all_scripted()


def test_rubric_only_run_makes_no_template_calls() -> None:
    config = fake_config(evaluation_mode="rubric_only")
    orchestrator, executed = recording_orchestrator(config)
    fake = FakeLLM().answer(ANSWER)
    result = run_one(question(CLASSIC), config, fake, orchestrator=orchestrator)
    assert executed == ["GenerateAnswer", "FinalizeResult"]
    assert fake.kinds() == ["answer_generation"]
    assert result.verify_result is None
    assert result.metadata.evaluation_mode == "rubric_only"
    assert result.metadata.completed_without_errors is True
    fake.assert_all_scripted()
