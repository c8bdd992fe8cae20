"""``LLMService``: the chat and structured-output ports on top of a raw model.

Structured output first asks for the provider's native structured output when
the model supports it; otherwise (or when that reply does not validate) it
asks in plain text for JSON matching the schema, extracts the JSON from the
reply (fenced, bare or embedded), validates it with pydantic and, on failure,
retries with the validation error, up to ``max_attempts`` calls in all.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from pydantic import BaseModel, ValidationError

from pytest_karenina.llm.json_extract import (
    JsonExtractionError,
    correction_message,
    extract_json,
    schema_request_block,
)
from pytest_karenina.llm.ports import (
    ChatMessage,
    ChatResponse,
    LLMCallError,
    ModelRequest,
    ModelT,
    RawModel,
    StructuredResponse,
    Usage,
)

DEFAULT_STRUCTURED_ATTEMPTS = 4


def _with_schema_request(messages: Sequence[ChatMessage], block: str) -> list[ChatMessage]:
    """Append the JSON request to the last user message (or add one)."""
    result = list(messages)
    for index in range(len(result) - 1, -1, -1):
        if result[index].role == "user":
            result[index] = replace(result[index], content=f"{result[index].content}\n\n{block}")
            return result
    return [*result, ChatMessage("user", block)]


class LLMService:
    """Implements :class:`~.ports.ChatPort` and :class:`~.ports.StructuredPort`.

    ``native_structured``: whether to ask the provider for structured output
    (``json_schema`` in the request) on the first attempt. ``question_id``, ``replicate``
    and ``judge_replicate`` go into every request (:meth:`for_question`).
    """

    def __init__(
        self,
        raw: RawModel,
        *,
        native_structured: bool = True,
        max_attempts: int = DEFAULT_STRUCTURED_ATTEMPTS,
        question_id: str | None = None,
        replicate: int | None = None,
        judge_replicate: int | None = None,
    ) -> None:
        self.raw = raw
        self.native_structured = native_structured
        self.max_attempts = max(1, max_attempts)
        self.question_id = question_id
        self.replicate = replicate
        self.judge_replicate = judge_replicate

    def for_question(
        self, question_id: str, replicate: int | None = None, judge_replicate: int | None = None
    ) -> LLMService:
        """The same service, naming ``question_id``, ``replicate`` and ``judge_replicate`` in
        its requests: the question for errors, the replicates for errors and the replay key
        (``judge_replicate`` only on the judge's ports)."""
        return LLMService(
            self.raw,
            native_structured=self.native_structured,
            max_attempts=self.max_attempts,
            question_id=question_id,
            replicate=replicate,
            judge_replicate=judge_replicate,
        )

    def _request(
        self,
        messages: Sequence[ChatMessage],
        call_kind: str,
        json_schema: dict[str, Any] | None = None,
        schema_name: str | None = None,
    ) -> ModelRequest:
        return ModelRequest(
            tuple(messages), call_kind, json_schema=json_schema, schema_name=schema_name,
            question_id=self.question_id, replicate=self.replicate,
            judge_replicate=self.judge_replicate,
        )  # fmt: skip

    def chat(self, messages: Sequence[ChatMessage], *, call_kind: str) -> ChatResponse:
        reply = self.raw.invoke(self._request(messages, call_kind))
        return ChatResponse(reply.text, reply.usage, reply.model, reply.trace_messages)

    def chat_json(
        self, messages: Sequence[ChatMessage], schema: type[BaseModel], *, call_kind: str
    ) -> ChatResponse:
        """One call whose reply should be ``schema``'s JSON, which the messages ask for:
        sent with native structured output when the model has it, else as :meth:`chat`.
        The text is neither validated nor retried; the caller reads it."""
        if not self.native_structured:
            return self.chat(messages, call_kind=call_kind)
        request = self._request(messages, call_kind, _json_schema(schema), schema.__name__)
        reply = self.raw.invoke(request)
        return ChatResponse(reply.text, reply.usage, reply.model, reply.trace_messages)

    def parse(
        self,
        messages: Sequence[ChatMessage],
        schema: type[ModelT],
        *,
        call_kind: str,
        json_schema: dict[str, Any] | None = None,
    ) -> StructuredResponse[ModelT]:
        if json_schema is None:
            json_schema = _json_schema(schema)

        def plain() -> list[ChatMessage]:
            return _with_schema_request(messages, schema_request_block(json_schema))

        conversation: list[ChatMessage] = list(messages) if self.native_structured else plain()
        usage = Usage()
        last_text = ""
        last_error = "no attempt made"
        for attempt in range(1, self.max_attempts + 1):
            native = self.native_structured and attempt == 1
            request = self._request(
                conversation, call_kind, json_schema if native else None, schema.__name__
            )
            reply = self.raw.invoke(request)
            usage = usage + reply.usage
            last_text = reply.text
            try:
                value = schema.model_validate(extract_json(reply.text))
            except (JsonExtractionError, ValidationError) as exc:
                last_error = _short_error(exc)
                if native:
                    conversation = plain()
                conversation = [
                    *conversation,
                    ChatMessage("assistant", reply.text),
                    correction_message(last_error),
                ]
                continue
            return StructuredResponse(value, reply.text, usage, reply.model, attempt)
        raise LLMCallError(
            call_kind,
            f"the reply could not be read as {schema.__name__} after {self.max_attempts} "
            f"attempts: {last_error}",
            raw_text=last_text,
        )


@functools.lru_cache(maxsize=256)
def _json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of a reply class, generated once per class."""
    return schema.model_json_schema()


def _short_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or 'value'}: {error['msg']}"
            for error in exc.errors()
        )
    return str(exc)
