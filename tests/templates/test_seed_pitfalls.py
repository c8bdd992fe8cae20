"""Seed page "Answer Templates", section 10: common pitfalls and the errors they raise.

Section numbers in the test names and comments refer to the seed page. The
templates are re-typed here with short descriptions; the values fed to them are
the ones the page uses.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import Field, ValidationError

from pytest_karenina.templates import (
    BaseAnswer,
    BooleanMatch,
    ContainsAny,
    ExactMatch,
    NumericExact,
    TemplateWarning,
    TraceRegex,
    VerifiedField,
)
from tests.templates.seed_helpers import (
    GeneAnswer,
    PairCountAnswer,
)

# ---------------------------------------------------------------------------
# 10. Common pitfalls
# ---------------------------------------------------------------------------


def test_pitfall_classic_verify_exception_propagates_to_the_caller() -> None:
    # The pipeline catches it (field_verification_error); the template does not.
    class Answer(BaseAnswer):
        count: str = Field(description="The count as stated")

        def ground_truth(self) -> None:
            self.correct = {"count": 46}

        def verify(self) -> bool:
            return float(self.count) == self.correct["count"]

    with pytest.raises(ValueError, match="forty-six"):
        Answer(count="forty-six").verify()


def test_pitfall_primitive_exception_propagates_out_of_auto_verify() -> None:
    class Answer(BaseAnswer):
        count: str = VerifiedField(
            description="The count as stated", ground_truth=46, verify_with=NumericExact()
        )

    with pytest.raises(ValueError):
        Answer(count="forty-six").verify()


def test_pitfall_judge_returning_none_for_str_field_fails_parsing() -> None:
    with pytest.raises(ValidationError):
        GeneAnswer.model_validate({"gene": None})


def test_pitfall_guard_against_none_in_classic_verify() -> None:
    class Answer(BaseAnswer):
        target: str | None = Field(description="The protein target")

        def ground_truth(self) -> None:
            self.correct = {"target": "BCL2"}

        def verify(self) -> bool:
            if self.target is None:
                return False
            return bool(self.target.strip().upper() == self.correct["target"].upper())

    assert Answer(target=None).verify() is False
    assert Answer(target="bcl2").verify() is True


def test_pitfall_base_answer_has_optional_id_field() -> None:
    field = BaseAnswer.model_fields["id"]
    assert field.default is None
    assert PairCountAnswer(pair_count=23).id is None


def test_pitfall_reserved_field_correct_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="correct"):

        class Answer(BaseAnswer):
            correct: str = VerifiedField(
                description="The answer", ground_truth="x", verify_with=ExactMatch()
            )


def test_pitfall_reserved_field_correct_as_plain_field_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="correct"):

        class Answer(BaseAnswer):
            correct: str = Field(description="The answer")


@pytest.mark.parametrize(
    "description",
    [pytest.param("", id="empty"), pytest.param("   \t\n", id="whitespace")],
)
def test_pitfall_blank_description_is_a_value_error(description: str) -> None:
    with pytest.raises(ValueError):
        VerifiedField(description=description, ground_truth="x", verify_with=ExactMatch())


def test_pitfall_missing_description_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        VerifiedField(ground_truth="x", verify_with=ExactMatch())  # type: ignore[call-arg]


def test_pitfall_verify_with_none_is_a_value_error_naming_a_primitive() -> None:
    with pytest.raises(ValueError, match=r"primitive") as excinfo:
        VerifiedField(description="The answer", ground_truth="x", verify_with=None)
    message = str(excinfo.value)
    assert "ExactMatch()" in message or "BooleanMatch()" in message


def test_pitfall_omitted_verify_with_is_a_value_error() -> None:
    # Seed 2.1: "Cannot be None; raises ValueError if omitted or explicitly set to None."
    # Seed 10.3: "Passing None (whether explicitly or by omission) raises a ValueError".
    with pytest.raises(ValueError, match=r"primitive"):
        VerifiedField(description="The answer", ground_truth="x")


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: ExactMatch(normalize=["uppercase"]), id="ExactMatch"),
        pytest.param(lambda: ExactMatch(normalize=["lowercase", "trim"]), id="ExactMatch-second"),
        pytest.param(lambda: ContainsAny(substrings=["x"], normalize=["stem"]), id="ContainsAny"),
    ],
)
def test_pitfall_unknown_normalizer_is_a_value_error_at_construction(make: Any) -> None:
    with pytest.raises(ValueError, match="normalizer"):
        make()


def test_pitfall_trace_primitive_on_str_field_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="bool"):

        class Answer(BaseAnswer):
            mentions_year: str = VerifiedField(
                description="Year mentioned",
                ground_truth=True,
                verify_with=TraceRegex(pattern=r"\d{4}"),
            )


def test_pitfall_mismatched_primitive_only_warns_and_gives_unexpected_results() -> None:
    # BooleanMatch on a str field: Karenina only warns; truthiness makes any text pass.
    with pytest.warns(TemplateWarning, match="BooleanMatch"):

        class Answer(BaseAnswer):
            target: str = VerifiedField(
                description="Drug target", ground_truth="BCL2", verify_with=BooleanMatch()
            )

    assert Answer(target="MCL1").verify() is True
