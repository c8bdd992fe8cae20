"""Every code example of the seed page "Answer Templates", with the outcome it states or implies.

Section numbers in the test names and comments refer to the seed page. The
templates are re-typed here with short descriptions; the values fed to them are
the ones the page uses.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any, Literal

import pytest
from pydantic import Field, ValidationError

from pytest_karenina.templates import (
    AllOf,
    AnyOf,
    AtLeastN,
    BaseAnswer,
    BooleanMatch,
    ContainsAny,
    ExactMatch,
    FieldCheck,
    LiteralMatch,
    NumericExact,
    NumericTolerance,
    SetContainment,
    TemplateError,
    TemplateWarning,
    TraceRegex,
    VerifiedField,
    compile_template,
    evaluate_fields,
    judge_schema,
    needs_judge,
    template_mode,
)

PENICILLIN_TRACE = (
    "--- AI Message ---\n"
    "Penicillin was discovered in 1928 by Alexander Fleming, who noticed that a mold of the "
    "genus Penicillium inhibited bacterial growth on an agar plate."
)

# The import block at the top of the seed page, used verbatim by compiled templates.
SEED_IMPORTS = """\
from typing import Literal
from pydantic import Field
from karenina.schemas.entities import BaseAnswer, VerifiedField
from karenina.schemas.primitives import (
    BooleanMatch,
    ContainsAny,
    ExactMatch,
    LiteralMatch,
    NumericExact,
    NumericTolerance,
    SetContainment,
    TraceRegex,
)
from karenina.schemas.entities.composition import (
    AllOf,
    AnyOf,
    AtLeastN,
    FieldCheck,
)
"""


# ---------------------------------------------------------------------------
# 1.3 Walkthrough: pair_count with NumericExact
# ---------------------------------------------------------------------------


class PairCountAnswer(BaseAnswer):
    pair_count: int = VerifiedField(
        description="Number of chromosome pairs in a normal human somatic cell",
        ground_truth=23,
        verify_with=NumericExact(),
    )


@pytest.mark.parametrize(
    ("pair_count", "verified", "granular"),
    [
        pytest.param(23, True, 1.0, id="23-pairs-passes"),
        pytest.param(46, False, 0.0, id="46-total-chromosomes-fails"),
    ],
)
def test_walkthrough_pair_count(pair_count: int, verified: bool, granular: float) -> None:
    parsed = PairCountAnswer(pair_count=pair_count)
    assert parsed.verify() is verified
    assert parsed.verify_granular() == granular


def test_walkthrough_judge_sees_type_and_description_but_not_ground_truth() -> None:
    schema = judge_schema(PairCountAnswer)
    prop = schema["properties"]["pair_count"]
    assert prop["type"] == "integer"
    assert prop["description"] == "Number of chromosome pairs in a normal human somatic cell"
    dumped = json.dumps(schema)
    assert "__verification__" not in dumped
    assert "NumericExact" not in dumped
    assert "ground_truth" not in dumped


# ---------------------------------------------------------------------------
# 2. VerifiedField: target / is_approved
# ---------------------------------------------------------------------------


class TargetApprovalAnswer(BaseAnswer):
    target: str = VerifiedField(
        description="The direct pharmacological target protein named in the response",
        ground_truth="BCL2",
        verify_with=ExactMatch(normalize=["lowercase", "strip", "remove_punctuation"]),
    )
    is_approved: bool = VerifiedField(
        description="True if the response says the drug is FDA approved",
        ground_truth=True,
        verify_with=BooleanMatch(),
    )


def test_target_approval_bcl_2_with_hyphen_passes() -> None:
    # "Bcl-2" -> lowercase "bcl-2" -> strip -> remove_punctuation "bcl2" == "bcl2".
    parsed = TargetApprovalAnswer(target="Bcl-2", is_approved=True)
    assert parsed.target == "Bcl-2"
    assert parsed.verify() is True
    assert f"{parsed.verify_granular():.2f}" == "1.00"


@pytest.mark.parametrize(
    ("target", "is_approved", "verified", "granular"),
    [
        pytest.param("BCL2", True, True, 1.0, id="canonical-symbol"),
        pytest.param("  bcl.2 ", True, True, 1.0, id="spaces-and-punctuation"),
        pytest.param("Bcl-2", False, False, 0.5, id="not-approved-fails-all-of"),
        pytest.param("BCL-XL", True, False, 0.5, id="wrong-target"),
        pytest.param("MCL1", False, False, 0.0, id="both-wrong"),
    ],
)
def test_target_approval_all_fields_must_pass(
    target: str, is_approved: bool, verified: bool, granular: float
) -> None:
    parsed = TargetApprovalAnswer(target=target, is_approved=is_approved)
    assert parsed.verify() is verified
    assert parsed.verify_granular() == pytest.approx(granular)


def test_target_approval_metadata_is_stored_under_verification_key() -> None:
    # 2.2: metadata lives in json_schema_extra["__verification__"].
    extra = TargetApprovalAnswer.model_fields["target"].json_schema_extra
    assert isinstance(extra, dict)
    meta = extra["__verification__"]
    assert meta["ground_truth"] == "BCL2"
    assert meta["verify_with"] == {
        "normalize": ["lowercase", "strip", "remove_punctuation"],
        "type": "ExactMatch",
    }
    assert meta["weight"] == 1.0
    assert meta["extraction_hint"] is None


@pytest.mark.parametrize(
    "make_schema",
    [
        pytest.param(TargetApprovalAnswer.model_json_schema, id="model_json_schema"),
        pytest.param(lambda: judge_schema(TargetApprovalAnswer), id="judge_schema"),
    ],
)
def test_target_approval_schema_hides_ground_truth(make_schema: Any) -> None:
    # 2.2: the judge only sees field name, type and description.
    schema = make_schema()
    dumped = json.dumps(schema)
    assert "__verification__" not in dumped
    assert "BCL2" not in dumped
    assert "ExactMatch" not in dumped
    assert schema["properties"]["target"]["type"] == "string"
    assert schema["properties"]["target"]["description"].startswith("The direct pharmacological")
    assert schema["properties"]["is_approved"]["type"] == "boolean"


def test_verified_field_auto_fills_correct_from_ground_truth() -> None:
    parsed = TargetApprovalAnswer(target="Bcl-2", is_approved=True)
    assert parsed.correct == {"target": "BCL2", "is_approved": True}


def test_verified_field_is_required() -> None:
    # A VerifiedField has no default: the filled template must provide every field.
    with pytest.raises(ValidationError):
        TargetApprovalAnswer(target="BCL2")


# ---------------------------------------------------------------------------
# 2.1 VerifiedField parameters
# ---------------------------------------------------------------------------


def test_extraction_hint_and_weight_are_kept_in_the_metadata() -> None:
    class Answer(BaseAnswer):
        value: str = VerifiedField(
            description="The value",
            ground_truth="x",
            verify_with=ExactMatch(),
            extraction_hint="Look for x",
            weight=2.0,
        )

    meta = Answer.verified_fields()["value"]
    assert meta.extraction_hint == "Look for x"
    assert meta.weight == 2.0
    assert "Look for x" not in json.dumps(Answer.model_json_schema())


# ---------------------------------------------------------------------------
# 2.3 Class requirements: any class name, exactly one leaf BaseAnswer subclass
# ---------------------------------------------------------------------------

ANSWER_SOURCE = """
class Answer(BaseAnswer):
    value: str = VerifiedField(
        description="The answer value",
        ground_truth="42",
        verify_with=ExactMatch(),
    )
"""

VENETOCLAX_SOURCE = """
class VenetoclaxAnswer(BaseAnswer):
    target: str = VerifiedField(
        description="Drug target protein",
        ground_truth="BCL2",
        verify_with=ExactMatch(normalize=["lowercase", "strip"]),
    )
"""


@pytest.mark.parametrize(
    ("source", "name", "values"),
    [
        pytest.param(ANSWER_SOURCE, "Answer", {"value": " 42 "}, id="Answer"),
        pytest.param(VENETOCLAX_SOURCE, "VenetoclaxAnswer", {"target": "bcl2"}, id="Venetoclax"),
    ],
)
def test_any_class_name_is_discovered(source: str, name: str, values: dict[str, Any]) -> None:
    answer_class = compile_template(SEED_IMPORTS + source)
    assert answer_class.__name__ == name
    assert answer_class(**values).verify() is True


def test_two_leaf_answer_classes_in_one_template_are_an_error() -> None:
    with pytest.raises(TemplateError):
        compile_template(SEED_IMPORTS + ANSWER_SOURCE + VENETOCLAX_SOURCE)


def test_extra_attributes_are_allowed_and_not_in_schema() -> None:
    parsed = PairCountAnswer(pair_count=23)
    parsed.tolerance = 0.5
    assert parsed.tolerance == 0.5
    properties = PairCountAnswer.model_json_schema()["properties"]
    assert set(properties) == {"id", "pair_count"}


# ---------------------------------------------------------------------------
# 3. Field types: element / atomic_number, Literal mutation_type
# ---------------------------------------------------------------------------


class ElementAnswer(BaseAnswer):
    element: str = VerifiedField(
        description="The chemical element named in the response",
        ground_truth="oxygen",
        verify_with=ExactMatch(normalize=["lowercase", "strip"]),
    )
    atomic_number: int = VerifiedField(
        description="The atomic number given in the response",
        ground_truth=8,
        verify_with=NumericExact(),
    )


@pytest.mark.parametrize(
    ("element", "atomic_number", "verified", "granular"),
    [
        pytest.param("Oxygen", 8, True, 1.0, id="page-example"),
        pytest.param("Oxygen", 16, False, 0.5, id="wrong-number"),
        pytest.param("Sulfur", 16, False, 0.0, id="both-wrong"),
    ],
)
def test_element_atomic_number(
    element: str, atomic_number: int, verified: bool, granular: float
) -> None:
    parsed = ElementAnswer(element=element, atomic_number=atomic_number)
    assert parsed.verify() is verified
    assert parsed.verify_granular() == pytest.approx(granular)


MUTATION_TYPES = ["missense", "nonsense", "frameshift", "silent"]


class MutationAnswer(BaseAnswer):
    mutation_type: Literal["missense", "nonsense", "frameshift", "silent"] = VerifiedField(
        description="The kind of point mutation described",
        ground_truth="missense",
        verify_with=LiteralMatch(),
    )


@pytest.mark.parametrize(
    ("mutation_type", "verified"),
    [pytest.param(value, value == "missense", id=value) for value in MUTATION_TYPES],
)
def test_literal_mutation_type(mutation_type: str, verified: bool) -> None:
    assert MutationAnswer(mutation_type=mutation_type).verify() is verified


def test_literal_field_is_an_enum_in_the_schema() -> None:
    prop = judge_schema(MutationAnswer)["properties"]["mutation_type"]
    assert prop["enum"] == MUTATION_TYPES


def test_literal_field_rejects_values_outside_the_enum() -> None:
    with pytest.raises(ValidationError):
        MutationAnswer(mutation_type="deletion")


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
# 4.5 Multi-field with partial credit: mRNA vaccine
# ---------------------------------------------------------------------------


class MrnaAnswer(BaseAnswer):
    delivery_mechanism: str = VerifiedField(
        description="How the vaccine delivers its instructions to cells, lowercase",
        ground_truth="mrna",
        verify_with=ContainsAny(substrings=["mrna", "messenger rna"], normalize=["lowercase"]),
        weight=2.0,
    )
    target_protein: str = VerifiedField(
        description="The protein cells are instructed to make, lowercase",
        ground_truth="spike protein",
        verify_with=ContainsAny(substrings=["spike"], normalize=["lowercase"]),
        weight=2.0,
    )
    mentions_immune_response: bool = VerifiedField(
        description="True if the resulting immune response is described",
        ground_truth=True,
        verify_with=BooleanMatch(),
        weight=1.0,
    )


def test_mrna_first_parse_all_fields_pass() -> None:
    parsed = MrnaAnswer(
        delivery_mechanism="mRNA instructions",
        target_protein="spike protein",
        mentions_immune_response=True,
    )
    assert parsed.verify() is True
    assert parsed.verify_granular() == 1.0
    assert f"{parsed.verify_granular():.2f}" == "1.00"


def test_mrna_second_parse_gets_weighted_partial_credit() -> None:
    # Score = (2 + 0 + 1) / (2 + 2 + 1) = 3/5 = 0.60
    parsed = MrnaAnswer(
        delivery_mechanism="mRNA instructions",
        target_protein="wrong protein",
        mentions_immune_response=True,
    )
    assert parsed.verify() is False
    assert parsed.verify_granular() == 3 / 5
    assert f"{parsed.verify_granular():.2f}" == "0.60"
    results = {name: o.result for name, o in evaluate_fields(parsed).items()}
    assert results == {
        "delivery_mechanism": True,
        "target_protein": False,
        "mentions_immune_response": True,
    }


def test_mrna_total_weight_is_five() -> None:
    assert sum(m.weight for m in MrnaAnswer.verified_fields().values()) == 5.0


# ---------------------------------------------------------------------------
# 4.7 Lists vs individual booleans
# ---------------------------------------------------------------------------


class SignalingListAnswer(BaseAnswer):
    signaling_proteins: list[str] = VerifiedField(
        description="Proteins named as part of the pathway, uppercase gene symbols",
        ground_truth=["EGFR", "KRAS", "BRAF"],
        verify_with=SetContainment(mode="exact"),
    )


@pytest.mark.parametrize(
    ("proteins", "verified"),
    [
        pytest.param(["EGFR", "KRAS", "BRAF"], True, id="same-order"),
        pytest.param(["BRAF", "EGFR", "KRAS"], True, id="order-irrelevant"),
        pytest.param(["EGFR", "KRAS", "BRAF", "KRAS"], True, id="duplicates-collapse"),
        pytest.param(["EGFR", "KRAS"], False, id="missing-one"),
        pytest.param(["EGFR", "KRAS", "BRAF", "MEK1"], False, id="extra-one"),
        pytest.param(["egfr", "kras", "braf"], False, id="no-normalization"),
    ],
)
def test_signaling_list_set_containment_exact(proteins: list[str], verified: bool) -> None:
    assert SignalingListAnswer(signaling_proteins=proteins).verify() is verified


class SignalingBooleansAnswer(BaseAnswer):
    mentions_egfr: bool = VerifiedField(
        description="True if EGFR (ErbB1, HER1) is named in the pathway",
        ground_truth=True,
        verify_with=BooleanMatch(),
    )
    mentions_kras: bool = VerifiedField(
        description="True if KRAS (K-Ras) is named in the pathway",
        ground_truth=True,
        verify_with=BooleanMatch(),
    )
    mentions_braf: bool = VerifiedField(
        description="True if BRAF (B-Raf) is named in the pathway",
        ground_truth=True,
        verify_with=BooleanMatch(),
    )


@pytest.mark.parametrize(
    ("egfr", "kras", "braf", "verified", "granular"),
    [
        pytest.param(True, True, True, True, 1.0, id="all-three"),
        pytest.param(True, True, False, False, 2 / 3, id="two-of-three"),
        pytest.param(True, False, False, False, 1 / 3, id="one-of-three"),
        pytest.param(False, False, False, False, 0.0, id="none"),
    ],
)
def test_signaling_booleans_partial_credit(
    egfr: bool, kras: bool, braf: bool, verified: bool, granular: float
) -> None:
    parsed = SignalingBooleansAnswer(mentions_egfr=egfr, mentions_kras=kras, mentions_braf=braf)
    assert parsed.verify() is verified
    assert parsed.verify_granular() == pytest.approx(granular)


# ---------------------------------------------------------------------------
# 5.2 Quick examples: gene, is_oncogene, melting_point
# ---------------------------------------------------------------------------


class GeneAnswer(BaseAnswer):
    gene: str = VerifiedField(
        description="The gene symbol identified",
        ground_truth="TP53",
        verify_with=ExactMatch(normalize=["lowercase", "strip"]),
    )


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
# 6.1 Composition tree: AnyOf(target, AllOf(mechanism, is_approved))
# ---------------------------------------------------------------------------


class CompositionAnswer(BaseAnswer):
    target: str = VerifiedField(
        description="The drug target protein",
        ground_truth="BCL2",
        verify_with=ExactMatch(normalize=["lowercase", "strip"]),
    )
    mechanism: str = VerifiedField(
        description="The mechanism of action",
        ground_truth="inhibitor",
        verify_with=ExactMatch(normalize=["lowercase", "strip"]),
    )
    is_approved: bool = VerifiedField(
        description="True if the drug is FDA approved",
        ground_truth=True,
        verify_with=BooleanMatch(),
    )

    class VerificationStrategy:
        verify_strategy = AnyOf(
            conditions=[
                FieldCheck(field="target"),
                AllOf(conditions=[FieldCheck(field="mechanism"), FieldCheck(field="is_approved")]),
            ]
        )


COMPOSITION_SOURCE = """
class Answer(BaseAnswer):
    target: str = VerifiedField(
        description="The drug target protein",
        ground_truth="BCL2",
        verify_with=ExactMatch(normalize=["lowercase", "strip"]),
    )
    mechanism: str = VerifiedField(
        description="The mechanism of action",
        ground_truth="inhibitor",
        verify_with=ExactMatch(normalize=["lowercase", "strip"]),
    )
    is_approved: bool = VerifiedField(
        description="True if the drug is FDA approved",
        ground_truth=True,
        verify_with=BooleanMatch(),
    )

    class VerificationStrategy:
        verify_strategy = AnyOf(conditions=[
            FieldCheck(field="target"),
            AllOf(conditions=[
                FieldCheck(field="mechanism"),
                FieldCheck(field="is_approved"),
            ]),
        ])
"""

COMPOSITION_CASES = [
    pytest.param("BCL2", "activator", False, True, id="target-right-only"),
    pytest.param("MCL1", "inhibitor", True, True, id="mechanism-and-approval-right"),
    pytest.param("MCL1", "inhibitor", False, False, id="only-mechanism-right"),
    pytest.param("MCL1", "activator", True, False, id="only-approval-right"),
    pytest.param("MCL1", "activator", False, False, id="all-wrong"),
    pytest.param("bcl2", "Inhibitor", True, True, id="all-right"),
]


@pytest.mark.parametrize(("target", "mechanism", "is_approved", "verified"), COMPOSITION_CASES)
def test_composition_tree(target: str, mechanism: str, is_approved: bool, verified: bool) -> None:
    parsed = CompositionAnswer(target=target, mechanism=mechanism, is_approved=is_approved)
    assert parsed.verify() is verified


@pytest.mark.parametrize(("target", "mechanism", "is_approved", "verified"), COMPOSITION_CASES)
def test_composition_tree_compiled_with_seed_imports(
    target: str, mechanism: str, is_approved: bool, verified: bool
) -> None:
    answer_class = compile_template(SEED_IMPORTS + COMPOSITION_SOURCE)
    parsed = answer_class(target=target, mechanism=mechanism, is_approved=is_approved)
    assert parsed.verify() is verified


# ---------------------------------------------------------------------------
# 6.2 Composition-aware granular scoring
# ---------------------------------------------------------------------------


def _three_field_template(strategy: Any | None) -> type[BaseAnswer]:
    class Answer(BaseAnswer):
        a: bool = VerifiedField(description="a", ground_truth=True, verify_with=BooleanMatch())
        b: bool = VerifiedField(description="b", ground_truth=True, verify_with=BooleanMatch())
        c: bool = VerifiedField(description="c", ground_truth=True, verify_with=BooleanMatch())

        if strategy is not None:

            class VerificationStrategy:
                verify_strategy = strategy

    return Answer


ALL_FIELDS = [FieldCheck(field="a"), FieldCheck(field="b"), FieldCheck(field="c")]


@pytest.mark.parametrize(
    ("strategy", "values", "verified", "granular"),
    [
        pytest.param(
            AnyOf(conditions=ALL_FIELDS), (True, False, False), True, 1 / 3, id="any_of-one-passing"
        ),
        pytest.param(
            AnyOf(conditions=ALL_FIELDS),
            (True, True, True),
            True,
            1 / 3,
            id="any_of-max-single-weight",
        ),
        pytest.param(
            AnyOf(conditions=ALL_FIELDS),
            (False, False, False),
            False,
            0.0,
            id="any_of-none-passing",
        ),
        pytest.param(
            AtLeastN(n=2, conditions=ALL_FIELDS),
            (True, True, False),
            True,
            2 / 3,
            id="at_least_2-two-passing",
        ),
        pytest.param(
            AtLeastN(n=2, conditions=ALL_FIELDS),
            (True, True, True),
            True,
            2 / 3,
            id="at_least_2-top-two-of-three",
        ),
        pytest.param(
            AtLeastN(n=2, conditions=ALL_FIELDS),
            (False, True, False),
            False,
            1 / 3,
            id="at_least_2-one-passing",
        ),
        pytest.param(None, (True, True, False), False, 2 / 3, id="default-flat-average"),
        pytest.param(
            AllOf(conditions=ALL_FIELDS),
            (True, True, False),
            False,
            2 / 3,
            id="explicit-all_of-flat-average",
        ),
        pytest.param(
            AllOf(conditions=ALL_FIELDS),
            (True, True, True),
            True,
            1.0,
            id="explicit-all_of-all-passing",
        ),
    ],
)
def test_composition_aware_granular(
    strategy: Any, values: tuple[bool, bool, bool], verified: bool, granular: float
) -> None:
    answer_class = _three_field_template(strategy)
    parsed = answer_class(a=values[0], b=values[1], c=values[2])
    assert parsed.verify() is verified
    assert parsed.verify_granular() == pytest.approx(granular)


@pytest.mark.parametrize(
    "values",
    [
        pytest.param((a, b, c), id=f"{int(a)}{int(b)}{int(c)}")
        for a in (True, False)
        for b in (True, False)
        for c in (True, False)
    ],
)
def test_explicit_all_of_equals_default(values: tuple[bool, bool, bool]) -> None:
    default = _three_field_template(None)(a=values[0], b=values[1], c=values[2])
    explicit = _three_field_template(AllOf(conditions=ALL_FIELDS))(
        a=values[0], b=values[1], c=values[2]
    )
    assert explicit.verify() is default.verify()
    assert explicit.verify_granular() == default.verify_granular()


def test_any_of_granular_uses_max_single_passing_weight() -> None:
    class Answer(BaseAnswer):
        light: bool = VerifiedField(
            description="light", ground_truth=True, verify_with=BooleanMatch(), weight=1.0
        )
        heavy: bool = VerifiedField(
            description="heavy", ground_truth=True, verify_with=BooleanMatch(), weight=3.0
        )

        class VerificationStrategy:
            verify_strategy = AnyOf(
                conditions=[FieldCheck(field="light"), FieldCheck(field="heavy")]
            )

    assert Answer(light=True, heavy=False).verify_granular() == pytest.approx(1 / 4)
    assert Answer(light=True, heavy=True).verify_granular() == pytest.approx(3 / 4)


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


# ---------------------------------------------------------------------------
# 8.1 Classic template: ground_truth() + verify()
# ---------------------------------------------------------------------------


class ClassicTargetAnswer(BaseAnswer):
    target: str = Field(description="The protein target of the drug")

    def ground_truth(self) -> None:
        self.correct = {"target": "BCL2"}

    def verify(self) -> bool:
        return bool(self.target.strip().upper().replace("-", "") == self.correct["target"].upper())


@pytest.mark.parametrize(
    ("target", "verified"),
    [
        pytest.param("Bcl-2", True, id="Bcl-2"),
        pytest.param(" bcl2 ", True, id="padded-lowercase"),
        pytest.param("BCL-XL", False, id="other-protein"),
    ],
)
def test_classic_target_verify(target: str, verified: bool) -> None:
    parsed = ClassicTargetAnswer(target=target)
    assert parsed.target == target
    assert parsed.correct["target"] == "BCL2"
    assert parsed.verify() is verified


def test_classic_target_is_classic_mode_and_correct_stays_out_of_schema() -> None:
    assert template_mode(ClassicTargetAnswer) == "classic"
    assert needs_judge(ClassicTargetAnswer) is True
    schema = ClassicTargetAnswer.model_json_schema()
    assert set(schema["properties"]) == {"id", "target"}
    assert "BCL2" not in json.dumps(schema)


@pytest.mark.parametrize(
    "source",
    [
        pytest.param(
            """
            class Answer(BaseAnswer):
                target: str = Field(description="The protein target")

                def ground_truth(self):
                    self.correct = {"target": "BCL2"}
            """,
            id="missing-verify",
        ),
        pytest.param(
            """
            class Answer(BaseAnswer):
                target: str = Field(description="The protein target")

                def ground_truth(self):
                    self.correct = ["BCL2"]

                def verify(self):
                    return True
            """,
            id="correct-not-a-dict",
        ),
    ],
)
def test_template_validation_rejects_bad_classic_templates(source: str) -> None:
    # 8.1 / 10.1: validation fails before any LLM call.
    with pytest.raises(TemplateError):
        compile_template(textwrap.dedent(source))


# ---------------------------------------------------------------------------
# 8.2 Classic verify_granular
# ---------------------------------------------------------------------------


class ClassicGranularAnswer(BaseAnswer):
    delivery_mechanism: str = Field(description="The vaccine delivery mechanism")
    target_protein: str = Field(description="The protein cells are told to produce")

    def ground_truth(self) -> None:
        self.correct = {"delivery_mechanism": "mrna", "target_protein": "spike protein"}

    def _check_delivery(self) -> bool:
        mechanism = self.delivery_mechanism.strip().lower()
        return "mrna" in mechanism or "messenger rna" in mechanism

    def _check_target(self) -> bool:
        return "spike" in self.target_protein.strip().lower()

    def verify(self) -> bool:
        return self._check_delivery() and self._check_target()

    def verify_granular(self) -> float:
        checks = [self._check_delivery(), self._check_target()]
        return sum(checks) / len(checks)


@pytest.mark.parametrize(
    ("mechanism", "protein", "verified", "granular"),
    [
        pytest.param("Messenger RNA", "Spike protein", True, 1.0, id="both"),
        pytest.param("mRNA", "nucleocapsid", False, 0.5, id="one-of-two"),
        pytest.param("viral vector", "nucleocapsid", False, 0.0, id="none"),
    ],
)
def test_classic_verify_granular(
    mechanism: str, protein: str, verified: bool, granular: float
) -> None:
    parsed = ClassicGranularAnswer(delivery_mechanism=mechanism, target_protein=protein)
    assert parsed.verify() is verified
    assert parsed.verify_granular() == granular


# ---------------------------------------------------------------------------
# 8.3 Classic self.regex: penicillin and the regex-only template
# ---------------------------------------------------------------------------


class ClassicPenicillinAnswer(BaseAnswer):
    discovery_date: str = Field(description="Date of penicillin's discovery (or the year)")

    def ground_truth(self) -> None:
        self.correct = {"discovery_date": "1928"}
        self.regex = {
            "mentions_discovery_year": {
                "pattern": r"\b1928\b",
                "expected": "1928",
                "match_type": "exact",
            },
            "mentions_fleming": {
                "pattern": r"\bFleming\b",
                "expected": "Fleming",
                "match_type": "exact",
            },
        }

    def verify(self) -> bool:
        return "1928" in self.discovery_date


def test_classic_penicillin_verify() -> None:
    parsed = ClassicPenicillinAnswer(discovery_date="1928")
    assert parsed.verify() is True
    assert ClassicPenicillinAnswer(discovery_date="1929").verify() is False


def test_classic_penicillin_regex_matches_the_trace() -> None:
    report = ClassicPenicillinAnswer(discovery_date="1928").verify_regex(PENICILLIN_TRACE)
    assert report["success"] is True
    assert report["results"] == {"mentions_discovery_year": True, "mentions_fleming": True}
    assert report["details"]["mentions_fleming"]["matches_found"] == ["Fleming"]


class RegexOnlyAnswer(BaseAnswer):
    def ground_truth(self) -> None:
        self.regex = {
            "has_mechanism_keyword": {
                "pattern": r"\b(activates|inhibits|blocks)\b",
                "expected": "inhibits",
                "match_type": "contains",
            },
            "has_three_citations": {
                "pattern": r"\[\d+\]",
                "expected": 3,
                "match_type": "count",
            },
        }


def test_regex_only_template() -> None:
    result = RegexOnlyAnswer().verify_regex("The drug inhibits the target [1] [2] [3]")
    assert set(result) == {"success", "results", "details"}
    assert result["success"] is True
    assert result["results"] == {"has_mechanism_keyword": True, "has_three_citations": True}
    keyword = result["details"]["has_mechanism_keyword"]
    assert keyword["matches_found"] == ["inhibits"]
    assert keyword["match_count"] == 1
    citations = result["details"]["has_three_citations"]
    assert citations["matches_found"] == ["[1]", "[2]", "[3]"]
    assert citations["match_count"] == 3


def test_regex_only_template_failure_has_failure_reason() -> None:
    result = RegexOnlyAnswer().verify_regex("The drug activates the target [1]")
    assert result["success"] is False
    assert result["results"] == {"has_mechanism_keyword": False, "has_three_citations": False}
    for name in ("has_mechanism_keyword", "has_three_citations"):
        assert result["details"][name]["failure_reason"]


def test_regex_only_template_needs_no_judge() -> None:
    assert template_mode(RegexOnlyAnswer) == "regex_only"
    assert needs_judge(RegexOnlyAnswer) is False


def test_regex_only_template_compiles_without_verify() -> None:
    source = """
    class Answer(BaseAnswer):
        def ground_truth(self):
            self.regex = {
                "has_three_citations": {"pattern": r"\\[\\d+\\]", "expected": 3,
                                        "match_type": "count"},
            }
    """
    answer_class = compile_template(SEED_IMPORTS + textwrap.dedent(source))
    report = answer_class().verify_regex("claim [1] [2] [3]")
    assert report["success"] is True


def test_no_regex_passes_trivially() -> None:
    report = PairCountAnswer(pair_count=23).verify_regex("anything at all")
    assert report["success"] is True
    assert report["results"] == {}


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
        VerifiedField(description="The answer", ground_truth="x")  # type: ignore[call-arg]


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
