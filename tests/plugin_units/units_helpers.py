"""Hand-built results, rubrics and verdicts for the plugin's unit tests."""

from __future__ import annotations

from typing import Any

from pytest_karenina.plugin.verdict.outcome import Verdict, decide_verdicts, field_facts
from pytest_karenina.results import Failure, VerificationResult, VerificationResultRubric
from pytest_karenina.results.failure import FailureCategory
from pytest_karenina.rubrics.gates import RubricGatePolicy, parse_gate_rules
from pytest_karenina.rubrics.traits import (
    LLMRubricTrait,
    MetricRubricTrait,
    RegexTrait,
    RubricTrait,
)
from tests.results.builders import result

TEMPLATE_CODE = """
class Answer(BaseAnswer):
    symbol: str = VerifiedField(description="Chemical symbol of the metal", ground_truth="Au",
        verify_with=ExactMatch())
    year: int = VerifiedField(description="Year of the discovery", ground_truth=1928,
        verify_with=NumericExact())
"""
FACTS = field_facts(TEMPLATE_CODE, None)
"""What ``TEMPLATE_CODE`` says about its fields, as the pipeline's thread reads it."""

"""A template with two verified fields: ``symbol`` (ExactMatch) and ``year`` (NumericExact)."""

CLARITY = LLMRubricTrait(name="Clarity", kind="score", min_score=1, max_score=5)
SAFE = LLMRubricTrait(name="Safe", kind="boolean")
CITES = RegexTrait(name="Cites", pattern=r"\[\d+\]")
EXTRACTION = MetricRubricTrait(
    name="extraction", metrics=["precision", "f1"], tp_instructions=["names the metal"]
)
DEFINITIONS: dict[str, RubricTrait] = {
    trait.name: trait for trait in (CLARITY, SAFE, CITES, EXTRACTION)
}
DEFAULT_POLICY = RubricGatePolicy()


def fields_result(symbol: str = "Ag", year: int = 1928, **template: Any) -> VerificationResult:
    """A template verdict over the two fields of :data:`TEMPLATE_CODE` (``symbol`` wrong by
    default)."""
    symbol_ok = symbol == "Au"
    year_ok = year == 1928
    return result(
        symbol_ok and year_ok,
        parsed_gt_response={"symbol": "Au", "year": 1928},
        parsed_llm_response={"symbol": symbol, "year": year},
        field_results={"symbol": symbol_ok, "year": year_ok},
        **template,
    )


def forced_result(
    category: FailureCategory, stage: str, reason: str, **template: Any
) -> VerificationResult:
    """A false template verdict that ``stage`` forced although both fields are right (granular
    score 1.0), as ``metadata.failure`` records it."""
    failure = Failure(category=category, stage=stage, reason=reason)
    return result(
        False,
        parsed_gt_response={"symbol": "Au", "year": 1928},
        parsed_llm_response={"symbol": "Au", "year": 1928},
        field_results={"symbol": True, "year": True},
        verify_granular_result=1.0,
        meta={"failure": failure},
        **template,
    )


TYPO_WARNING = (
    "template error: verify() raised AttributeError: 'Answer' object has no attribute "
    "'elemnt' (template line 12)"
)


def typo_result() -> VerificationResult:
    """verify() raised: the seed's fields (a false verdict, the error string, no granular
    score, completed without errors) and the pipeline's warning."""
    return result(
        False,
        template_verification_performed=True,
        field_verification_error=(
            "Field verification failed: AttributeError: 'Answer' object has no attribute 'elemnt'"
        ),
        meta={"warnings": [TYPO_WARNING], "failure": Failure(
            category="content", stage="verify_template", reason="verify_template returned False"
        )},
    )  # fmt: skip


def errored(
    category: FailureCategory = "timeout",
    stage: str = "generate_answer",
    message: str = "LLM call timed out after 3 attempts",
) -> VerificationResult:
    """A result whose pipeline failed in ``stage``."""
    failure = Failure(category=category, stage=stage, reason=message)
    return result(
        None,
        meta={"error": message, "failure": failure, "completed_without_errors": False},
    )


def graded(
    verify_result: bool | None = None,
    *,
    errors: dict[str, str] | None = None,
    reasoning: dict[str, str] | None = None,
    skipped: dict[str, str] | None = None,
    **scores: Any,
) -> VerificationResult:
    """A result with rubric scores: ``Clarity``/``Safe`` are LLM traits, ``Cites`` a regex
    trait, ``extraction`` a metric trait (a dict of metrics); ``errors`` name traits without
    a value, ``skipped`` dynamic traits that were not graded."""
    by_type: dict[str, dict[str, Any]] = {"llm": {}, "regex": {}, "metric": {}}
    for name, value in scores.items():
        by_type[DEFINITIONS[name].trait_type][name] = value
    names = [*scores, *(errors or {})]
    rubric = VerificationResultRubric(
        rubric_evaluation_performed=True,
        llm_trait_scores=by_type["llm"] or None,
        regex_trait_scores=by_type["regex"] or None,
        metric_trait_scores=by_type["metric"] or None,
        trait_provenance=dict.fromkeys(names, "global"),
        trait_errors=errors,
        llm_trait_reasoning=reasoning,
        dynamic_rubric_skipped_traits=skipped,
    )
    built = result(verify_result)
    return built.model_copy(update={"rubric": rubric})


def verdicts_of(
    *results: VerificationResult, gating: bool = True, rules: tuple[str, ...] = ()
) -> list[Verdict]:
    """The verdicts of ``results`` under the default score threshold and ``rules``."""
    policy = RubricGatePolicy(rules=parse_gate_rules(rules))
    return decide_verdicts(results, DEFINITIONS, policy, gating)
