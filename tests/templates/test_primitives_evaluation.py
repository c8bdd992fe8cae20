"""Field evaluation with primitives (spec 3.4-3.6).

evaluate_fields scores and null fields, composition nodes, ConditionalGroundTruth.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_karenina.templates import (
    AllOf,
    AnyOf,
    AtLeastN,
    BaseAnswer,
    BooleanMatch,
    ConditionalGroundTruth,
    ContainsAny,
    ExactMatch,
    FieldCheck,
    GroundTruthCase,
    NumericExact,
    NumericGraded,
    VerificationPrimitive,
    VerifiedField,
    evaluate_fields,
    evaluate_strategy,
    strategy_label,
)

# ---------------------------------------------------------------------------
# evaluate_fields: scores, clamping, null fields
# ---------------------------------------------------------------------------


class ScoreProbe(VerificationPrimitive):
    """Test primitive: passes when extracted == expected; ``score`` returns ``raw``."""

    raw: float | None = None

    def check(self, extracted: Any, expected: Any) -> bool:
        return bool(extracted == expected)

    def score(self, extracted: Any, expected: Any) -> float:
        if self.raw is None:
            raise RuntimeError("score exploded")
        return self.raw


def _probe_answer(primitive: VerificationPrimitive, value: Any) -> Any:
    class Answer(BaseAnswer):
        x: Any = VerifiedField(description="x", ground_truth="ok", verify_with=primitive)

    return Answer(x=value)


@pytest.mark.parametrize(
    ("raw", "value", "result", "score"),
    [
        pytest.param(None, "ok", True, 1.0, id="score-raises-passing-degrades-to-1"),
        pytest.param(None, "no", False, 0.0, id="score-raises-failing-degrades-to-0"),
        pytest.param(1.7, "ok", True, 1.0, id="clamped-above"),
        pytest.param(-0.3, "no", False, 0.0, id="clamped-below"),
        pytest.param(0.4, "no", False, 0.4, id="partial-credit-on-failure-kept"),
        pytest.param(0.4, "ok", True, 0.4, id="score-independent-of-check"),
        pytest.param(1e9, "no", False, 1.0, id="huge-clamped"),
    ],
)
def test_evaluate_fields_scores(raw: float | None, value: Any, result: bool, score: float) -> None:
    answer = _probe_answer(ScoreProbe(raw=raw), value)
    outcome = evaluate_fields(answer)["x"]
    assert outcome.result is result
    assert outcome.score == score
    assert answer.verify() is result
    assert answer.verify_granular() == score


def test_graded_score_feeds_verify_granular() -> None:
    class Answer(BaseAnswer):
        value: float = VerifiedField(
            description="v", ground_truth=100, verify_with=NumericGraded(cutoff=0.1)
        )
        flag: bool = VerifiedField(description="f", ground_truth=True, verify_with=BooleanMatch())

    answer = Answer(value=105, flag=True)
    outcomes = evaluate_fields(answer)
    assert outcomes["value"].result is True
    assert outcomes["value"].score == pytest.approx(0.5)
    assert answer.verify_granular() == pytest.approx(0.75)


class NullableAnswer(BaseAnswer):
    x: str | None = VerifiedField(description="x", ground_truth="a", verify_with=ExactMatch())
    y: str = VerifiedField(description="y", ground_truth="b", verify_with=ExactMatch(), weight=3.0)


def test_null_field_result_is_none_and_fails() -> None:
    answer = NullableAnswer.model_construct(y="b")
    answer._null_fields = frozenset({"x"})
    outcomes = evaluate_fields(answer)
    assert outcomes["x"].result is None
    assert outcomes["x"].score is None
    assert outcomes["y"].result is True
    assert answer.verify() is False
    # W includes the null field's weight: 3 / (1 + 3)
    assert answer.verify_granular() == pytest.approx(3 / 4)


def test_null_field_is_not_checked_even_if_a_value_is_present() -> None:
    answer = NullableAnswer(x="a", y="b")
    answer._null_fields = frozenset({"x"})
    assert evaluate_fields(answer)["x"].result is None
    assert answer.verify() is False


def test_null_field_fails_field_check_under_any_of() -> None:
    class Answer(BaseAnswer):
        x: str | None = VerifiedField(description="x", ground_truth="a", verify_with=ExactMatch())
        y: str | None = VerifiedField(description="y", ground_truth="b", verify_with=ExactMatch())

        class VerificationStrategy:
            verify_strategy = AnyOf(conditions=[FieldCheck(field="x"), FieldCheck(field="y")])

    answer = Answer(x="a", y="wrong")
    assert answer.verify() is True
    answer._null_fields = frozenset({"x"})
    assert answer.verify() is False
    assert answer.verify_granular() == 0.0


def test_outcome_carries_expected_weight_and_primitive() -> None:
    outcome = evaluate_fields(NullableAnswer(x="A ", y="b"))["y"]
    assert (outcome.name, outcome.expected, outcome.weight) == ("y", "b", 3.0)
    assert outcome.primitive == ExactMatch()


def test_zero_total_weight_gives_zero_granular() -> None:
    class Answer(BaseAnswer):
        x: bool = VerifiedField(
            description="x", ground_truth=True, verify_with=BooleanMatch(), weight=0
        )

    answer = Answer(x=True)
    assert answer.verify() is True
    assert answer.verify_granular() == 0.0


def test_auto_verify_any_of_spec_example() -> None:
    # Spec 3.6 [verified]: gene (w=1, fails) and count (w=2, passes) under AnyOf.
    class Answer(BaseAnswer):
        gene: str = VerifiedField(description="gene", ground_truth="TP53", verify_with=ExactMatch())
        count: int = VerifiedField(
            description="count", ground_truth=23, verify_with=NumericExact(), weight=2.0
        )

        class VerificationStrategy:
            verify_strategy = AnyOf(
                conditions=[FieldCheck(field="gene"), FieldCheck(field="count")]
            )

    answer = Answer(gene="KRAS", count=23)
    assert answer.verify() is True
    assert answer.verify_granular() == pytest.approx(2 / 3)


# ---------------------------------------------------------------------------
# Composition nodes (spec 3.4)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("node", "results", "passed"),
    [
        pytest.param(AllOf(), {}, True, id="empty-all_of-passes"),
        pytest.param(AnyOf(), {}, False, id="empty-any_of-fails"),
        pytest.param(AtLeastN(n=0), {}, True, id="at_least_0-empty-passes"),
        pytest.param(AtLeastN(n=1), {}, False, id="at_least_1-empty-fails"),
        pytest.param(FieldCheck(field="a"), {"a": True}, True, id="field-true"),
        pytest.param(FieldCheck(field="a"), {"a": False}, False, id="field-false"),
        pytest.param(FieldCheck(field="a"), {"a": None}, False, id="field-none-fails"),
        pytest.param(
            AtLeastN(
                n=2,
                conditions=[FieldCheck(field="a"), FieldCheck(field="b"), FieldCheck(field="c")],
            ),
            {"a": True, "b": None, "c": True},
            True,
            id="at_least_2-met",
        ),
        pytest.param(
            AtLeastN(
                n=2,
                conditions=[FieldCheck(field="a"), FieldCheck(field="b"), FieldCheck(field="c")],
            ),
            {"a": True, "b": None, "c": False},
            False,
            id="at_least_2-short",
        ),
        pytest.param(
            AllOf(
                conditions=[
                    FieldCheck(field="a"),
                    AnyOf(conditions=[FieldCheck(field="b"), FieldCheck(field="c")]),
                ]
            ),
            {"a": True, "b": False, "c": True},
            True,
            id="nested",
        ),
    ],
)
def test_evaluate_strategy(node: Any, results: dict[str, bool | None], passed: bool) -> None:
    assert evaluate_strategy(node, results) is passed


def test_field_check_on_missing_field_raises() -> None:
    with pytest.raises(KeyError, match="missing"):
        evaluate_strategy(FieldCheck(field="missing"), {"a": True})


@pytest.mark.parametrize(
    ("node", "label"),
    [
        pytest.param(AllOf(), "all_of", id="all_of"),
        pytest.param(AnyOf(), "any_of", id="any_of"),
        pytest.param(AtLeastN(n=2), "at_least_n(2)", id="at_least_n"),
        pytest.param(None, None, id="none"),
    ],
)
def test_strategy_label(node: Any, label: str | None) -> None:
    assert strategy_label(node) == label


# ---------------------------------------------------------------------------
# ConditionalGroundTruth
# ---------------------------------------------------------------------------


class SeverityAnswer(BaseAnswer):
    plan: str = VerifiedField(
        description="The recommended plan",
        ground_truth=ConditionalGroundTruth(
            source="node_results.triage.parsed.severity",
            cases={
                "high": GroundTruthCase(value="admit"),
                "low": GroundTruthCase(
                    value="discharge", verify_with=ContainsAny(substrings=["home", "discharge"])
                ),
                "3": GroundTruthCase(value="observe"),
            },
            default=GroundTruthCase(value="reassess"),
        ),
        verify_with=ExactMatch(),
    )


def _severity(plan: str, context: dict[str, Any] | None) -> SeverityAnswer:
    answer = SeverityAnswer(plan=plan)
    answer._scenario_context = context
    return answer


def _triage(severity: Any) -> dict[str, Any]:
    return {"node_results": {"triage": {"parsed": {"severity": severity}}}}


@pytest.mark.parametrize(
    ("plan", "context", "expected", "result"),
    [
        pytest.param("Reassess", None, "reassess", True, id="default-outside-scenario"),
        pytest.param("admit", None, "reassess", False, id="case-value-outside-scenario-fails"),
        pytest.param("ADMIT ", _triage("high"), "admit", True, id="matching-case"),
        pytest.param("reassess", _triage("high"), "admit", False, id="matching-case-default-fails"),
        pytest.param("send home", _triage("low"), "discharge", True, id="case-primitive-override"),
        pytest.param(
            "Discharge",
            _triage("low"),
            "discharge",
            False,
            id="override-is-case-sensitive-contains",
        ),
        pytest.param("observe", _triage(3), "observe", True, id="case-keyed-by-str-of-value"),
        pytest.param("reassess", _triage("medium"), "reassess", True, id="no-matching-case"),
        pytest.param("reassess", {"node_results": {}}, "reassess", True, id="missing-node"),
        pytest.param("reassess", {}, "reassess", True, id="empty-context"),
    ],
)
def test_conditional_ground_truth(
    plan: str, context: dict[str, Any] | None, expected: str, result: bool
) -> None:
    answer = _severity(plan, context)
    outcome = evaluate_fields(answer)["plan"]
    assert outcome.expected == expected
    assert outcome.result is result
    assert answer.verify() is result


def test_conditional_case_override_replaces_the_field_primitive() -> None:
    outcome = evaluate_fields(_severity("home", _triage("low")))["plan"]
    assert outcome.primitive == ContainsAny(substrings=["home", "discharge"])
    default = evaluate_fields(_severity("home", None))["plan"]
    assert default.primitive == ExactMatch()


def test_conditional_ground_truth_is_stored_with_marker_and_left_out_of_correct() -> None:
    meta = SeverityAnswer.verified_fields()["plan"]
    assert meta.is_conditional
    assert meta.ground_truth["__conditional__"] is True
    assert meta.ground_truth["source"] == "node_results.triage.parsed.severity"
    assert set(meta.ground_truth["cases"]) == {"high", "low", "3"}
    assert SeverityAnswer(plan="x").correct == {}
