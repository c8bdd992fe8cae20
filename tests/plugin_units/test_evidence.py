"""The evidence lines of a template verdict: extracted values without ground truth, regex
checks with their patterns, the embedding check against its threshold."""

from __future__ import annotations

from typing import Any

from pytest_karenina.plugin.verdict.evidence import (
    embedding_line,
    extracted,
    regex_lines,
    regex_reason,
)
from pytest_karenina.results.template import VerificationResultTemplate
from pytest_karenina.templates.regex_checks import run_regex_checks


def test_extracted_lists_only_fields_without_ground_truth() -> None:
    rows: list[dict[str, Any]] = [
        {"field": "capital", "expected": "Paris", "parsed": "Lyon"},
        *({"field": f"f{i}", "parsed": i} for i in range(5)),
    ]
    assert extracted(rows) == "f0: 0; f1: 1; f2: 2; and 2 more fields"
    assert extracted(rows[:1]) is None


def regex_template(trace: str, **checks: dict[str, Any]) -> VerificationResultTemplate:
    report = run_regex_checks(checks, trace)
    return VerificationResultTemplate(
        regex_validation_results=report["results"], regex_validation_details=report["details"]
    )


def test_regex_checks_name_their_patterns() -> None:
    template = regex_template(
        "See [1] and [2].",
        cited={"pattern": r"\[\d+\]", "expected": 2, "match_type": "count"},
        year={"pattern": r"\d{4}", "expected": "2024", "match_type": "exact"},
    )
    assert regex_lines(template) == [
        r"  regex cited: pass: /\[\d+\]/ (count)",
        r"  regex year: FAIL: /\d{4}/ (exact): expected exactly one match equal to '2024', "
        "found 0: []",
    ]
    assert regex_reason(template) == (
        r"regex year /\d{4}/ did not match: expected exactly one match equal to '2024', "
        "found 0: []"
    )


def test_a_regex_check_without_details_is_named() -> None:
    template = VerificationResultTemplate(regex_validation_results={"a": False, "b": False})
    assert regex_reason(template) == "regex a, b did not match"
    assert regex_lines(template) == ["  regex a: FAIL", "  regex b: FAIL"]


def embedded(score: float | None, **fields: Any) -> VerificationResultTemplate:
    return VerificationResultTemplate(
        embedding_check_performed=True, embedding_similarity_score=score,
        embedding_model_used="all-MiniLM-L6-v2", **fields,
    )  # fmt: skip


def test_the_embedding_check_against_its_threshold() -> None:
    assert embedding_line(embedded(0.72), 0.8) == (
        "  embedding check: similarity 0.720 below the threshold 0.8 (all-MiniLM-L6-v2): "
        "the judge was not asked"
    )
    assert embedding_line(embedded(0.84), 0.8) == (
        "  embedding check: similarity 0.840 at or above the threshold 0.8 (all-MiniLM-L6-v2), "
        "but the judge did not find the answers equivalent"
    )
    assert embedding_line(embedded(0.84), None) == (
        "  embedding check: similarity 0.840 (all-MiniLM-L6-v2): not rescued"
    )
    assert embedding_line(embedded(None), 0.8) == (
        "  embedding check: no similarity (all-MiniLM-L6-v2 could not run)"
    )
    assert embedding_line(embedded(0.95, embedding_override_applied=True), 0.8) is None
    assert embedding_line(VerificationResultTemplate(), 0.8) is None
