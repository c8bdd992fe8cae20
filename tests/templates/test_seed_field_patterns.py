"""Seed page "Answer Templates", sections 4.1-4.4, 5.2 and 7.3: field patterns.

One pattern per field kind (boolean, string, numeric, regex/trace), the quick examples
and the before/after descriptions.

Section numbers in the test names and comments refer to the seed page. The
templates are re-typed here with short descriptions; the values fed to them are
the ones the page uses.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import Field

from pytest_karenina.templates import (
    BaseAnswer,
    BooleanMatch,
    ExactMatch,
    NumericExact,
    NumericTolerance,
    SetContainment,
    TraceRegex,
    VerifiedField,
    evaluate_fields,
    judge_schema,
    needs_judge,
    template_mode,
)
from tests.templates.seed_helpers import (
    PENICILLIN_TRACE,
    GeneAnswer,
)

# ---------------------------------------------------------------------------
# 4.1 Boolean check: identifies_tp53
# ---------------------------------------------------------------------------


class Tp53Answer(BaseAnswer):
    identifies_tp53: bool = VerifiedField(
        description="True if TP53 is singled out as the most commonly mutated cancer gene",
        ground_truth=True,
        verify_with=BooleanMatch(),
    )


@pytest.mark.parametrize(
    ("identifies_tp53", "verified"),
    [pytest.param(True, True, id="correct"), pytest.param(False, False, id="wrong")],
)
def test_boolean_check_identifies_tp53(identifies_tp53: bool, verified: bool) -> None:
    assert Tp53Answer(identifies_tp53=identifies_tp53).verify() is verified


# ---------------------------------------------------------------------------
# 4.2 String extraction: blood_type
# ---------------------------------------------------------------------------


class BloodTypeAnswer(BaseAnswer):
    blood_type: str = VerifiedField(
        description="Most common blood type worldwide, in shorthand such as 'O+'",
        ground_truth="O+",
        verify_with=ExactMatch(normalize=["lowercase", "strip"]),
        extraction_hint="Convert full names such as 'O positive' to shorthand.",
    )


@pytest.mark.parametrize(
    ("blood_type", "verified"),
    [
        pytest.param("O+", True, id="O+"),
        pytest.param("o+", True, id="lowercase-o+"),
        pytest.param(" O+ ", True, id="padded-O+"),
        # Not normalized by the primitive: converting to shorthand is the judge's job.
        pytest.param("O positive", False, id="full-name-not-normalized"),
        pytest.param("O-", False, id="O-negative"),
    ],
)
def test_blood_type_spellings(blood_type: str, verified: bool) -> None:
    assert BloodTypeAnswer(blood_type=blood_type).verify() is verified


def test_blood_type_extraction_hint_is_stored() -> None:
    meta = BloodTypeAnswer.verified_fields()["blood_type"]
    assert meta.extraction_hint == "Convert full names such as 'O positive' to shorthand."


# ---------------------------------------------------------------------------
# 4.3 Numeric tolerance: temperature; NumericExact pair_count
# ---------------------------------------------------------------------------


class TemperatureAnswer(BaseAnswer):
    temperature_celsius: float = VerifiedField(
        description="Normal body temperature in degrees Celsius",
        ground_truth=37.0,
        verify_with=NumericTolerance(tolerance=0.5, mode="absolute"),
    )


@pytest.mark.parametrize(
    ("temperature", "verified"),
    [
        pytest.param(37.0, True, id="37.0"),
        pytest.param(36.8, True, id="36.8"),
        pytest.param(37.5, True, id="37.5-boundary"),
        pytest.param(36.0, False, id="36.0"),
        pytest.param(38.0, False, id="38.0"),
    ],
)
def test_temperature_tolerance_table(temperature: float, verified: bool) -> None:
    assert TemperatureAnswer(temperature_celsius=temperature).verify() is verified


def test_numeric_tolerance_mode_defaults_to_relative() -> None:
    primitive = NumericTolerance(tolerance=0.1)
    assert primitive.mode == "relative"
    # "tolerance=0.1 to accept within 10%"
    assert primitive.check(110, 100) is True
    assert primitive.check(90, 100) is True
    assert primitive.check(111, 100) is False


class PairCountExactAnswer(BaseAnswer):
    pair_count: int = VerifiedField(
        description="Number of chromosome pairs, as a whole number (pairs, not total count)",
        ground_truth=23,
        verify_with=NumericExact(),
    )


@pytest.mark.parametrize(
    ("pair_count", "verified"),
    [pytest.param(23, True, id="23-pairs"), pytest.param(46, False, id="46-pairs")],
)
def test_numeric_exact_pair_count(pair_count: int, verified: bool) -> None:
    assert PairCountExactAnswer(pair_count=pair_count).verify() is verified


# ---------------------------------------------------------------------------
# 4.4 Regex checks: TraceRegex fields and classic self.regex match types
# ---------------------------------------------------------------------------


class PenicillinTraceAnswer(BaseAnswer):
    mentions_year: bool = VerifiedField(
        description="True if a four-digit year appears",
        ground_truth=True,
        verify_with=TraceRegex(pattern=r"\b\d{4}\b"),
    )
    mentions_fleming: bool = VerifiedField(
        description="True if Fleming is mentioned",
        ground_truth=True,
        verify_with=TraceRegex(pattern=r"\bFleming\b"),
    )


def _trace_answer(trace: str) -> PenicillinTraceAnswer:
    answer = PenicillinTraceAnswer.model_construct()
    answer._raw_trace = trace
    return answer


def test_trace_regex_fields_match_the_penicillin_trace() -> None:
    answer = _trace_answer(PENICILLIN_TRACE)
    results = {name: outcome.result for name, outcome in evaluate_fields(answer).items()}
    assert results == {"mentions_year": True, "mentions_fleming": True}
    assert answer.verify() is True
    assert answer.verify_granular() == 1.0


@pytest.mark.parametrize(
    ("trace", "results", "verified"),
    [
        pytest.param(
            "--- AI Message ---\nPenicillin was found by Fleming.",
            {"mentions_year": False, "mentions_fleming": True},
            False,
            id="no-year",
        ),
        pytest.param(
            "--- AI Message ---\nPenicillin was discovered in 1928.",
            {"mentions_year": True, "mentions_fleming": False},
            False,
            id="no-fleming",
        ),
        pytest.param(
            "--- AI Message ---\nFlemingsen reported it in 19280.",
            {"mentions_year": False, "mentions_fleming": False},
            False,
            id="word-boundaries",
        ),
    ],
)
def test_trace_regex_fields_fail_when_pattern_absent(
    trace: str, results: dict[str, bool], verified: bool
) -> None:
    answer = _trace_answer(trace)
    assert {name: o.result for name, o in evaluate_fields(answer).items()} == results
    assert answer.verify() is verified


def test_trace_regex_ground_truth_false_means_pattern_must_not_match() -> None:
    class Answer(BaseAnswer):
        no_year: bool = VerifiedField(
            description="True if a year appears",
            ground_truth=False,
            verify_with=TraceRegex(pattern=r"\b\d{4}\b"),
        )

    assert _with_trace(Answer, PENICILLIN_TRACE).verify() is False
    assert _with_trace(Answer, "--- AI Message ---\nLong ago.").verify() is True


def _with_trace(answer_class: type[BaseAnswer], trace: str) -> Any:
    answer = answer_class.model_construct()
    answer._raw_trace = trace
    return answer


def test_trace_fields_are_excluded_from_the_judge_schema_and_need_no_judge() -> None:
    properties = judge_schema(PenicillinTraceAnswer)["properties"]
    assert "mentions_year" not in properties
    assert "mentions_fleming" not in properties
    assert template_mode(PenicillinTraceAnswer) == "trace_only"
    assert needs_judge(PenicillinTraceAnswer) is False


class RegexMatchTypeAnswer(BaseAnswer):
    checks: dict[str, Any] = Field(default_factory=dict, exclude=True)

    def ground_truth(self) -> None:
        self.regex = self.checks


@pytest.mark.parametrize(
    ("check", "trace", "passed"),
    [
        pytest.param(
            {"pattern": r"\b1928\b", "expected": "1928", "match_type": "exact"},
            "Discovered in 1928.",
            True,
            id="exact-one-match",
        ),
        pytest.param(
            {"pattern": r"\b\d{4}\b", "expected": "1928", "match_type": "exact"},
            "Discovered in 1928, published in 1929.",
            False,
            id="exact-fails-on-two-matches",
        ),
        pytest.param(
            {"pattern": r"\b\d{4}\b", "expected": "1928", "match_type": "contains"},
            "Discovered in 1928, published in 1929.",
            True,
            id="contains-with-several-matches",
        ),
        pytest.param(
            {
                "pattern": r"\b(activates|inhibits|blocks)\b",
                "expected": "inhibits",
                "match_type": "contains",
            },
            "The drug inhibits the target.",
            True,
            id="contains-alternation-group",
        ),
        pytest.param(
            {"pattern": r"\[\d+\]", "expected": 3, "match_type": "count"},
            "Text [1] [2] [3]",
            True,
            id="count-equal",
        ),
        pytest.param(
            {"pattern": r"\[\d+\]", "expected": 3, "match_type": "count"},
            "Text [1] [2]",
            False,
            id="count-different",
        ),
        pytest.param(
            {"pattern": r"\b[A-Z]{2,}\d*\b", "expected": ["EGFR", "KRAS"], "match_type": "all"},
            "EGFR activates KRAS and BRAF",
            True,
            id="all-found",
        ),
        pytest.param(
            {"pattern": r"\b[A-Z]{2,}\d*\b", "expected": ["EGFR", "TP53"], "match_type": "all"},
            "EGFR activates KRAS and BRAF",
            False,
            id="all-missing-one",
        ),
        pytest.param(
            {"pattern": r"(\d+)\s*(mg|g)", "expected": "500 mg", "match_type": "contains"},
            "Take 500 mg daily.",
            False,
            id="capture-groups-return-tuples",
        ),
        pytest.param(
            {"pattern": r"\d+\s*(?:mg|g)", "expected": "500 mg", "match_type": "contains"},
            "Take 500 mg daily.",
            True,
            id="non-capturing-group-returns-full-match",
        ),
    ],
)
def test_classic_regex_match_types(check: dict[str, Any], trace: str, passed: bool) -> None:
    report = RegexMatchTypeAnswer(checks={"check": check}).verify_regex(trace)
    assert report["success"] is passed
    assert report["results"] == {"check": passed}


def test_classic_regex_capture_groups_yield_tuples() -> None:
    answer = RegexMatchTypeAnswer(
        checks={"dose": {"pattern": r"(\d+)\s*(mg|g)", "expected": "500", "match_type": "exact"}}
    )
    details = answer.verify_regex("Take 500 mg daily.")["details"]["dose"]
    assert details["matches_found"] == [("500", "mg")]


# ---------------------------------------------------------------------------
# 5.2 Quick examples: gene, is_oncogene, melting_point
# ---------------------------------------------------------------------------


# GeneAnswer is in seed_helpers: the pitfalls reuse it.


@pytest.mark.parametrize(
    ("gene", "verified"),
    [
        pytest.param("TP53", True, id="TP53"),
        pytest.param(" tp53 ", True, id="lower-padded"),
        # 7.3.1: extracting "p53" instead of the HGNC symbol fails verification.
        pytest.param("p53", False, id="p53-not-hgnc"),
        pytest.param("KRAS", False, id="other-gene"),
    ],
)
def test_gene_exact_match(gene: str, verified: bool) -> None:
    assert GeneAnswer(gene=gene).verify() is verified


class OncogeneAnswer(BaseAnswer):
    is_oncogene: bool = VerifiedField(
        description="True if the gene is classified as an oncogene",
        ground_truth=True,
        verify_with=BooleanMatch(),
    )


@pytest.mark.parametrize(
    ("value", "verified"), [pytest.param(True, True, id="yes"), pytest.param(False, False, id="no")]
)
def test_is_oncogene_boolean_match(value: bool, verified: bool) -> None:
    assert OncogeneAnswer(is_oncogene=value).verify() is verified


class MeltingPointAnswer(BaseAnswer):
    melting_point: float = VerifiedField(
        description="Melting point in degrees Celsius",
        ground_truth=0.0,
        verify_with=NumericTolerance(tolerance=0.5, mode="absolute"),
    )


@pytest.mark.parametrize(
    ("value", "verified"),
    [
        pytest.param(0.0, True, id="exact"),
        pytest.param(0.5, True, id="upper-boundary"),
        pytest.param(-0.5, True, id="lower-boundary"),
        pytest.param(0.51, False, id="just-above"),
        pytest.param(-1.0, False, id="below"),
    ],
)
def test_melting_point_absolute_tolerance_around_zero(value: float, verified: bool) -> None:
    assert MeltingPointAnswer(melting_point=value).verify() is verified


# ---------------------------------------------------------------------------
# 7.3 Before / after descriptions
# ---------------------------------------------------------------------------


class InteractionAnswer(BaseAnswer):
    has_clinically_confirmed_interaction: bool = VerifiedField(
        description="True if a clinically confirmed drug-drug interaction is described",
        ground_truth=True,
        verify_with=BooleanMatch(),
    )


@pytest.mark.parametrize(
    ("value", "verified"),
    [pytest.param(True, True, id="confirmed"), pytest.param(False, False, id="theoretical-only")],
)
def test_interaction_threshold_boolean(value: bool, verified: bool) -> None:
    assert InteractionAnswer(has_clinically_confirmed_interaction=value).verify() is verified


class SymptomsAnswer(BaseAnswer):
    presenting_symptoms: list[str] = VerifiedField(
        description="Symptoms attributed to the patient, one lowercase item each",
        ground_truth=["fever", "fatigue", "joint pain"],
        verify_with=SetContainment(mode="exact"),
    )


@pytest.mark.parametrize(
    ("symptoms", "verified"),
    [
        pytest.param(["fever", "fatigue", "joint pain"], True, id="presenting-only"),
        pytest.param(
            [
                "fever",
                "fatigue",
                "joint pain",
                "malar rash",
                "photosensitivity",
                "morning stiffness",
                "headaches",
            ],
            False,
            id="over-extraction-superset-fails",
        ),
        pytest.param(["fever", "fatigue and joint pain"], False, id="concatenated-items"),
    ],
)
def test_symptoms_set_containment(symptoms: list[str], verified: bool) -> None:
    assert SymptomsAnswer(presenting_symptoms=symptoms).verify() is verified
