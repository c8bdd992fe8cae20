"""Why an item failed or errored, as compact text instead of a traceback: a false verdict
is a failure (:class:`VerificationFailed`, rendered by ``repr_failure``), a pipeline error an
error (:func:`explain_error`, raised in setup)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pytest

from pytest_karenina.plugin.safe_text import terminal_safe
from pytest_karenina.plugin.verdict.evidence import (
    MAX_HEADLINE_FIELDS,
    MAX_VALUE,
    embedding_line,
    extracted,
    regex_lines,
    regex_reason,
    short,
)
from pytest_karenina.plugin.verdict.outcome import (
    FieldFacts,
    Outcome,
    Verdict,
    error_outcome,
    field_rows,
    overrides,
    overriding_failure,
    template_deciding_stage,
    template_error_of,
)
from pytest_karenina.results.agent_metrics import describe_agent, is_agent_run
from pytest_karenina.results.classify import TEMPLATE_ERROR
from pytest_karenina.rubrics.gates import investigation_finding

if TYPE_CHECKING:
    from pytest_karenina.results import VerificationResult
    from pytest_karenina.rubrics.gates import TraitCheck


class StageListError(RuntimeError):
    """``pytest_karenina_modify_stages`` left a stage list that cannot run (the item errors)."""


class PipelineError(pytest.fail.Exception):  # type: ignore[misc,name-defined]
    """The item's pipeline could not decide (an error of the item, not a failure); raised in
    setup with the explanation as its message.

    A ``pytest.fail`` exception without a traceback, so that pytest shows the explanation
    alone; named ``PipelineError`` in the short summary (``builtins`` as its module is how
    pytest keeps its own outcome exceptions' names short).
    """

    def __init__(self, explanation: str) -> None:
        super().__init__(explanation, pytrace=False)


PipelineError.__module__ = "builtins"


MAX_REASONING = 300


class VerificationFailed(AssertionError):
    """At least one of the item's results failed: a false template verdict or a failed
    rubric gate."""

    def __init__(
        self, verdicts: Sequence[Verdict], facts: FieldFacts, replicates: str | None = None
    ) -> None:
        super().__init__("verification failed")
        self.verdicts = list(verdicts)
        self.facts = facts
        self.replicates = replicates

    def explain(self) -> str:
        """A one-line reason (what pytest's short summary shows), then the vote of the
        replicates (replicate policies) or judge replicates and which side flipped, then every
        failing verdict (every verdict without a vote)."""
        shown = self.verdicts
        if self.replicates is not None:
            shown = [v for v in shown if v.category not in (Outcome.PASS, Outcome.NO_VERDICT)]
        body = "\n\n".join(
            (f"{replicate_label(v.result)}: " if self.replicates else "")
            + explain_verdict(v, self.facts)
            for v in shown
        )
        head = failure_headline(self.verdicts, self.facts)
        if self.replicates is not None:
            head = f"{head}\n{self.replicates}"
        return f"{head}\n{body}"


def failure_headline(verdicts: Sequence[Verdict], facts: FieldFacts) -> str:
    """Why the item failed, in one line: the first failing result's wrong fields (``r_count:
    2 != 3``), its override, or its first failing rubric trait."""
    failing = [v for v in verdicts if v.category not in (Outcome.PASS, Outcome.NO_VERDICT)]
    if not failing:
        return "verification failed"
    reason = result_reason(failing[0], facts)
    more = len(failing) - 1
    return f"{reason} (and {more} more result{'s' if more > 1 else ''})" if more else reason


def result_reason(verdict: Verdict, facts: FieldFacts) -> str:
    """Why one result did not pass, in one line: the template error; the reason of the stage
    that forced a false verdict (``deep judgment: no verbatim quote for codename``,
    ``ToxicityCheck: toxicity_score 0.9``); the override; the wrong fields; the failing
    rubric trait; the failing regex check and its pattern; for ``verify()`` without ground
    truth to compare with, what the judge extracted."""
    if verdict.category is Outcome.TEMPLATE_ERROR:
        return terminal_safe(template_error_of(verdict.result) or "template error")
    if verdict.category.is_error:
        return error_line(verdict.result)
    forced = overriding_failure(verdict)
    template = verdict.result.template
    if template is not None and template.verify_result is False:
        if template.abstention_override_applied:
            return f"abstained: {short(template.abstention_reasoning, MAX_VALUE)}"
        if template.sufficiency_override_applied:
            return f"insufficient answer: {short(template.sufficiency_reasoning, MAX_VALUE)}"
        if forced is not None:
            return terminal_safe(forced.reason)
        rows = field_rows(verdict.result, facts)
        wrong = [r for r in rows if r["passed"] is False or r["differs"]]
        if wrong:
            shown = [
                f"{terminal_safe(r['field'])}: {short(r['parsed'])} != {short(r['expected'])}"
                for r in wrong[:MAX_HEADLINE_FIELDS]
            ]
            extra = len(wrong) - len(shown)
            return "; ".join(shown) + (f"; and {extra} more fields" if extra else "")
        regex = regex_reason(template)
        if regex is not None:
            return regex
        if template.field_verification_error:
            return f"verify() raised: {terminal_safe(template.field_verification_error)}"
        judged = extracted(rows)
        return "verify() returned False" + (f" on {judged}" if judged else "")
    if forced is not None:
        return terminal_safe(forced.reason)
    if verdict.failing_traits:
        check = verdict.failing_traits[0]
        return f"rubric {terminal_safe(check.name)}: {short(check.value)}, needs {check.bound}"
    return str(verdict.category)


def explain_verdict(verdict: Verdict, facts: FieldFacts) -> str:
    """The template explanation (when there is a template verdict), then failing traits."""
    result = verdict.result
    if result.template is not None and result.template.verify_result is not None:
        lines = [explain_result(result, facts, verdict.embedding_threshold)]
    else:
        lines = [f"rubric verdict: {verdict.category}", f"  {_models(result)}"]
        lines.extend(deep_judgment_lines(result))
    lines.extend(rubric_explanation(verdict))
    return "\n".join(lines)


def explain_unmeasured(verdicts: Sequence[Verdict]) -> str:
    """Why gated rubric traits have no value, per result, and the rule that would decide
    without them."""
    lines = []
    names: dict[str, None] = {}
    for verdict in verdicts:
        lines.append("rubric traits that decide the verdict could not be measured:")
        lines.extend(trait_check_line(check) for check in verdict.unmeasured_traits)
        lines.append(f"  {_models(verdict.result)}")
        names.update(dict.fromkeys(check.name for check in verdict.unmeasured_traits))
    rules = terminal_safe(", ".join(f"{name} off" for name in names))
    lines.append(f"  to decide without them: --karenina-rubric-gates='{rules}'")
    return "\n".join(lines)


def error_line(result: VerificationResult) -> str:
    """Why the pipeline of ``result`` could not decide, in one line: stage, category and
    message of its error, or the template error (the template's code raised)."""
    meta = result.metadata
    fault = template_error_of(result)
    if fault is not None and not meta.error and meta.completed_without_errors:
        return terminal_safe(fault)
    failure = meta.failure
    category = error_outcome(result).removeprefix("error:")  # as the outcome counts it
    where = f" in {failure.stage} ({category})" if failure else ""
    return f"error{where}: {terminal_safe(meta.error or 'unknown error')}"


def explain_error(results: Sequence[VerificationResult]) -> str:
    """Why the pipeline could not decide, per result: :func:`error_line`, then the models."""
    lines = []
    for result in results:
        line = error_line(result)
        lines += [line, f"  {_models(result)}"]
        if line.startswith(TEMPLATE_ERROR):
            lines.append("  the template's code raised: a broken benchmark, not a wrong answer")
    return "\n".join(lines)


def replicate_label(result: VerificationResult) -> str:
    """``replicate 2``, ``judge replicate 3``, ``replicate 2, judge replicate 3`` or
    ``result`` (neither)."""
    parts = []
    if result.metadata.replicate is not None:
        parts.append(f"replicate {result.metadata.replicate}")
    if result.judge_replicate is not None:
        parts.append(f"judge replicate {result.judge_replicate}")
    return ", ".join(parts) or "result"


def _models(result: VerificationResult) -> str:
    meta = result.metadata
    replicate = f", replicate {meta.replicate}" if meta.replicate is not None else ""
    if result.judge_replicate is not None:
        replicate += f", judge replicate {result.judge_replicate}"
    return terminal_safe(
        f"answering {meta.answering.model_name} ({meta.answering.interface}), "
        f"parsing {meta.parsing.model_name}{replicate}"
    )


def explain_result(
    result: VerificationResult, facts: FieldFacts, embedding_threshold: float | None = None
) -> str:
    """The template verdict: the deciding stage, the models, each field (expected ``-``
    without ground truth), the regex checks with their patterns, the checks' reasoning, the
    embedding check's similarity (against ``embedding_threshold``), the overrides."""
    template = result.template
    verdict = template.verify_result if template else None
    granular = template.verify_granular_result if template else None
    score = f", granular score {granular:.2f}" if isinstance(granular, int | float) else ""
    lines = [f"verify_result {verdict} (decided by {template_deciding_stage(result)}){score}"]
    lines.append(f"  {_models(result)}")
    rows = field_rows(result, facts)
    if rows:
        lines.append("  field | expected | parsed | primitive | result")
        for row in rows:
            mark = {True: "pass", False: "FAIL", None: "-"}[row["passed"]]
            if row["differs"] is not None:
                mark = "differs" if row["differs"] else "same"
            expected = short(row["expected"]) if "expected" in row else "-"
            lines.append(
                f"  {terminal_safe(row['field'])} | {expected} | "
                f"{short(row['parsed'])} | {row['primitive'] or '-'} | {mark}"
            )
    if template is not None:
        lines.extend(regex_lines(template))
        embedding = embedding_line(template, embedding_threshold)
        lines.extend([embedding] if embedding is not None else [])
    if template is not None and template.abstention_detected:
        lines.append(f"  abstention: {short(template.abstention_reasoning, MAX_REASONING)}")
    if template is not None and template.sufficiency_detected is False:
        lines.append(f"  insufficient: {short(template.sufficiency_reasoning, MAX_REASONING)}")
    if template is not None and template.field_verification_error:
        lines.append(f"  verify() raised: {terminal_safe(template.field_verification_error)}")
    lines.extend(f"  override: {terminal_safe(text)}" for text in overrides(result))
    lines.extend(deep_judgment_lines(result))
    metrics = template.agent_metrics if template is not None else None
    if metrics is not None and is_agent_run(metrics):
        lines.append(f"  agent: {terminal_safe(describe_agent(metrics))}")
    if template is not None and template.agentic_parsing_performed:
        lines.append("  agentic judge: its investigation is in template.investigation_trace")
    for name, value in (result.custom_fields or {}).items():
        lines.append(f"  {terminal_safe(name)} (custom stage): {short(value)}")
    return "\n".join(lines)


def deep_judgment_lines(result: VerificationResult) -> list[str]:
    """Deep judgment's notes: what it could not quote, and the quotes it rejected."""
    return [
        f"  {terminal_safe(warning)}"
        for warning in result.metadata.warnings
        if warning.startswith("deep judgment: ")
    ]


def trait_check_line(check: TraitCheck) -> str:
    """``  trait Clarity (llm score 1-5): 2, needs >= 3 (of 1-5); judge: ...``"""
    if check.error is not None:
        text = f"no value ({terminal_safe(check.error)})"
    else:
        text = short(check.value)
        if check.bound:
            text += f", needs {check.bound}"
    line = f"  trait {terminal_safe(check.name)} ({check.kind}): {text}"
    if check.reasoning:
        reasoning = check.reasoning
        if check.kind.startswith("agentic"):  # the whole investigation: its conclusion
            reasoning = investigation_finding(reasoning)
        line += f"; judge: {short(reasoning, MAX_REASONING)}"
    return line


def rubric_explanation(verdict: Verdict) -> list[str]:
    """Lines naming each failing (or unmeasured) gated trait with value, bound and reasoning
    (as rubric traits, not a gate, when the traits do not take part in the verdict)."""
    failing, unmeasured = verdict.failing_traits, verdict.unmeasured_traits
    gated = sum(1 for check in verdict.checks if check.gated)
    lines: list[str] = []
    if verdict.gating:
        if failing:
            lines.append(f"  rubric gate: {len(failing)} of {gated} gated traits failed")
        if unmeasured:
            lines.append(f"  rubric gate: {len(unmeasured)} of {gated} gated traits have no value")
    else:  # the traits did not decide the verdict: what they scored, and no gate
        if failing:
            lines.append(f"  rubric traits: {len(failing)} of {gated} failed their bounds "
                         "(reported only: --karenina-rubric-gate makes them decide)")  # fmt: skip
        if unmeasured:
            lines.append(f"  rubric traits: {len(unmeasured)} of {gated} have no value")
    lines.extend(trait_check_line(check) for check in [*unmeasured, *failing])
    return lines
