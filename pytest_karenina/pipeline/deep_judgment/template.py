"""Template deep judgment as a whole: the parse ParseTemplate runs when it is on.

:func:`deep_parse` gathers quoted evidence and reasons from it (:mod:`calls`), with search
rates each quote's hallucination risk (:mod:`search`), then parses the reasoning into the
template. :class:`TemplateDeepJudgment` is what the ``deep_judgment`` result section and
stage 10 read; :func:`deep_judgment_artifacts` the artifacts later stages read (seed 002).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_karenina.llm.ports import ChatPort, StructuredPort
from pytest_karenina.pipeline.artifacts import ArtifactKeys
from pytest_karenina.pipeline.deep_judgment.calls import (
    DeepJudgmentCalls,
    ExcerptSettings,
    excerpt_attributes,
    gather_excerpts,
    reason,
)
from pytest_karenina.pipeline.deep_judgment.excerpts import ungrounded_line
from pytest_karenina.pipeline.deep_judgment.search import (
    HALLUCINATION_USAGE,
    SearchFunction,
    attach_search_results,
    rate_excerpts,
)
from pytest_karenina.prompts.deep_judgment import (
    EXCERPT_TASK,
    HALLUCINATION_TASK,
    REASONING_ONLY_TASK,
    REASONING_TASK,
    final_parse_messages,
)
from pytest_karenina.templates import BaseAnswer
from pytest_karenina.templates.judge_schema import shared_judge_schema

DEEP_JUDGMENT = "deep_judgment_outcome"
"""Artifact: the item's :class:`TemplateDeepJudgment`, when ParseTemplate ran it."""

NOT_PERFORMED: dict[str, Any] = {
    ArtifactKeys.DEEP_JUDGMENT_PERFORMED: False,
    ArtifactKeys.EXTRACTED_EXCERPTS: None,
    ArtifactKeys.ATTRIBUTE_REASONING: None,
    ArtifactKeys.DEEP_JUDGMENT_STAGES_COMPLETED: None,
    ArtifactKeys.DEEP_JUDGMENT_MODEL_CALLS: 0,
    ArtifactKeys.DEEP_JUDGMENT_EXCERPT_RETRY_COUNT: 0,
    ArtifactKeys.ATTRIBUTES_WITHOUT_EXCERPTS: None,
    ArtifactKeys.HALLUCINATION_RISK_ASSESSMENT: None,
}
"""The deep-judgment artifacts of a parse without deep judgment (Karenina's values)."""


@dataclass
class TemplateDeepJudgment:
    """One template deep-judgment parse: the reply to the final parse and what the
    ``deep_judgment`` result section records."""

    mode: str
    threshold: float = 0.8
    reply: Any = None
    extracted_excerpts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    attribute_reasoning: dict[str, str] = field(default_factory=dict)
    stages_completed: list[str] = field(default_factory=list)
    retries: int = 0
    missing: list[str] = field(default_factory=list)
    rejected: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)
    """Per attribute, how many entries of the final excerpt reply were not read."""
    warnings: list[str] = field(default_factory=list)
    calls: DeepJudgmentCalls = field(default_factory=DeepJudgmentCalls)
    search_enabled: bool = False
    risks: dict[str, str] = field(default_factory=dict)

    def ungrounded(self) -> list[str]:
        """Per missing attribute, why: its rejected quotes with their similarity, or none."""
        return [
            ungrounded_line(
                name, self.rejected.get(name, []), self.threshold, self.dropped.get(name, 0)
            )
            for name in self.missing
        ]

    def section_fields(self) -> dict[str, Any]:
        """The fields of ``VerificationResultDeepJudgment``."""
        return {
            "deep_judgment_mode": self.mode,
            "deep_judgment_enabled": True,
            "deep_judgment_performed": "parameters" in self.stages_completed,
            "extracted_excerpts": self.extracted_excerpts,
            "attribute_reasoning": self.attribute_reasoning,
            "deep_judgment_stages_completed": list(self.stages_completed),
            "deep_judgment_model_calls": self.calls.count,
            "deep_judgment_excerpt_retry_count": self.retries,
            "attributes_without_excerpts": list(self.missing),
            "deep_judgment_search_enabled": self.search_enabled,
            "hallucination_risk_assessment": self.risks or None,
        }


def deep_judgment_artifacts(outcome: TemplateDeepJudgment | None) -> dict[str, Any]:
    """The deep-judgment artifacts of a parse: the values of ``outcome``'s result section
    (:data:`NOT_PERFORMED` when the parse had no deep judgment)."""
    if outcome is None:
        return dict(NOT_PERFORMED)
    fields = outcome.section_fields()
    return {key: fields[key] for key in NOT_PERFORMED}


def deep_parse(
    judge: ChatPort,
    parser: StructuredPort,
    question: str,
    response: str,
    answer_class: type[BaseAnswer],
    extraction_class: type[BaseAnswer],
    *,
    mode: str,
    settings: ExcerptSettings,
    extraction_hints: Mapping[str, str] | None = None,
    instructions: Mapping[str, str | None] | None = None,
    search: SearchFunction | None = None,
    outcome: TemplateDeepJudgment | None = None,
    extraction_schema: dict[str, Any] | None = None,
) -> TemplateDeepJudgment:
    """Parse ``response`` into ``extraction_class`` through deep judgment.

    ``full``: excerpts (checked, retried), reasoning from them, then the parse from the
    reasoning. ``reasoning_only``: reasoning from the response, then the parse.
    ``instructions`` maps task ids (``dj_template_*``, ``parsing``) to PromptConfig text.
    With ``search`` (full mode), excerpts get search results and a hallucination rating.
    The final parse uses ``extraction_class`` (the relaxed class of classic parsing), asking
    for ``extraction_schema`` (its own schema when None), with usage under ``parsing``. A
    failing call raises :class:`LLMCallError`; a caller that passes its own ``outcome`` still
    has what was done until then (the calls that returned, with their usage, and the stages
    completed), ``deep_judgment_performed`` false.
    """
    told = instructions or {}
    attributes = excerpt_attributes(answer_class)
    if outcome is None:
        outcome = TemplateDeepJudgment(mode=mode, threshold=settings.threshold)
    if mode == "full":
        gathered = gather_excerpts(
            judge, question, response, attributes, settings, outcome.calls,
            extraction_hints=extraction_hints, instructions=told.get(EXCERPT_TASK),
        )  # fmt: skip
        check = gathered.check
        outcome.stages_completed.append("excerpts")
        outcome.retries = gathered.retries
        outcome.missing = list(check.missing)
        outcome.extracted_excerpts = {
            name: [excerpt.to_result() for excerpt in excerpts]
            for name, excerpts in check.accepted.items()
        }
        outcome.rejected = {
            name: [excerpt.to_result() for excerpt in excerpts]
            for name, excerpts in check.rejected.items()
        }
        outcome.dropped = dict(check.dropped)
        if search is not None:
            _assess(judge, question, search, outcome, told.get(HALLUCINATION_TASK))
        reasoning, warnings = reason(
            judge, question, attributes, outcome.calls,
            excerpts=outcome.extracted_excerpts, instructions=told.get(REASONING_TASK),
        )  # fmt: skip
    else:
        reasoning, warnings = reason(
            judge, question, attributes, outcome.calls,
            response=response, instructions=told.get(REASONING_ONLY_TASK),
        )  # fmt: skip
    outcome.attribute_reasoning = reasoning
    outcome.warnings.extend(warnings)
    outcome.stages_completed.append("reasoning")
    messages = final_parse_messages(
        question, reasoning or {name: "(no reasoning)" for name in attributes},
        json.dumps(shared_judge_schema(answer_class), indent=2),
        extraction_hints=extraction_hints, instructions=told.get("parsing"),
    )  # fmt: skip
    reply = parser.parse(
        messages, extraction_class, call_kind="parsing", json_schema=extraction_schema
    )
    outcome.calls.add("parsing", reply.usage)
    outcome.reply = reply.value
    outcome.stages_completed.append("parameters")
    return outcome


def _assess(
    judge: ChatPort,
    question: str,
    search: SearchFunction,
    outcome: TemplateDeepJudgment,
    instructions: str | None,
) -> None:
    """Search results on every quote, then one hallucination rating call."""
    outcome.search_enabled = True
    outcome.warnings.extend(attach_search_results(search, outcome.extracted_excerpts))
    risks, usage, warnings = rate_excerpts(
        judge, question, outcome.extracted_excerpts,
        call_kind="deep_judgment_hallucination", instructions=instructions,
    )  # fmt: skip
    if usage is not None:
        outcome.calls.add(HALLUCINATION_USAGE, usage)
        outcome.risks = risks
    outcome.warnings.extend(warnings)
    outcome.stages_completed.append("excerpt_hallucination_assessment")
