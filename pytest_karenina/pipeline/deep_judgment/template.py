"""Template deep judgment's judge calls: quoted evidence per attribute, then reasoning.

:func:`gather_excerpts` asks the judge for verbatim quotes per attribute, checks them
against the response (:mod:`excerpts`) and asks again, naming the rejected quotes, while
attempts are left; what the final attempt leaves without a quote is missing. :func:`reason`
turns the accepted quotes (or, in ``reasoning_only`` mode, the response) into a few sentences
per attribute. Each call is counted, and its usage kept under the seed's usage keys.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_karenina.llm.json_extract import JsonExtractionError, extract_json
from pytest_karenina.llm.ports import ChatPort, LLMCallError, StructuredPort, Usage
from pytest_karenina.pipeline.deep_judgment.excerpts import (
    ExcerptCheck,
    ResponseText,
    check_excerpts,
)
from pytest_karenina.prompts.deep_judgment import (
    EXCERPT_TASK,
    REASONING_ONLY_TASK,
    REASONING_TASK,
    excerpt_messages,
    excerpt_retry,
    final_parse_messages,
    reasoning_messages,
    reasoning_only_messages,
)
from pytest_karenina.templates import BaseAnswer, judge_schema

NOT_ATTRIBUTES = frozenset({"id", "correct", "regex"})
"""Template names that are never attributes (trace fields are not in the judge schema)."""
DEEP_JUDGMENT = "deep_judgment_outcome"
"""Artifact: the item's :class:`TemplateDeepJudgment`, when ParseTemplate ran it."""
EXCERPT_USAGE = "deep_judgment_excerpts"
REASONING_USAGE = "deep_judgment_reasoning"


@dataclass(frozen=True)
class ExcerptSettings:
    """``deep_judgment_max_excerpts_per_attribute``, ``..._fuzzy_match_threshold`` and
    ``..._excerpt_retry_attempts``."""

    max_excerpts: int = 3
    threshold: float = 0.8
    retry_attempts: int = 2


@dataclass
class DeepJudgmentCalls:
    """Calls made and their usage, by usage key."""

    count: int = 0
    usage: dict[str, Usage] = field(default_factory=dict)

    def add(self, key: str, usage: Usage) -> None:
        self.count += 1
        self.usage[key] = self.usage.get(key, Usage()) + usage


@dataclass
class GatheredExcerpts:
    """The final attempt's check, how many extra attempts it took, and the last reply."""

    check: ExcerptCheck
    retries: int
    reply_text: str


def excerpt_attributes(answer_class: type[BaseAnswer]) -> dict[str, str]:
    """The attributes the judge must quote evidence for: the judge schema's properties (no
    trace fields) without ``id``, ``correct`` and ``regex``, with their descriptions."""
    properties: Mapping[str, Any] = judge_schema(answer_class).get("properties", {})
    return {
        name: str(spec.get("description") or "") if isinstance(spec, Mapping) else ""
        for name, spec in properties.items()
        if name not in NOT_ATTRIBUTES
    }


def _json_object(text: str) -> Mapping[str, Any] | None:
    try:
        data = extract_json(text)
    except JsonExtractionError:
        return None
    return data if isinstance(data, Mapping) else None


def gather_excerpts(
    judge: ChatPort,
    question: str,
    response: str,
    attributes: Mapping[str, str],
    settings: ExcerptSettings,
    calls: DeepJudgmentCalls,
    *,
    extraction_hints: Mapping[str, str] | None = None,
    instructions: str | None = None,
) -> GatheredExcerpts:
    """Quotes per attribute, asked for again with feedback while quotes are rejected and
    attempts are left. A reply that is not a JSON object on the last attempt raises
    :class:`LLMCallError` (a parse error of the item)."""
    text = ResponseText(response)
    messages = excerpt_messages(
        question, response, attributes, max_excerpts=settings.max_excerpts,
        extraction_hints=extraction_hints, instructions=instructions,
    )  # fmt: skip
    attempts = settings.retry_attempts + 1
    for attempt in range(attempts):
        reply = judge.chat(messages, call_kind="deep_judgment_excerpts")
        calls.add(EXCERPT_USAGE, reply.usage)
        data = _json_object(reply.text)
        last = attempt == attempts - 1
        if data is None:
            if last:
                raise LLMCallError(
                    "deep_judgment_excerpts", "the excerpt reply is not a JSON object",
                    raw_text=reply.text,
                )  # fmt: skip
            feedback = "Your reply was not a JSON object."
        else:
            check = check_excerpts(
                data, attributes, text,
                threshold=settings.threshold, max_per_attribute=settings.max_excerpts,
            )  # fmt: skip
            if not check.rejected or last:
                return GatheredExcerpts(check, attempt, reply.text)
            feedback = check.feedback(settings.threshold)
        messages = excerpt_retry(messages, reply.text, feedback)
    raise AssertionError("unreachable: the last attempt returns or raises")


def reason(
    judge: ChatPort,
    question: str,
    attributes: Mapping[str, str],
    calls: DeepJudgmentCalls,
    *,
    excerpts: Mapping[str, list[dict[str, Any]]] | None = None,
    response: str | None = None,
    instructions: str | None = None,
) -> tuple[dict[str, str], list[str]]:
    """Reasoning per attribute, from ``excerpts`` or (reasoning only) from ``response``;
    with warnings. An unreadable reply gives no reasoning and a warning, as in Karenina."""
    if excerpts is not None:
        messages = reasoning_messages(question, attributes, excerpts, instructions=instructions)
        call_kind = REASONING_TASK
    else:
        messages = reasoning_only_messages(
            question, response or "", attributes, instructions=instructions
        )
        call_kind = REASONING_ONLY_TASK
    reply = judge.chat(messages, call_kind="deep_judgment_reasoning")
    calls.add(REASONING_USAGE, reply.usage)
    data = _json_object(reply.text)
    if data is None:
        return {}, [f"deep judgment ({call_kind}): the reasoning reply is not a JSON object"]
    found: dict[str, str] = {}
    for name in attributes:
        value = data.get(name)
        if isinstance(value, Mapping):  # {reasoning: ..., ...} when search was on
            value = value.get("reasoning")
        if value is not None:
            found[name] = str(value)
    return found, []


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
    warnings: list[str] = field(default_factory=list)
    calls: DeepJudgmentCalls = field(default_factory=DeepJudgmentCalls)

    def ungrounded(self) -> list[str]:
        """Per missing attribute, why: its rejected quotes with their similarity, or none."""
        lines = []
        for name in self.missing:
            quotes = self.rejected.get(name, [])
            if quotes:
                shown = "; ".join(
                    f'"{q["text"]}" (similarity {q["similarity_score"]:.2f} < {self.threshold:.2f})'
                    for q in quotes
                )
                lines.append(f"deep judgment: no verbatim quote for {name}; rejected {shown}")
            else:
                lines.append(f"deep judgment: no verbatim quote for {name}; the judge gave none")
        return lines

    def section_fields(self) -> dict[str, Any]:
        """The fields of ``VerificationResultDeepJudgment`` (search is not built yet)."""
        return {
            "deep_judgment_mode": self.mode,
            "deep_judgment_enabled": True,
            "deep_judgment_performed": True,
            "extracted_excerpts": self.extracted_excerpts,
            "attribute_reasoning": self.attribute_reasoning,
            "deep_judgment_stages_completed": list(self.stages_completed),
            "deep_judgment_model_calls": self.calls.count,
            "deep_judgment_excerpt_retry_count": self.retries,
            "attributes_without_excerpts": list(self.missing),
            "deep_judgment_search_enabled": False,
            "hallucination_risk_assessment": None,
        }


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
) -> TemplateDeepJudgment:
    """Parse ``response`` into ``extraction_class`` through deep judgment.

    ``full``: excerpts (checked, retried), reasoning from them, then the parse from the
    reasoning. ``reasoning_only``: reasoning from the response, then the parse.
    ``instructions`` maps task ids (``dj_template_*``, ``parsing``) to PromptConfig text.
    The final parse uses ``extraction_class`` (the relaxed class of classic parsing), with
    usage under ``parsing``. A failing call raises :class:`LLMCallError`.
    """
    told = instructions or {}
    attributes = excerpt_attributes(answer_class)
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
        json.dumps(judge_schema(answer_class), indent=2),
        extraction_hints=extraction_hints, instructions=told.get("parsing"),
    )  # fmt: skip
    reply = parser.parse(messages, extraction_class, call_kind="parsing")
    outcome.calls.add("parsing", reply.usage)
    outcome.reply = reply.value
    outcome.stages_completed.append("parameters")
    return outcome
