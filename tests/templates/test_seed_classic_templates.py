"""Seed page "Answer Templates", section 8: classic templates and self.regex.

Classic ground_truth() + verify(), classic verify_granular, and self.regex checks.

Section numbers in the test names and comments refer to the seed page. The
templates are re-typed here with short descriptions; the values fed to them are
the ones the page uses.
"""

from __future__ import annotations

import json
import textwrap

import pytest
from pydantic import Field

from pytest_karenina.templates import (
    BaseAnswer,
    TemplateError,
    compile_template,
    needs_judge,
    template_mode,
)
from tests.templates.seed_helpers import (
    PENICILLIN_TRACE,
    SEED_IMPORTS,
    PairCountAnswer,
)

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
