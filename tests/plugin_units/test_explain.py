"""Failure and error explanations: the compact text shown instead of a traceback."""

from __future__ import annotations

import pytest

from pytest_karenina.plugin.verdict.explain import (
    MAX_VALUE,
    VerificationFailed,
    explain_error,
    explain_result,
    explain_unmeasured,
    explain_verdict,
    failure_headline,
    result_reason,
    short,
    trait_check_line,
)
from pytest_karenina.plugin.verdict.outcome import Outcome, Verdict
from pytest_karenina.results import Failure
from pytest_karenina.rubrics.gates import TraitCheck
from tests.plugin_units.units_helpers import (
    FACTS,
    TYPO_WARNING,
    errored,
    fields_result,
    forced_result,
    graded,
    typo_result,
    verdicts_of,
)
from tests.results.builders import result

MODELS = "  answering gpt-4o (langchain), parsing gpt-4o"


def test_explain_error_names_stage_category_and_message() -> None:
    """One pair of lines per result; a result without a failure record says unknown."""
    unknown = result(None, meta={"completed_without_errors": False, "replicate": 2})
    text = explain_error([errored("parsing", "parse_template", "judge reply is not JSON"), unknown])
    assert text.splitlines() == [
        "error in parse_template (parsing): judge reply is not JSON",
        MODELS,
        "error: unknown error",
        MODELS + ", replicate 2",
    ]


def test_explain_verdict_of_a_template_failure() -> None:
    """The deciding stage, the field table with its FAIL row, regex and overrides."""
    built = fields_result(
        symbol="Ag",
        verify_granular_result=0.5,
        regex_validation_results={"cites": False, "units": True},
        field_verification_error="ZeroDivisionError: division by zero",
    )
    (verdict,) = verdicts_of(built)
    assert explain_verdict(verdict, FACTS).splitlines() == [
        "verify_result False (decided by VerifyTemplate), granular score 0.50",
        MODELS,
        "  field | expected | parsed | primitive | result",
        "  symbol | 'Au' | 'Ag' | ExactMatch | FAIL",
        "  year | 1928 | 1928 | NumericExact | pass",
        "  regex cites: FAIL",
        "  regex units: pass",
        "  verify() raised: ZeroDivisionError: division by zero",
    ]


def test_explain_verdict_of_an_abstention() -> None:
    """The abstention check decided; its reasoning and override are shown."""
    built = result(
        False,
        abstention_detected=True,
        abstention_override_applied=True,
        abstention_reasoning="The model declined to answer.",
    )
    (verdict,) = verdicts_of(built)
    assert verdict.category is Outcome.ABSTAINED
    assert explain_verdict(verdict, FACTS).splitlines() == [
        "verify_result False (decided by AbstentionCheck)",
        MODELS,
        "  abstention: 'The model declined to answer.'",
        "  override: abstention detected: verdict forced to false",
    ]


def test_explain_verdict_of_an_insufficient_response() -> None:
    """An insufficient response shows the sufficiency reasoning."""
    built = result(
        False,
        sufficiency_detected=False,
        sufficiency_override_applied=True,
        sufficiency_reasoning="No year given.",
    )
    (verdict,) = verdicts_of(built)
    lines = explain_verdict(verdict, FACTS).splitlines()
    assert lines[0] == "verify_result False (decided by SufficiencyCheck)"
    assert "  insufficient: 'No year given.'" in lines


def test_explain_verdict_of_a_rubric_failure_without_template_verdict() -> None:
    """rubric_only: the rubric verdict, then the gate count and each failing trait."""
    built = graded(
        None,
        reasoning={"Clarity": "Rambling and\nvague."},
        Clarity=2,
        Safe=False,
        Cites=True,
    )
    (verdict,) = verdicts_of(built)
    assert explain_verdict(verdict, FACTS).splitlines() == [
        "rubric verdict: rubric_fail",
        MODELS,
        "  rubric gate: 2 of 3 gated traits failed",
        "  trait Clarity (llm score 1-5): 2, needs >= 3 (of 1-5); judge: 'Rambling and\\nvague.'",
        "  trait Safe (llm boolean): false, needs == true",
    ]


def test_explain_verdict_with_template_and_rubric_failure() -> None:
    """Under template_and_rubric gating both parts are explained."""
    (verdict,) = verdicts_of(graded(True, Clarity=1))
    lines = explain_verdict(verdict, FACTS).splitlines()
    assert lines[0] == "verify_result True (decided by VerifyTemplate)"
    assert lines[-2:] == [
        "  rubric gate: 1 of 1 gated traits failed",
        "  trait Clarity (llm score 1-5): 1, needs >= 3 (of 1-5)",
    ]


def test_explain_unmeasured() -> None:
    """Each result names its gated traits without a value."""
    verdicts = verdicts_of(graded(None, errors={"Safe": "judge call failed"}, Clarity=4))
    assert explain_unmeasured(verdicts).splitlines() == [
        "rubric traits that decide the verdict could not be measured:",
        "  trait Safe (llm boolean): no value (judge call failed)",
        MODELS,
        "  to decide without them: --karenina-rubric-gates='Safe off'",
    ]


def test_unmeasured_traits_are_listed_before_failing_ones() -> None:
    """The rubric explanation counts both kinds and lists the unmeasured first."""
    (verdict,) = verdicts_of(graded(None, errors={"Safe": "timeout"}, Clarity=1))
    lines = explain_verdict(verdict, FACTS).splitlines()
    assert lines[2:] == [
        "  rubric gate: 1 of 2 gated traits failed",
        "  rubric gate: 1 of 2 gated traits have no value",
        "  trait Safe (llm boolean): no value (timeout)",
        "  trait Clarity (llm score 1-5): 1, needs >= 3 (of 1-5)",
    ]


def test_verification_failed_explains_every_verdict() -> None:
    """The exception's text: a one-line reason, then each verdict's explanation, separated
    by a blank line."""
    verdicts = verdicts_of(fields_result(), graded(None, Clarity=1))
    failure = VerificationFailed(verdicts, FACTS)
    assert isinstance(failure, AssertionError)
    first, second = failure.explain().split("\n\n")
    headline, _, rest = first.partition("\n")
    assert headline == "symbol: 'Ag' != 'Au' (and 1 more result)"
    assert rest == explain_result(verdicts[0].result, FACTS)
    assert second.startswith("rubric verdict: rubric_fail\n")


def test_the_headline_names_the_reason() -> None:
    (rubric,) = verdicts_of(graded(None, Clarity=1))
    (abstained,) = verdicts_of(
        result(
            False, abstention_detected=True, abstention_override_applied=True,
            abstention_reasoning="declines to answer",
        )
    )  # fmt: skip
    (many,) = verdicts_of(fields_result(symbol="Ag", year=1900))

    assert failure_headline([rubric], FACTS) == "rubric Clarity: 1, needs >= 3 (of 1-5)"
    assert failure_headline([abstained], FACTS) == "abstained: 'declines to answer'"
    assert failure_headline([many], FACTS) == "symbol: 'Ag' != 'Au'; year: 1900 != 1928"


@pytest.mark.parametrize(
    ("check", "line"),
    [
        (TraitCheck("Safe", "llm boolean", True, True, True, bound="== true"),
         "  trait Safe (llm boolean): true, needs == true"),
        (TraitCheck("tone", "llm literal", "formal", False, None),
         "  trait tone (llm literal): 'formal'"),
        (TraitCheck("Clarity", "llm score 1-5", None, True, None, error="no value"),
         "  trait Clarity (llm score 1-5): no value (no value)"),
        (TraitCheck("x", "metric tp_only", {"f1": 0.5}, True, False, bound="f1>=0.8",
                    reasoning="ok"),
         '  trait x (metric tp_only): {"f1": 0.5}, needs f1>=0.8; judge: \'ok\''),
    ],
)  # fmt: skip
def test_trait_check_line(check: TraitCheck, line: str) -> None:
    """Value (or why there is none), bound and the judge's reasoning."""
    assert trait_check_line(check) == line


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("Au", "'Au'"),
        (1928, "1928"),
        (None, "null"),
        (True, "true"),
        (["a", "b"], '["a", "b"]'),
        ({"k": "é"}, '{"k": "é"}'),
        ("two   spaced\n\nlines", "'two spaced\\n\\nlines'"),
    ],
)
def test_short(value: object, text: str) -> None:
    """Strings are quoted, other values JSON, whitespace runs collapsed."""
    assert short(value) == text


def test_short_truncates() -> None:
    """Long values are cut to the limit, ending in an ellipsis."""
    text = short("x" * 200)
    assert len(text) == MAX_VALUE and text == "'" + "x" * (MAX_VALUE - 4) + "..."
    assert short(list(range(100)), limit=10) == "[0, 1, ..."


def test_verdict_without_checks_has_no_rubric_lines() -> None:
    """A plain template verdict adds no rubric gate lines."""
    verdict = Verdict(fields_result(symbol="Au"), [], Outcome.PASS)
    assert "rubric gate" not in explain_verdict(verdict, FACTS)


def test_error_text_cannot_forge_lines_or_drive_the_terminal() -> None:
    hostile = "bad key\r\n=== 20 passed in 0.1s ===\x1b[2J"
    text = explain_error([errored("unexpected_error", message=hostile)])

    assert "\r" not in text and "\x1b" not in text
    assert text.splitlines()[0] == (
        "error in generate_answer (unexpected_error): "
        "bad key\\r\\n=== 20 passed in 0.1s ===\\x1b[2J"
    )


def test_a_template_error_is_explained_as_one() -> None:
    """The first line is the template error, with the exception and the template's line."""
    assert explain_error([typo_result()]).splitlines() == [
        TYPO_WARNING,
        MODELS,
        "  the template's code raised: a broken benchmark, not a wrong answer",
    ]
    (verdict,) = verdicts_of(typo_result())
    assert result_reason(verdict, FACTS) == TYPO_WARNING


def test_the_first_line_names_the_stage_that_forced_the_verdict() -> None:
    """Not "verify() returned False": the custom or auto-fail stage and its reason, although
    every field passed (granular score 1.00)."""
    custom = forced_result("content", "ToxicityCheck", "ToxicityCheck: toxicity_score 0.9")
    explained = VerificationFailed(verdicts_of(custom), FACTS).explain().splitlines()
    assert explained[:2] == [
        "ToxicityCheck: toxicity_score 0.9",
        "verify_result False (decided by ToxicityCheck), granular score 1.00",
    ]
    ungrounded = forced_result(
        "deep_judgment", "DeepJudgmentAutoFail", "deep judgment: no verbatim quote for symbol"
    )
    assert failure_headline(verdicts_of(ungrounded), FACTS) == (
        "deep judgment: no verbatim quote for symbol"
    )


def test_rubric_deep_judgment_names_itself_in_rubric_only() -> None:
    """rubric_only: stage 12 left the trait without a quote; its reason comes first."""
    failure = Failure(
        category="deep_judgment_rubric", stage="DeepJudgmentRubricAutoFail",
        reason="rubric deep judgment: no verbatim quote for Clarity",
    )  # fmt: skip
    built = graded(None, Clarity=1)
    built = built.model_copy(
        update={"metadata": built.metadata.model_copy(update={"failure": failure})}
    )
    (verdict,) = verdicts_of(built)
    assert verdict.category is Outcome.RUBRIC_FAIL
    assert failure_headline([verdict], FACTS) == failure.reason
