"""The JSON-native ``report.karenina`` payload of an item and its JUnit properties.

Builtins only (xdist ships reports with execnet, which cannot serialise models). The full
result dumps ride along under ``results`` so the controller can stream the export.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pytest_karenina.outcomes import deciding_stage, field_rows, overrides

if TYPE_CHECKING:
    from pytest_karenina.results import VerificationResult
    from pytest_karenina.verdicts import Verdict

PAYLOAD_VERSION = 2


def tokens(result: VerificationResult) -> tuple[int, int]:
    usage = (result.template.usage_metadata if result.template else None) or {}
    total = usage.get("total") or {}
    return int(total.get("input_tokens") or 0), int(total.get("output_tokens") or 0)


def verdict_stage(verdict: Verdict) -> str:
    """The stage that decided: RubricEvaluation when a rubric gate did, else as for the
    template verdict."""
    from pytest_karenina.verdicts import RUBRIC_ERROR, RUBRIC_FAIL

    template = verdict.result.template
    no_template_verdict = template is None or template.verify_result is None
    rubric_decided = verdict.category in (RUBRIC_FAIL, RUBRIC_ERROR) or (
        verdict.category == "pass" and no_template_verdict
    )
    return "RubricEvaluation" if rubric_decided else deciding_stage(verdict.result)


def result_summary(verdict: Verdict, template_code: str) -> dict[str, Any]:
    from pytest_karenina.rubrics.gates import gate_summary
    from pytest_karenina.verdicts import check_dict

    result = verdict.result
    template = result.template
    input_tokens, output_tokens = tokens(result)
    granular = template.verify_granular_result if template else None
    return {
        "category": verdict.category,
        "verify_result": template.verify_result if template else None,
        "granular_score": granular if isinstance(granular, int | float) else None,
        "parsing_model": result.metadata.parsing.model_name,
        "deciding_stage": verdict_stage(verdict),
        "fields": field_rows(result, template_code),
        "regex": dict(template.regex_validation_results or {}) if template else {},
        "overrides": overrides(result),
        "abstention_reasoning": template.abstention_reasoning if template else None,
        "sufficiency_reasoning": template.sufficiency_reasoning if template else None,
        "error": result.metadata.error,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "raw_response": template.raw_llm_response if template else "",
        "rubric": [check_dict(check) for check in verdict.checks],
        "rubric_gates": list(gate_summary(verdict.checks)),
    }


def build_payload(
    *, nodeid: str, question_id: str, question_text: str, answering_model: str,
    replicate: int | None, template_code: str, verdicts: Sequence[Verdict],
    include_trace: bool,
) -> dict[str, Any]:  # fmt: skip
    """The item's payload; ``include_trace`` keeps the raw response in the summaries."""
    summaries = [result_summary(verdict, template_code) for verdict in verdicts]
    if not include_trace:
        for summary in summaries:
            summary["raw_response"] = None
    categories = [s["category"] for s in summaries]
    worst = next((c for c in categories if c.startswith("error")), None) or next(
        (c for c in categories if c != "pass"), "pass"
    )
    scores = [s["granular_score"] for s in summaries if s["granular_score"] is not None]
    passed, gated = (sum(s["rubric_gates"][i] for s in summaries) for i in (0, 1))
    traits = sum(1 for s in summaries for check in s["rubric"] if check["skipped"] is None)
    return {
        "version": PAYLOAD_VERSION,
        "nodeid": nodeid,
        "question_id": question_id,
        "question": question_text,
        "answering_model": answering_model,
        "replicate": replicate,
        "category": worst,
        "score": min(scores) if scores else None,
        "input_tokens": sum(s["input_tokens"] for s in summaries),
        "output_tokens": sum(s["output_tokens"] for s in summaries),
        "rubric": {"passed": passed, "gated": gated, "traits": traits},
        "summaries": summaries,
        "results": [verdict.result.model_dump(mode="json") for verdict in verdicts],
    }


def rubric_properties(verdict: Verdict) -> list[tuple[str, object]]:
    """``karenina.rubric.<trait>`` (metric and template-kind traits: one per part) and
    ``karenina.rubric_gates`` (passed/gated) when traits are gated."""
    from pytest_karenina.rubrics.gates import gate_summary

    found: list[tuple[str, object]] = []
    for check in verdict.checks:
        if check.skipped is not None:
            continue
        key = f"karenina.rubric.{check.name}"
        if isinstance(check.value, dict):
            found.extend((f"{key}.{part}", value) for part, value in check.value.items())
        else:
            found.append((key, check.value))
    passed, gated = gate_summary(verdict.checks)
    if gated:
        found.append(("karenina.rubric_gates", f"{passed}/{gated}"))
    return found


def user_properties(verdicts: Sequence[Verdict]) -> list[tuple[str, object]]:
    """Scalar ``karenina.*`` JUnit properties of an item (its first result decides)."""
    if not verdicts:
        return []
    results = [verdict.result for verdict in verdicts]
    result = results[0]
    template = result.template
    granular = template.verify_granular_result if template else None
    input_tokens = sum(tokens(r)[0] for r in results)
    output_tokens = sum(tokens(r)[1] for r in results)
    found: list[tuple[str, object]] = [
        ("karenina.question_id", result.metadata.question_id),
        ("karenina.verify_result", template.verify_result if template else None),
        ("karenina.granular_score", granular if isinstance(granular, int | float) else None),
        ("karenina.answering_model", result.metadata.answering.model_name),
        ("karenina.parsing_model", ",".join(r.metadata.parsing.model_name for r in results)),
        ("karenina.category", verdicts[0].category),
        ("karenina.input_tokens", input_tokens),
        ("karenina.output_tokens", output_tokens),
        *rubric_properties(verdicts[0]),
    ]
    return [(name, "" if value is None else value) for name, value in found]
