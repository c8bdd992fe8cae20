"""Template deep judgment's first calls: quoted evidence per attribute, then reasoning.

:func:`gather_excerpts` asks the judge for verbatim quotes per attribute, checks them
against the response (:mod:`excerpts`) and asks again, naming the rejected quotes, while
attempts are left; what the final attempt leaves without a quote is missing. :func:`reason`
turns the accepted quotes (or, in ``reasoning_only`` mode, the response) into a few sentences
per attribute. Each call is counted, and its usage kept under the seed's usage keys.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel

from pytest_karenina.llm.json_extract import JsonExtractionError, extract_json
from pytest_karenina.llm.ports import ChatMessage, ChatPort, ChatResponse, LLMCallError, Usage
from pytest_karenina.llm.replay import ReplayMiss
from pytest_karenina.pipeline.deep_judgment.excerpts import (
    RESENT_REPLY,
    ExcerptCheck,
    ResponseText,
    check_excerpts,
    shortened,
)
from pytest_karenina.prompts.deep_judgment import (
    REASONING_ONLY_TASK,
    REASONING_TASK,
    excerpt_messages,
    excerpt_retry,
    reasoning_messages,
    reasoning_only_messages,
)
from pytest_karenina.templates import BaseAnswer
from pytest_karenina.templates.judge_schema import shared_judge_schema

NOT_ATTRIBUTES = frozenset({"id", "correct", "regex"})
"""Template names that are never attributes (trace fields are not in the judge schema)."""
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
    """The final attempt's check and how many extra attempts it took."""

    check: ExcerptCheck
    retries: int


def excerpt_attributes(answer_class: type[BaseAnswer]) -> dict[str, str]:
    """The attributes the judge must quote evidence for: the judge schema's properties (no
    trace fields) without ``id``, ``correct`` and ``regex``, with their descriptions."""
    properties: Mapping[str, Any] = shared_judge_schema(answer_class).get("properties", {})
    return {
        name: str(spec.get("description") or "") if isinstance(spec, Mapping) else ""
        for name, spec in properties.items()
        if name not in NOT_ATTRIBUTES
    }


def json_object(text: str) -> Mapping[str, Any] | None:
    """The JSON object in a judge's reply (fenced or not), or None."""
    try:
        data = extract_json(text)
    except JsonExtractionError:
        return None
    return data if isinstance(data, Mapping) else None


@runtime_checkable
class JsonChatPort(Protocol):
    """A chat port that can ask for a reply class natively (``LLMService.chat_json``)."""

    def chat_json(
        self, messages: Sequence[ChatMessage], schema: type[BaseModel], *, call_kind: str
    ) -> ChatResponse: ...


def ask_json(
    judge: ChatPort, messages: Sequence[ChatMessage], schema: type[BaseModel], *, call_kind: str
) -> ChatResponse:
    """One call for ``schema``'s JSON (which ``messages`` ask for in words): with native
    structured output where the judge has it, else a plain chat call.

    Stores recorded while these calls were plain hold them under the plain request's key: in
    strict replay a miss on the structured request is looked up again as that plain request
    (the same messages without the schema); when that misses too, the first miss is raised.
    """
    if not isinstance(judge, JsonChatPort):
        return judge.chat(messages, call_kind=call_kind)
    try:
        return judge.chat_json(messages, schema, call_kind=call_kind)
    except ReplayMiss as miss:
        try:
            return judge.chat(messages, call_kind=call_kind)
        except ReplayMiss:
            raise miss from None


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
    attempts are left; the previous reply goes back bounded (:meth:`ExcerptCheck.resent`). A
    reply that is not a JSON object on the last attempt raises :class:`LLMCallError` (a parse
    error of the item)."""
    text = ResponseText(response)
    messages = excerpt_messages(
        question, response, attributes, max_excerpts=settings.max_excerpts,
        extraction_hints=extraction_hints, instructions=instructions,
    )  # fmt: skip
    attempts = settings.retry_attempts + 1
    for attempt in range(attempts):
        reply = judge.chat(messages, call_kind="deep_judgment_excerpts")
        calls.add(EXCERPT_USAGE, reply.usage)
        data = json_object(reply.text)
        last = attempt == attempts - 1
        if data is None:
            if last:
                raise LLMCallError(
                    "deep_judgment_excerpts", "the excerpt reply is not a JSON object",
                    raw_text=reply.text,
                )  # fmt: skip
            feedback = "Your reply was not a JSON object."
            resent = shortened(reply.text, RESENT_REPLY)
        else:
            check = check_excerpts(
                data, attributes, text,
                threshold=settings.threshold, max_per_attribute=settings.max_excerpts,
            )  # fmt: skip
            if not check.rejected or last:
                return GatheredExcerpts(check, attempt)
            feedback = check.feedback(settings.threshold)
            resent = check.resent(reply.text)
        messages = excerpt_retry(messages, resent, feedback)
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
    data = json_object(reply.text)
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
