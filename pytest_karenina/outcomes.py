"""Item outcomes and their explanations: a false verdict is a failure (VerificationFailed,
rendered by ``repr_failure``), a pipeline error an error (``explain_error`` text raised in
setup), both as compact text instead of a traceback."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_karenina.results import VerificationResult
    from pytest_karenina.verdicts import Verdict

MAX_VALUE = 60
MAX_REASONING = 300


class VerificationFailed(AssertionError):
    """At least one of the item's results failed: a false template verdict or a failed
    rubric gate."""

    def __init__(self, verdicts: Sequence[Verdict], template_code: str) -> None:
        super().__init__("verification failed")
        self.verdicts = list(verdicts)
        self.template_code = template_code

    def explain(self) -> str:
        return "\n\n".join(explain_verdict(v, self.template_code) for v in self.verdicts)


def explain_verdict(verdict: Verdict, template_code: str) -> str:
    """The template explanation (when there is a template verdict), then failing traits."""
    from pytest_karenina.verdicts import rubric_explanation

    result = verdict.result
    if result.template is not None and result.template.verify_result is not None:
        lines = [explain_result(result, template_code)]
    else:
        lines = [f"rubric verdict: {verdict.category}", f"  {_models(result)}"]
    lines.extend(rubric_explanation(verdict))
    return "\n".join(lines)


def explain_unmeasured(verdicts: Sequence[Verdict]) -> str:
    """Why gated rubric traits have no value, per result."""
    from pytest_karenina.verdicts import trait_line

    lines = []
    for verdict in verdicts:
        lines.append("rubric traits that decide the verdict could not be measured:")
        lines.extend(trait_line(check) for check in verdict.unmeasured_traits)
        lines.append(f"  {_models(verdict.result)}")
    return "\n".join(lines)


def explain_error(results: Sequence[VerificationResult]) -> str:
    """Why the pipeline could not decide, per result: stage, category, message."""
    lines = []
    for result in results:
        failure = result.metadata.failure
        where = f" in {failure.stage} ({failure.category})" if failure else ""
        lines.append(f"pipeline error{where}: {result.metadata.error or 'unknown error'}")
        lines.append(f"  {_models(result)}")
    return "\n".join(lines)


def short(value: Any, limit: int = MAX_VALUE) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = repr(text) if isinstance(value, str) else text
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _models(result: VerificationResult) -> str:
    meta = result.metadata
    replicate = f", replicate {meta.replicate}" if meta.replicate is not None else ""
    return (
        f"answering {meta.answering.model_name} ({meta.answering.interface}), "
        f"parsing {meta.parsing.model_name}{replicate}"
    )


def field_rows(result: VerificationResult, template_code: str) -> list[dict[str, Any]]:
    """One row per judged field: name, expected, parsed, primitive, passed (None: no verdict)."""
    template = result.template
    if template is None:
        return []
    expected = template.parsed_gt_response or {}
    parsed = template.parsed_llm_response or {}
    outcome = template.field_results or {}
    primitives = primitive_names(template_code)
    names = [*outcome] + [n for n in expected if n not in outcome]
    return [
        {
            "field": name,
            "expected": expected.get(name),
            "parsed": parsed.get(name),
            "primitive": primitives.get(name),
            "passed": outcome.get(name),
        }
        for name in names
    ]


def primitive_names(code: str) -> dict[str, str]:
    """Field -> primitive class name, from the template (compiled classes are cached)."""
    from pytest_karenina.templates import TemplateError, compile_template

    try:
        answer_class = compile_template(code)
    except TemplateError:
        return {}
    return {
        name: type(meta.verify_with).__name__
        for name, meta in answer_class.verified_fields().items()
        if meta.verify_with is not None
    }


def overrides(result: VerificationResult) -> list[str]:
    template = result.template
    if template is None:
        return []
    found = []
    if template.abstention_override_applied:
        found.append("abstention detected: verdict forced to false")
    if template.sufficiency_override_applied:
        found.append("insufficient response: verdict forced to false")
    if template.embedding_override_applied:
        score = template.embedding_similarity_score
        found.append(f"embedding check rescued the answer (similarity {score:.3f})")
    return found


def deciding_stage(result: VerificationResult) -> str:
    template = result.template
    if template is not None:
        if template.abstention_override_applied:
            return "AbstentionCheck"
        if template.sufficiency_override_applied:
            return "SufficiencyCheck"
        if template.recursion_limit_reached:
            return "RecursionLimitAutoFail"
        if template.embedding_override_applied:
            return "EmbeddingCheck"
    failure = result.metadata.failure
    if failure is None:
        return "VerifyTemplate"
    # Failure records name stages in snake case (verify_template); show the class-style name.
    stage = failure.stage
    return "".join(part.capitalize() for part in stage.split("_")) if stage.islower() else stage


def explain_result(result: VerificationResult, template_code: str) -> str:
    template = result.template
    verdict = template.verify_result if template else None
    granular = template.verify_granular_result if template else None
    score = f", granular score {granular:.2f}" if isinstance(granular, int | float) else ""
    lines = [f"verify_result {verdict} (decided by {deciding_stage(result)}){score}"]
    lines.append(f"  {_models(result)}")
    rows = field_rows(result, template_code)
    if rows:
        lines.append("  field | expected | parsed | primitive | result")
        for row in rows:
            mark = {True: "pass", False: "FAIL", None: "-"}[row["passed"]]
            lines.append(
                f"  {row['field']} | {short(row['expected'])} | {short(row['parsed'])} | "
                f"{row['primitive'] or '-'} | {mark}"
            )
    if template is not None and template.regex_validation_results:
        for name, ok in template.regex_validation_results.items():
            lines.append(f"  regex {name}: {'pass' if ok else 'FAIL'}")
    if template is not None and template.abstention_detected:
        lines.append(f"  abstention: {short(template.abstention_reasoning, MAX_REASONING)}")
    if template is not None and template.sufficiency_detected is False:
        lines.append(f"  insufficient: {short(template.sufficiency_reasoning, MAX_REASONING)}")
    if template is not None and template.field_verification_error:
        lines.append(f"  verify() raised: {template.field_verification_error}")
    lines.extend(f"  override: {text}" for text in overrides(result))
    return "\n".join(lines)
