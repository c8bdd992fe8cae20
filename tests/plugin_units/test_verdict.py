"""Outcomes of hand-built results: categories, the worst outcome, and the facts behind them."""

from __future__ import annotations

from typing import Any, get_args

import pytest

from pytest_karenina.plugin.verdict.outcome import (
    FieldFacts,
    Outcome,
    Verdict,
    deciding_stage,
    field_facts,
    field_rows,
    outcome_of,
    overrides,
    overriding_failure,
    template_deciding_stage,
    template_error_of,
    trait_definitions,
    worst_outcome,
)
from pytest_karenina.results import (
    VerificationResult,
    VerificationResultDeepJudgmentRubric,
)
from pytest_karenina.results.failure import FailureCategory
from pytest_karenina.rubrics.gates import RubricGatePolicy, TraitCheck, check_traits
from pytest_karenina.rubrics.traits import Rubric
from tests.plugin_units.units_helpers import (
    CLARITY,
    DEFINITIONS,
    FACTS,
    SAFE,
    TYPO_WARNING,
    errored,
    fields_result,
    forced_result,
    graded,
    typo_result,
    verdicts_of,
)
from tests.results.builders import result

NOT_ERRORS = (
    Outcome.PASS,
    Outcome.NO_VERDICT,
    Outcome.VERIFY_FAIL,
    Outcome.ABSTAINED,
    Outcome.INSUFFICIENT,
    Outcome.RUBRIC_FAIL,
)


def _outcome(built: VerificationResult, gating: bool = True) -> Outcome:
    checks = check_traits(built.rubric, DEFINITIONS, RubricGatePolicy())
    return outcome_of(built, checks, gating)


@pytest.mark.parametrize("category", get_args(FailureCategory))
def test_every_failure_category_has_its_error_outcome(category: str) -> None:
    """Each failure category maps to the member ``error:<category>``, an error."""
    outcome = Outcome.of_failure(category)
    assert type(outcome) is Outcome
    assert outcome.value == f"error:{category}"
    assert outcome.is_error and not outcome.decided


def test_outcome_members_cover_exactly_the_failure_categories() -> None:
    """No failure category lacks a member, and no per-category member lacks a category."""
    own = {
        "error:rubric",
        "error:worker_crashed",
        "error:unknown",
        "error:replay",
        "error:template",
        "error:scenario",
    }
    per_category = {o.value for o in Outcome if o.is_error} - own
    assert per_category == {f"error:{c}" for c in get_args(FailureCategory)}


def test_failure_without_category_is_an_unknown_error() -> None:
    """``of_failure(None)`` (and an empty category) is ``error:unknown``."""
    assert Outcome.of_failure(None) is Outcome.UNKNOWN_ERROR
    assert Outcome.of_failure("") is Outcome.UNKNOWN_ERROR


@pytest.mark.parametrize("outcome", NOT_ERRORS)
def test_verdict_outcomes_are_not_errors(outcome: Outcome) -> None:
    """Passes, failures and no_verdict are not errors; only no_verdict is undecided."""
    assert not outcome.is_error
    assert outcome.decided is (outcome is not Outcome.NO_VERDICT)


def test_worker_crash_and_rubric_error_are_errors() -> None:
    """The plugin's own error outcomes count as errors."""
    assert (
        Outcome.WORKER_CRASHED.is_error and Outcome.WORKER_CRASHED.value == "error:worker_crashed"
    )
    assert Outcome.RUBRIC_ERROR.is_error and Outcome.RUBRIC_ERROR.value == "error:rubric"


@pytest.mark.parametrize(
    ("outcomes", "worst"),
    [
        ([], Outcome.NO_VERDICT),
        ([Outcome.PASS, Outcome.PASS], Outcome.PASS),
        ([Outcome.PASS, Outcome.VERIFY_FAIL, Outcome.ABSTAINED], Outcome.VERIFY_FAIL),
        ([Outcome.PASS, Outcome.NO_VERDICT], Outcome.NO_VERDICT),
        (
            [Outcome.VERIFY_FAIL, Outcome.TIMEOUT_ERROR, Outcome.RUBRIC_ERROR],
            Outcome.TIMEOUT_ERROR,
        ),
        ([Outcome.RUBRIC_FAIL, Outcome.PASS, Outcome.WORKER_CRASHED], Outcome.WORKER_CRASHED),
    ],
)
def test_worst_outcome(outcomes: list[Outcome], worst: Outcome) -> None:
    """The first error, else the first non-pass, else pass."""
    assert worst_outcome(outcomes) is worst


def test_template_pass() -> None:
    """A true template verdict is a pass."""
    assert _outcome(fields_result(symbol="Au")) is Outcome.PASS


def test_template_fail() -> None:
    """A false template verdict without overrides is verify_fail."""
    assert _outcome(fields_result(symbol="Ag")) is Outcome.VERIFY_FAIL


def test_abstention_override_is_abstained() -> None:
    """A detected abstention that forced the verdict to false is abstained."""
    built = result(False, abstention_detected=True, abstention_override_applied=True)
    assert _outcome(built) is Outcome.ABSTAINED


def test_detected_abstention_without_override_is_a_plain_failure() -> None:
    """Abstention detected but not applied leaves verify_fail."""
    built = result(False, abstention_detected=True, abstention_override_applied=False)
    assert _outcome(built) is Outcome.VERIFY_FAIL


def test_insufficient_override_is_insufficient() -> None:
    """An insufficient response that forced the verdict to false is insufficient."""
    built = result(False, sufficiency_detected=False, sufficiency_override_applied=True)
    assert _outcome(built) is Outcome.INSUFFICIENT


def test_pipeline_error_is_its_failure_category() -> None:
    """A failed pipeline is ``error:<category>`` of its failure record."""
    assert _outcome(errored("parsing", "parse_template")) is Outcome.PARSING_ERROR
    assert _outcome(errored("rate_limit")) is Outcome.RATE_LIMIT_ERROR


def test_error_without_failure_record_is_unknown() -> None:
    """An error message without a failure record is error:unknown."""
    built = result(None, meta={"error": "boom", "completed_without_errors": False})
    assert _outcome(built) is Outcome.UNKNOWN_ERROR


def test_incomplete_run_without_message_is_still_an_error() -> None:
    """``completed_without_errors`` False alone makes an error, even with a true verdict."""
    built = result(True, meta={"completed_without_errors": False, "error": None})
    assert _outcome(built) is Outcome.UNKNOWN_ERROR


def test_gated_trait_without_value_is_a_rubric_error() -> None:
    """A gated trait with an error entry makes ``error:rubric``, even over a template pass."""
    built = graded(True, errors={"Safe": "judge call failed"}, Clarity=5)
    assert _outcome(built) is Outcome.RUBRIC_ERROR
    assert _outcome(built, gating=False) is Outcome.PASS


def test_unmeasured_gated_trait_outranks_a_template_failure() -> None:
    """Nothing unmeasured is hidden behind a false verdict."""
    built = graded(False, errors={"Clarity": "callable failed"})
    assert _outcome(built) is Outcome.RUBRIC_ERROR


def test_failing_gated_trait_is_rubric_fail_only_when_gating() -> None:
    """A trait below its bound fails the result under gating; otherwise the template decides."""
    built = graded(True, Clarity=2, Safe=True)
    assert _outcome(built, gating=True) is Outcome.RUBRIC_FAIL
    assert _outcome(built, gating=False) is Outcome.PASS


def test_template_failure_wins_over_a_rubric_failure() -> None:
    """With both failing, the template's category is reported."""
    assert _outcome(graded(False, Clarity=1)) is Outcome.VERIFY_FAIL


def test_gated_traits_alone_decide_without_a_template_verdict() -> None:
    """rubric_only: passing gated traits pass, a failing one fails."""
    assert _outcome(graded(None, Clarity=4, Safe=True)) is Outcome.PASS
    assert _outcome(graded(None, Clarity=4, Safe=False)) is Outcome.RUBRIC_FAIL


def test_nothing_decides_is_no_verdict() -> None:
    """No template verdict and nothing gated (ungated metric trait, or gating off)."""
    assert _outcome(graded(None, extraction={"precision": 1.0, "f1": 1.0})) is Outcome.NO_VERDICT
    assert _outcome(graded(None, Clarity=5), gating=False) is Outcome.NO_VERDICT
    assert _outcome(VerificationResult(metadata=result().metadata)) is Outcome.NO_VERDICT


def test_decide_verdicts_keeps_order_and_checks() -> None:
    """One verdict per result, in order, with the trait checks of each."""
    first, second, third = graded(True, Clarity=2), fields_result(symbol="Au"), errored()
    verdicts = verdicts_of(first, second, third)
    assert [v.result for v in verdicts] == [first, second, third]
    assert [v.category for v in verdicts] == [
        Outcome.RUBRIC_FAIL,
        Outcome.PASS,
        Outcome.TIMEOUT_ERROR,
    ]
    assert [(c.name, c.value, c.passed) for c in verdicts[0].checks] == [("Clarity", 2, False)]
    assert verdicts[1].checks == []
    assert [c.name for c in verdicts[0].failing_traits] == ["Clarity"]


def test_gate_rules_reach_decide_verdicts() -> None:
    """A rule on a metric part gates the metric trait; ``off`` stops gating a trait."""
    metric = graded(True, extraction={"precision": 1.0, "f1": 0.5})
    (verdict,) = verdicts_of(metric, rules=("extraction.f1>=0.8",))
    assert verdict.category is Outcome.RUBRIC_FAIL
    (verdict,) = verdicts_of(graded(True, Clarity=1), rules=("Clarity off",))
    assert verdict.category is Outcome.PASS
    assert verdict.checks[0].gated is False


def test_unmeasured_traits_of_a_verdict() -> None:
    """Only gated traits with an error count as unmeasured."""
    (verdict,) = verdicts_of(graded(None, errors={"Safe": "no reply"}, Clarity=4))
    assert [c.name for c in verdict.unmeasured_traits] == ["Safe"]
    assert verdict.failing_traits == []


def test_trait_definitions_first_definition_wins() -> None:
    """Traits of several rubrics by name; a repeated name keeps the first; None is skipped."""
    other_clarity = CLARITY.model_copy(update={"max_score": 10})
    rubrics = [Rubric(llm_traits=[CLARITY]), None, Rubric(llm_traits=[other_clarity, SAFE])]
    found = trait_definitions(rubrics)
    assert list(found) == ["Clarity", "Safe"]
    assert found["Clarity"] is CLARITY


def _verdict(built: VerificationResult, category: Outcome) -> Verdict:
    return Verdict(built, [], category)


@pytest.mark.parametrize(
    ("built", "category", "stage"),
    [
        (fields_result(symbol="Au"), Outcome.PASS, "VerifyTemplate"),
        (fields_result(), Outcome.VERIFY_FAIL, "VerifyTemplate"),
        (graded(True, Clarity=1), Outcome.RUBRIC_FAIL, "RubricEvaluation"),
        (graded(None, errors={"Safe": "x"}), Outcome.RUBRIC_ERROR, "RubricEvaluation"),
        (graded(None, Clarity=5), Outcome.PASS, "RubricEvaluation"),
        (
            result(False, abstention_detected=True, abstention_override_applied=True),
            Outcome.ABSTAINED,
            "AbstentionCheck",
        ),
        (
            result(False, sufficiency_detected=False, sufficiency_override_applied=True),
            Outcome.INSUFFICIENT,
            "SufficiencyCheck",
        ),
        (
            result(False, recursion_limit_reached=True),
            Outcome.VERIFY_FAIL,
            "RecursionLimitAutoFail",
        ),
        (errored("parsing", "parse_template"), Outcome.PARSING_ERROR, "ParseTemplate"),
        (errored("timeout", "GenerateAnswer"), Outcome.TIMEOUT_ERROR, "GenerateAnswer"),
    ],
)
def test_deciding_stage(built: VerificationResult, category: Outcome, stage: str) -> None:
    """The stage named for a verdict: rubric gates, checks that override, or the failure's
    stage in class style."""
    assert deciding_stage(_verdict(built, category)) == stage


def test_template_deciding_stage_of_an_embedding_rescue() -> None:
    """An embedding override decided the template verdict."""
    built = result(True, embedding_override_applied=True, embedding_similarity_score=0.91)
    assert template_deciding_stage(built) == "EmbeddingCheck"


def test_overrides_in_words() -> None:
    """Every override applied, in order: abstention, sufficiency, embedding (3 decimals)."""
    built = result(
        False,
        abstention_override_applied=True,
        sufficiency_override_applied=True,
        embedding_override_applied=True,
        embedding_similarity_score=0.87654,
    )
    assert overrides(built) == [
        "abstention detected: verdict forced to false",
        "insufficient response: verdict forced to false",
        "embedding check rescued the answer (similarity 0.877)",
    ]
    assert overrides(fields_result()) == []
    assert overrides(VerificationResult(metadata=result().metadata)) == []


def test_field_rows_with_a_compiled_template() -> None:
    """One row per judged field, with the primitive class read from the template."""
    assert field_rows(fields_result(symbol="Ag", year=1929), FACTS) == [
        {"field": "symbol", "expected": "Au", "parsed": "Ag", "primitive": "ExactMatch",
         "passed": False, "differs": None,
         "spec": {"type": "ExactMatch", "normalize": ["lowercase", "strip"]}},
        {"field": "year", "expected": 1928, "parsed": 1929, "primitive": "NumericExact",
         "passed": False, "differs": None},
    ]  # fmt: skip
    # A field that passed carries no primitive to re-run (failure clusters re-run failed ones).
    assert "spec" not in field_rows(fields_result(symbol="Au", year=1929), FACTS)[0]


def test_field_rows_of_a_template_with_its_own_verify_say_what_differs() -> None:
    """No per-field verdicts: each row says whether the extraction is the ground truth."""
    built = result(
        False,
        parsed_gt_response={"symbol": "Au", "year": 1928},
        parsed_llm_response={"symbol": "Au", "year": 1929},
    )
    rows = field_rows(built, FieldFacts())
    assert [(r["field"], r["passed"], r["differs"]) for r in rows] == [
        ("symbol", None, False),
        ("year", None, True),
    ]


def test_field_rows_list_expected_fields_without_outcome_last() -> None:
    """A field with ground truth but no outcome comes after the judged ones, passed None."""
    built = result(
        False,
        parsed_gt_response={"year": 1928, "symbol": "Au"},
        parsed_llm_response={"symbol": "Au"},
        field_results={"symbol": True},
    )
    rows = field_rows(built, FACTS)
    assert [(r["field"], r["parsed"], r["passed"]) for r in rows] == [
        ("symbol", "Au", True),
        ("year", None, None),
    ]


def test_field_rows_of_a_broken_template_have_no_primitive() -> None:
    """A template that does not compile leaves the primitive column empty."""
    broken = field_facts("class Answer(BaseAnswer):\n    x: int = (\n", "an answer")
    rows = field_rows(fields_result(), broken)
    assert broken == FieldFacts() and [r["primitive"] for r in rows] == [None, None]
    assert field_facts("this is not python", None) == FieldFacts()


TRACE_TEMPLATE = """
class Answer(BaseAnswer):
    names_adenine: bool = VerifiedField(description="names adenine", ground_truth=True,
        verify_with=TraceRegex(pattern=r"(?i)\\badenine\\b"))
    names_uracil: bool = VerifiedField(description="names uracil", ground_truth=False,
        verify_with=TraceRegex(pattern=r"(?i)\\buracil\\b"))
"""


def test_trace_fields_show_what_their_check_found_in_the_answer() -> None:
    facts = field_facts(TRACE_TEMPLATE, "Adenine pairs with uracil in RNA.")
    built = result(
        False,
        parsed_gt_response={"names_adenine": True, "names_uracil": False},
        parsed_llm_response={},
        field_results={"names_adenine": True, "names_uracil": False},
    )

    rows = field_rows(built, facts)

    assert facts.observed == {"names_adenine": True, "names_uracil": True}
    assert [(r["field"], r["expected"], r["parsed"], r["primitive"]) for r in rows] == [
        ("names_adenine", True, True, "TraceRegex"),
        ("names_uracil", False, True, "TraceRegex"),
    ]


def test_field_rows_without_template_section() -> None:
    """No template section, no rows."""
    assert field_rows(VerificationResult(metadata=result().metadata), FACTS) == []


def test_checks_are_trait_checks() -> None:
    """check_traits over the helpers' rubric yields TraitCheck rows with bounds as text."""
    rubric = graded(None, Clarity=3, Cites=False).rubric
    checks = check_traits(rubric, DEFINITIONS, RubricGatePolicy())
    assert checks == [
        TraitCheck("Clarity", "llm score 1-5", 3, True, True, bound=">= 3 (of 1-5)"),
        TraitCheck("Cites", "regex", False, True, False, bound="== true"),
    ]


def test_a_strict_replay_miss_is_its_own_error() -> None:
    missed = errored("unexpected_error", message="strict replay: no recorded reply")
    failure = missed.metadata.failure
    assert failure is not None
    marked = missed.model_copy(
        update={
            "metadata": missed.metadata.model_copy(
                update={"failure": failure.model_copy(update={"details": {"replay_miss": True}})}
            )
        }
    )

    assert outcome_of(marked, [], gating=False) is Outcome.REPLAY_ERROR
    assert outcome_of(missed, [], gating=False) is Outcome.UNEXPECTED_ERROR


def test_a_rubric_trait_deep_judgment_could_not_ground_is_a_rubric_failure() -> None:
    """rubric_only: no template verdict to force, so stage 12's trait fails the rubric gate
    (Karenina turns the missing verdict into False)."""
    section = VerificationResultDeepJudgmentRubric(
        deep_judgment_rubric_performed=True,
        traits_without_valid_excerpts=["Safe"],
        trait_metadata={"Safe": {"excerpt_retry_count": 1}},
    )
    built = graded(Clarity=4).model_copy(update={"deep_judgment_rubric": section})
    rubric = built.rubric.model_copy(  # type: ignore[union-attr]
        update={"trait_provenance": {"Clarity": "global", "Safe": "global"}}
    )
    built = built.model_copy(update={"rubric": rubric})

    (verdict,) = verdicts_of(built)

    assert verdict.category is Outcome.RUBRIC_FAIL
    assert [c.name for c in verdict.failing_traits] == ["Safe"]
    assert verdict.failing_traits[0].reasoning == (
        "deep judgment: no valid quote after 1 excerpt retry"
    )
    assert verdicts_of(built, rules=("Safe off",))[0].category is Outcome.PASS


def test_template_code_that_raised_is_an_error_not_a_wrong_answer() -> None:
    built = typo_result()
    assert built.metadata.completed_without_errors
    assert outcome_of(built, [], gating=False) is Outcome.TEMPLATE_ERROR
    assert Outcome.TEMPLATE_ERROR.is_error and not Outcome.TEMPLATE_ERROR.decided
    assert template_error_of(built) == TYPO_WARNING
    # verify_granular() raised although verify() passed: the benchmark is broken all the same.
    granular = result(True, meta={"warnings": ["template error: verify_granular() raised X"]})
    assert outcome_of(granular, [], gating=False) is Outcome.TEMPLATE_ERROR
    # A Karenina result has only field_verification_error.
    karenina = result(False, field_verification_error="Field verification failed: boom")
    assert template_error_of(karenina) == "template error: verify() raised boom"
    assert outcome_of(karenina, [], gating=False) is Outcome.TEMPLATE_ERROR


def forced(category: FailureCategory, stage: str, reason: str, **template: Any) -> Verdict:
    (verdict,) = verdicts_of(forced_result(category, stage, reason, **template))
    return verdict


def test_the_stage_that_forced_a_false_verdict_decided_it() -> None:
    custom = forced("content", "ToxicityCheck", "ToxicityCheck: toxicity_score 0.9")
    assert custom.category is Outcome.VERIFY_FAIL
    assert deciding_stage(custom) == "ToxicityCheck"
    assert overriding_failure(custom) is custom.result.metadata.failure
    grounded = forced("deep_judgment", "DeepJudgmentAutoFail", "deep judgment: no quote for x",
                      embedding_override_applied=True)  # fmt: skip
    assert deciding_stage(grounded) == "DeepJudgmentAutoFail"  # after an embedding rescue
    verified = forced("content", "verify_template", "verify_template returned False")
    assert (deciding_stage(verified), overriding_failure(verified)) == ("VerifyTemplate", None)
