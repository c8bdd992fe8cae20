"""Classifying a finished pipeline run: ``metadata.failure``, caveats and warnings.

The functions take plain values, not a pipeline context, so that this layer stays at the bottom
of the engine and every rule can be tested in isolation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from pytest_karenina.results.failure import Caveat, Failure, FailureCategory, trim_reason

AUTOFAIL_STAGE_CATEGORIES: Mapping[str, FailureCategory] = MappingProxyType(
    {
        "RecursionLimitAutoFail": "recursion_limit",
        "TraceValidationAutoFail": "trace_validation",
        "DeepJudgmentAutoFail": "deep_judgment",
        "DeepJudgmentRubricAutoFail": "deep_judgment_rubric",
        # The placeholder means the agent's own retries against the provider ran out.
        "PlaceholderRetryAutoFail": "connection",
    }
)
"""Auto-fail stage name (``failed_stage``) -> failure category (rule 1)."""

RETRY_CATEGORIES: Mapping[str, FailureCategory] = MappingProxyType(
    {name: name for name in ("timeout", "connection", "rate_limit", "server_error")}
)
"""Error categories that are retried and become a failure once the budget is spent (rule 3)."""

PARSE_STAGES = frozenset({"ParseTemplate", "AgenticParseTemplate", "DynamicParseTemplate"})
"""Stage names whose errors are ``parsing`` failures (rule 7); snake_case spellings also match."""

MAX_WARNINGS = 50

TEMPLATE_ERROR = "template error: "
"""How the warning of an exception in template code starts (VerifyTemplate writes one per
exception from ``verify()``, ``verify_granular()`` or a regex pattern: the method, the
exception and the template's line)."""
_FIELD_ERROR = "Field verification failed: "


def classify_failure(
    *,
    failed_stage: str | None = None,
    template_verification_performed: bool = False,
    verify_result: bool | None = None,
    error: str | None = None,
    error_stage: str | None = None,
    error_category: str | None = None,
    retry_counts: Mapping[str, Mapping[str, int | None]] | None = None,
    time_budget_spent: bool = False,
    abstention_detected: bool | None = None,
    abstention_reasoning: str | None = None,
    sufficiency_detected: bool | None = None,
    sufficiency_reasoning: str | None = None,
    template_validation_error: str | None = None,
    last_stage: str | None = None,
    deciding_stage: str | None = None,
    stage_reasons: Mapping[str, str] | None = None,
) -> Failure | None:
    """Map the final state of a run to a :class:`Failure`, or None for a pass (first match wins).

    1. ``failed_stage`` is an auto-fail stage -> its category (:data:`AUTOFAIL_STAGE_CATEGORIES`),
       with the reason the stage gave (``stage_reasons``) when it gave one;
    2. ``template_verification_performed`` and ``verify_result is False`` -> ``content``;
       stage ``verify_template``, unless ``deciding_stage`` (the last stage that changed the
       verdict) is another one, e.g. a custom stage: then that stage, and as reason
       ``"<stage>: <its reason>"`` (or ``"<stage> set verify_result to False"``);
    3. ``error_category`` is transient and its ``retry_counts`` entry has ``used >= budget``
       -> that category (:data:`RETRY_CATEGORIES`); ``time_budget_spent`` (a call gave up
       because its whole time budget ran out, pytest-karenina's ``max_call_seconds``)
       -> ``timeout``;
    4. ``abstention_detected`` -> ``abstention``;
    5. ``sufficiency_detected is False`` (the response was *insufficient*) -> ``sufficiency``;
    6. ``template_validation_error`` -> ``template_validation``;
    7. ``error`` raised in a parse stage (:data:`PARSE_STAGES`, either spelling) -> ``parsing``;
    8. any other ``error`` -> ``unexpected_error``.

    ``error_stage`` is the stage that recorded ``error``; ``last_stage`` (the last stage that
    ran) stands in for it when unknown. Whenever ``error`` is set, ``details["error_message"]``
    holds it in full, whatever the category, so ``metadata.error`` survives an export.
    """
    base: dict[str, Any] = {"error_message": error} if error else {}

    def make(category: FailureCategory, stage: str, reason: str, **details: Any) -> Failure:
        merged = {**base, **details}
        return Failure(category=category, stage=stage, reason=reason, details=merged or None)

    reasons = stage_reasons or {}
    if failed_stage is not None and failed_stage in AUTOFAIL_STAGE_CATEGORIES:
        category = AUTOFAIL_STAGE_CATEGORIES[failed_stage]
        own = trim_reason(reasons.get(failed_stage))
        return make(category, failed_stage, own or f"auto-fail at stage {failed_stage}")

    if template_verification_performed and verify_result is False:
        if deciding_stage is None or deciding_stage in ("VerifyTemplate", "verify_template"):
            return make("content", "verify_template", "verify_template returned False")
        told = reasons.get(deciding_stage)
        said = (
            f"{deciding_stage}: {told}" if told else f"{deciding_stage} set verify_result to False"
        )
        return make("content", deciding_stage, trim_reason(said))

    stage = error_stage or last_stage or "unknown"
    if error and time_budget_spent:
        return make(
            "timeout", stage, "the call's time budget was spent",
            retry_counts={k: dict(v) for k, v in (retry_counts or {}).items()},
        )  # fmt: skip
    retry_category = RETRY_CATEGORIES.get(error_category or "")
    if retry_category is not None and _retries_exhausted(retry_category, retry_counts):
        category = retry_category
        return make(
            category,
            stage,
            f"{category} retries exhausted",
            retry_counts={k: dict(v) for k, v in (retry_counts or {}).items()},
        )

    if abstention_detected:
        reason = trim_reason(abstention_reasoning) or "model abstained"
        return make("abstention", "abstention_check", reason)

    if sufficiency_detected is False:
        reason = trim_reason(sufficiency_reasoning) or "insufficient response"
        return make("sufficiency", "sufficiency_check", reason)

    if template_validation_error:
        reason = trim_reason(template_validation_error) or "template validation failed"
        return make(
            "template_validation",
            "validate_template",
            reason,
            template_validation_error=template_validation_error,
        )

    if error and _is_parse_stage(error_stage):
        return make("parsing", stage, trim_reason(error) or "parse failed")

    if error:
        return make("unexpected_error", stage, trim_reason(error) or "unexpected error")

    return None


def _retries_exhausted(
    error_category: str, retry_counts: Mapping[str, Mapping[str, int | None]] | None
) -> bool:
    entry = (retry_counts or {}).get(error_category)
    if not entry:
        return False
    return (entry.get("used") or 0) >= (entry.get("budget") or 0)


def _is_parse_stage(stage: str | None) -> bool:
    if stage is None:
        return False
    camel = "".join(part.capitalize() for part in stage.split("_")) if "_" in stage else stage
    return camel in PARSE_STAGES


def collect_caveats(
    *,
    response_timeout_partial: bool = False,
    embedding_override_applied: bool = False,
    parse_decision_malformed: bool = False,
    retry_counts: Mapping[str, Mapping[str, int | None]] | None = None,
) -> list[Caveat]:
    """The caveats of a finished run, in Karenina's order.

    ``retries_used`` is emitted when any ``retry_counts`` entry has ``used > 0``.
    """
    caveats: list[Caveat] = []
    if response_timeout_partial:
        caveats.append("partial_content")
    if embedding_override_applied:
        caveats.append("embedding_override")
    if parse_decision_malformed:
        caveats.append("parse_decision_malformed")
    if any((entry.get("used") or 0) > 0 for entry in (retry_counts or {}).values()):
        caveats.append("retries_used")
    return caveats


def cap_warnings(warnings: Iterable[str], limit: int = MAX_WARNINGS) -> list[str]:
    """At most ``limit`` warnings, plus one ``"... N more warnings truncated"`` marker line."""
    items = list(warnings)
    if len(items) <= limit:
        return items
    return [*items[:limit], f"... {len(items) - limit} more warnings truncated"]


def template_error(warnings: Iterable[str], field_verification_error: str | None) -> str | None:
    """The first template error of a result, in one line: its :data:`TEMPLATE_ERROR`
    warning; for a result without one (from Karenina, say), made from
    ``field_verification_error``, which says what ``verify()`` raised (no line). None when
    the template's code raised nothing."""
    found = next((w for w in warnings if w.startswith(TEMPLATE_ERROR)), None)
    if found is not None or not field_verification_error:
        return found
    raised = " ".join(field_verification_error.removeprefix(_FIELD_ERROR).split())
    return f"{TEMPLATE_ERROR}verify() raised {raised}"
