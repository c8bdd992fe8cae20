"""BaseAnswer lifecycle: ground truth hooks, self.correct, auto methods, regex checks."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import Field

from pytest_karenina.templates import (
    BaseAnswer,
    BooleanMatch,
    ExactMatch,
    NumericExact,
    VerifiedField,
    compile_template,
)


class ClassicAnswer(BaseAnswer):
    target: str = Field(description="Target")

    def ground_truth(self) -> None:
        self.correct = {"target": "BCL2"}

    def verify(self) -> bool:
        return bool(self.target.upper().replace("-", "") == self.correct["target"])


class VerifiedAnswer(BaseAnswer):
    target: str = VerifiedField(description="Target", ground_truth="BCL2", verify_with=ExactMatch())
    approved: bool = VerifiedField(
        description="Approved", ground_truth=True, verify_with=BooleanMatch(), weight=3.0
    )


def test_ground_truth_runs_after_init_and_on_model_construct() -> None:
    assert ClassicAnswer(target="Bcl-2").correct == {"target": "BCL2"}
    assert ClassicAnswer.model_construct(target="x").correct == {"target": "BCL2"}
    assert ClassicAnswer(target="Bcl-2").verify() is True


def test_extra_attributes_are_allowed_and_dumped() -> None:
    answer = ClassicAnswer(target="BCL2", confidence=0.9)
    dumped = answer.model_dump()
    assert dumped["confidence"] == 0.9
    assert dumped["correct"] == {"target": "BCL2"}
    assert dumped["id"] is None


def test_model_post_init_still_works_as_the_hook() -> None:
    class PostInitAnswer(BaseAnswer):
        value: int = Field(description="Value")

        def model_post_init(self, __context: Any) -> None:
            self.correct = {"value": 42}

        def verify(self) -> bool:
            return bool(self.value == self.correct["value"])

    assert PostInitAnswer(value=42).verify() is True
    assert PostInitAnswer(value=41).verify() is False


def test_verified_fields_fill_correct_and_get_auto_methods() -> None:
    answer = VerifiedAnswer(target="bcl2", approved=False)
    assert answer.correct == {"target": "BCL2", "approved": True}
    assert answer.verify() is False
    assert answer.verify_granular() == pytest.approx(1 / 4)
    assert (
        "verify" not in ClassicAnswer.__dict__ or ClassicAnswer.verify is not VerifiedAnswer.verify
    )


def test_own_verify_wins_over_the_automatic_one() -> None:
    class Strict(VerifiedAnswer):
        def verify(self) -> bool:
            return False

    assert Strict(target="BCL2", approved=True).verify() is False
    assert Strict(target="BCL2", approved=True).verify_granular() == 1.0


def test_classic_templates_get_no_automatic_methods() -> None:
    assert not hasattr(ClassicAnswer, "verify_granular")
    assert not hasattr(BaseAnswer, "verify")


def test_ground_truth_hook_may_set_regex_alongside_verified_fields() -> None:
    class Mixed(BaseAnswer):
        count: int = VerifiedField(description="n", ground_truth=3, verify_with=NumericExact())

        def ground_truth(self) -> None:
            self.regex = {"cites": {"pattern": r"\[\d\]", "expected": 3, "match_type": "count"}}

    answer = Mixed(count=3)
    assert answer.correct == {"count": 3}
    assert answer.verify_regex("[1] [2] [3]")["success"] is True
    assert answer.verify_regex("[1]")["success"] is False


@pytest.mark.parametrize(
    ("check", "text", "passed", "reason"),
    [
        ({"pattern": r"\b1928\b", "expected": "1928"}, "in 1928.", True, "success_reason"),
        ({"pattern": r"\b19\d\d\b", "expected": "1928"}, "1928, 1929", False, "failure_reason"),
        (
            {"pattern": r"\b(inhibits|blocks)\b", "expected": "blocks", "match_type": "contains"},
            "it inhibits and blocks",
            True,
            "success_reason",
        ),
        (
            {"pattern": r"\[\d+\]", "expected": 2, "match_type": "count"},
            "[1] [2] [3]",
            False,
            "failure_reason",
        ),
        (
            {"pattern": r"[A-Z]+[0-9]+", "expected": ["BCL2", "TP53"], "match_type": "all"},
            "BCL2 binds TP53? no, MDM2",
            True,
            "success_reason",
        ),
        (
            {"pattern": r"x", "expected": "x", "match_type": "fuzzy"},
            "x",
            False,
            "failure_reason",
        ),
    ],
)
def test_verify_regex_match_types(
    check: dict[str, Any], text: str, passed: bool, reason: str
) -> None:
    answer = compile_template("class Answer(BaseAnswer):\n    pass\n")()
    answer.regex = {"check": check}
    report = answer.verify_regex(text)
    assert report["success"] is passed
    assert report["results"] == {"check": passed}
    details = report["details"]["check"]
    assert reason in details
    assert details["pattern"] == check["pattern"]
    assert details["match_type"] == check.get("match_type", "exact")


def test_verify_regex_reports_an_unusable_pattern_and_keeps_going() -> None:
    answer = ClassicAnswer(target="x")
    answer.regex = {
        "broken": {"pattern": "(", "expected": "x"},
        "fine": {"pattern": "x", "expected": "x"},
    }
    report = answer.verify_regex("x")
    assert report["results"] == {"broken": False, "fine": True}
    assert report["success"] is False
    assert "cannot be used" in report["details"]["broken"]["failure_reason"]


def test_no_regex_means_success() -> None:
    assert ClassicAnswer(target="x").verify_regex("anything") == {
        "success": True,
        "results": {},
        "details": {},
    }
