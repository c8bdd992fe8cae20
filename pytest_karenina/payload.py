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

PAYLOAD_VERSION = 1


def tokens(result: VerificationResult) -> tuple[int, int]:
    usage = (result.template.usage_metadata if result.template else None) or {}
    total = usage.get("total") or {}
    return int(total.get("input_tokens") or 0), int(total.get("output_tokens") or 0)


def category(result: VerificationResult) -> str:
    """pass, verify_fail, abstained, insufficient, no_verdict, or error:<failure category>."""
    meta, template = result.metadata, result.template
    if meta.error or not meta.completed_without_errors:
        return f"error:{meta.failure.category}" if meta.failure else "error:unknown"
    if template is None or template.verify_result is None:
        return "no_verdict"
    if template.verify_result:
        return "pass"
    if template.abstention_detected and template.abstention_override_applied:
        return "abstained"
    if template.sufficiency_detected is False and template.sufficiency_override_applied:
        return "insufficient"
    return "verify_fail"


def result_summary(result: VerificationResult, template_code: str) -> dict[str, Any]:
    template = result.template
    input_tokens, output_tokens = tokens(result)
    granular = template.verify_granular_result if template else None
    return {
        "category": category(result),
        "verify_result": template.verify_result if template else None,
        "granular_score": granular if isinstance(granular, int | float) else None,
        "parsing_model": result.metadata.parsing.model_name,
        "deciding_stage": deciding_stage(result),
        "fields": field_rows(result, template_code),
        "regex": dict(template.regex_validation_results or {}) if template else {},
        "overrides": overrides(result),
        "abstention_reasoning": template.abstention_reasoning if template else None,
        "sufficiency_reasoning": template.sufficiency_reasoning if template else None,
        "error": result.metadata.error,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "raw_response": template.raw_llm_response if template else "",
    }


def build_payload(
    *, nodeid: str, question_id: str, question_text: str, answering_model: str,
    replicate: int | None, template_code: str, results: Sequence[VerificationResult],
    include_trace: bool,
) -> dict[str, Any]:  # fmt: skip
    """The item's payload; ``include_trace`` keeps the raw response in the summaries."""
    summaries = [result_summary(result, template_code) for result in results]
    if not include_trace:
        for summary in summaries:
            summary["raw_response"] = None
    categories = [s["category"] for s in summaries]
    worst = next((c for c in categories if c.startswith("error")), None) or next(
        (c for c in categories if c != "pass"), "pass"
    )
    scores = [s["granular_score"] for s in summaries if s["granular_score"] is not None]
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
        "summaries": summaries,
        "results": [result.model_dump(mode="json") for result in results],
    }


def user_properties(results: Sequence[VerificationResult]) -> list[tuple[str, object]]:
    """Scalar ``karenina.*`` JUnit properties of an item (its first result decides)."""
    if not results:
        return []
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
        ("karenina.category", category(result)),
        ("karenina.input_tokens", input_tokens),
        ("karenina.output_tokens", output_tokens),
    ]
    return [(name, "" if value is None else value) for name, value in found]
