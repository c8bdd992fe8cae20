"""Seed page "Answer Templates", sections 4.5, 4.7 and 6: composition and partial credit.

Weighted partial credit, lists vs booleans, composition trees and composition-aware
granular scoring.

Section numbers in the test names and comments refer to the seed page. The
templates are re-typed here with short descriptions; the values fed to them are
the ones the page uses.
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
    ContainsAny,
    ExactMatch,
    FieldCheck,
    SetContainment,
    VerifiedField,
    compile_template,
    evaluate_fields,
)
from tests.templates.seed_helpers import (
    SEED_IMPORTS,
)

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
