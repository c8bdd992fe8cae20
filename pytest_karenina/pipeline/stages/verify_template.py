"""Stage 8, VerifyTemplate: deterministic verification of the parsed answer."""

from __future__ import annotations

import logging
from typing import Any

from pytest_karenina.pipeline.artifacts import ArtifactKeys
from pytest_karenina.pipeline.context import VerificationContext
from pytest_karenina.pipeline.stage import BaseVerificationStage
from pytest_karenina.pipeline.stages.context_queries import (
    abstained,
    recursion_limited,
    template_seconds,
)
from pytest_karenina.results.classify import TEMPLATE_ERROR
from pytest_karenina.templates import BaseAnswer, RegexReport, evaluate_fields, strategy_label
from pytest_karenina.templates.compiler import describe_exception, template_line
from pytest_karenina.templates.composition import template_strategy
from pytest_karenina.templates.extraction import parsed_gt_response, parsed_llm_response
from pytest_karenina.templates.primitives import SemanticMatchUnavailable
from pytest_karenina.templates.time_limit import time_limit

logger = logging.getLogger("pytest_karenina.pipeline")


def template_fault(call: str, exc: BaseException, code: str) -> str:
    """The warning of an exception raised by template code: ``template error: verify()
    raised AttributeError: ... (template line 12)`` (no line when no frame is the
    template's, e.g. a primitive raised)."""
    line = template_line(exc, code)
    where = f" (template line {line})" if line is not None else ""
    return f"{TEMPLATE_ERROR}{call} raised {describe_exception(exc)}{where}"


def _field_verdict(parsed: BaseAnswer, code: str) -> tuple[bool, str | None, str | None]:
    """``(verdict, field_verification_error, template error warning)``."""
    verify = getattr(parsed, "verify", None)
    if verify is None:  # regex-only templates may leave verify() out
        return True, None, None
    try:
        outcome = verify()
    except SemanticMatchUnavailable:
        raise  # no embedding model: the question cannot be judged here, not a wrong answer
    except Exception as exc:
        error = f"Field verification failed: {type(exc).__name__}: {exc}"
        return False, error, template_fault("verify()", exc, code)
    if not isinstance(outcome, bool):
        logger.warning("verify() returned %r, not a bool; using its truth value", outcome)
    return bool(outcome), None, None


def _unusable_patterns(regex: RegexReport) -> list[str]:
    """A template error per regex check whose pattern could not be applied (its detail has
    no ``matches_found``, and its ``failure_reason`` says why)."""
    return [
        f"{TEMPLATE_ERROR}regex check {name!r}: {detail.get('failure_reason')}"
        for name, detail in regex["details"].items()
        if "matches_found" not in detail
    ]


class VerifyTemplateStage(BaseVerificationStage):
    """``verify_result = verify() AND regex checks``, plus per-field results,
    the granular score and the regex details.

    An exception from ``verify()`` leaves the seed's fields as the seed says
    (``verify_result`` False, ``field_verification_error`` set, no granular score,
    ``completed_without_errors`` True); like an exception from ``verify_granular()`` or a
    regex pattern that cannot run, it is also a warning starting ``template error: ``
    with the exception and the template's line: a broken benchmark, which the reports
    show as an error, not as a wrong answer.
    """

    @property
    def name(self) -> str:
        return "VerifyTemplate"

    @property
    def requires(self) -> list[str]:
        return [ArtifactKeys.PARSED_ANSWER]

    @property
    def produces(self) -> list[str]:
        return [ArtifactKeys.VERIFY_RESULT, ArtifactKeys.FIELD_VERIFICATION_RESULT]

    def should_run(self, context: VerificationContext) -> bool:
        return (
            super().should_run(context)
            and context.has_artifact(ArtifactKeys.PARSED_ANSWER)
            and not abstained(context)
            and not recursion_limited(context)
        )

    def execute(self, context: VerificationContext) -> None:
        with time_limit(template_seconds(context), "verifying the answer (verify())"):
            self._verify(context)

    def _verify(self, context: VerificationContext) -> None:
        parsed: BaseAnswer = context.get_artifact(ArtifactKeys.PARSED_ANSWER)
        raw = str(context.get_artifact(ArtifactKeys.RAW_LLM_RESPONSE, ""))
        parsed._raw_trace = raw
        node_results = context.get_artifact(ArtifactKeys.SCENARIO_NODE_RESULTS)
        if node_results is not None:  # a scenario turn: the earlier nodes' results, by node
            parsed._scenario_context = {"node_results": node_results}
        code = type(parsed)._source_code or context.template_code
        field_ok, error, fault = _field_verdict(parsed, code)
        regex = parsed.verify_regex(raw)
        context.warnings.extend([fault] if fault else [])
        context.warnings.extend(_unusable_patterns(regex))
        results: dict[str, Any] = {
            ArtifactKeys.FIELD_VERIFICATION_ERROR: error,
            ArtifactKeys.REGEX_VALIDATIONS_PERFORMED: bool(regex["results"]),
            ArtifactKeys.REGEX_VALIDATION_RESULTS: regex["results"],
            ArtifactKeys.REGEX_VALIDATION_DETAILS: regex["details"],
            ArtifactKeys.REGEX_OVERALL_SUCCESS: regex["success"],
            ArtifactKeys.REGEX_EXTRACTION_RESULTS: {
                name: detail.get("matches_found") for name, detail in regex["details"].items()
            },
            ArtifactKeys.VERIFY_RESULT: field_ok and regex["success"],
            ArtifactKeys.TEMPLATE_VERIFICATION_PERFORMED: True,
            ArtifactKeys.PARSED_LLM_RESPONSE: parsed_llm_response(parsed),
            ArtifactKeys.PARSED_GT_RESPONSE: parsed_gt_response(parsed),
            ArtifactKeys.VERIFY_GRANULAR_RESULT: None,
        }
        if type(parsed).verified_fields():
            results.update(_field_details(parsed))
        if error is None and hasattr(parsed, "verify_granular"):
            try:
                results[ArtifactKeys.VERIFY_GRANULAR_RESULT] = parsed.verify_granular()
            except Exception as exc:
                context.warnings.append(template_fault("verify_granular()", exc, code))
        context.set_artifact(ArtifactKeys.FIELD_VERIFICATION_RESULT, field_ok)
        for key, value in results.items():
            context.set_artifact_and_result(key, value)


def _field_details(parsed: BaseAnswer) -> dict[str, Any]:
    try:
        outcomes = evaluate_fields(parsed)
    except Exception:  # verify() already reported the same failure
        return {}
    return {
        ArtifactKeys.FIELD_RESULTS: {name: o.result for name, o in outcomes.items()},
        ArtifactKeys.FIELD_SCORES: {name: o.score for name, o in outcomes.items()},
        ArtifactKeys.COMPOSITION_STRATEGY: strategy_label(template_strategy(type(parsed))),
    }
