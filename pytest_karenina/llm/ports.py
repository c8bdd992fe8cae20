"""The ports through which the pipeline talks to language models.

Stages depend only on these protocols; adapters (LangChain, an OpenAI-compatible
endpoint, recorded answers) implement them. ``call_kind`` names the purpose of a
call (``answer_generation``, ``parsing``, ``abstention_check``, ...): it keys usage
accounting, replay entries and error messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel

Role = Literal["system", "user", "assistant"]
ModelT = TypeVar("ModelT", bound=BaseModel)


@dataclass(frozen=True)
class Usage:
    """Token counts of one LLM call; ``None`` means the provider did not report it."""

    input_tokens: int | None = None
    output_tokens: int | None = None

    @property
    def total_tokens(self) -> int | None:
        if self.input_tokens is None or self.output_tokens is None:
            return None
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        def add(a: int | None, b: int | None) -> int | None:
            return None if a is None and b is None else (a or 0) + (b or 0)

        return Usage(
            add(self.input_tokens, other.input_tokens),
            add(self.output_tokens, other.output_tokens),
        )


@dataclass(frozen=True)
class ChatMessage:
    role: Role
    content: str


@dataclass(frozen=True)
class ChatResponse:
    """A model's reply: its text, token usage and, for agents, the message trace."""

    text: str
    usage: Usage = field(default_factory=Usage)
    model: str | None = None
    trace_messages: list[dict[str, Any]] | None = None


@dataclass(frozen=True)
class StructuredResponse(Generic[ModelT]):
    """A judge reply validated into ``value``; ``raw_text`` is what the model said."""

    value: ModelT
    raw_text: str
    usage: Usage = field(default_factory=Usage)
    model: str | None = None
    attempts: int = 1


@dataclass(frozen=True)
class ModelRequest:
    """One raw call to a model, as adapters, retries and the replay store see it.

    ``json_schema`` asks for native structured output (the reply text is then
    the JSON object); ``schema_name`` names it (e.g. the template class name).
    ``question_id`` is for error messages only and never part of a replay key.
    ``replicate`` is the replicate the call belongs to (None without replicates): part of
    the replay key from 2 on, so replicate 1 keeps the key of a run without replicates.
    ``judge_replicate`` is the judge replicate of a judge call (None for answering calls and
    runs without judge replicates), keyed the same way: judge replicate 1 keeps today's key.
    ``timeout`` is the attempt's time limit in seconds, set by the transport for
    adapters that enforce it themselves (``enforces_timeout``); not part of a key.
    """

    messages: tuple[ChatMessage, ...]
    call_kind: str
    json_schema: dict[str, Any] | None = None
    schema_name: str | None = None
    question_id: str | None = None
    timeout: float | None = None
    replicate: int | None = None
    judge_replicate: int | None = None

    def with_timeout(self, timeout: float | None) -> ModelRequest:
        """This request with ``timeout``: a copy of its fields (``dataclasses.replace``
        checks every field and costs ten times as much, on every call)."""
        copied = object.__new__(type(self))
        copied.__dict__.update(self.__dict__)
        copied.__dict__["timeout"] = timeout
        return copied


@dataclass(frozen=True)
class ModelReply:
    """What a model returned for a :class:`ModelRequest`; ``trace_messages`` when the reply
    is a recorded agent conversation (``text`` is then its rendered trace)."""

    text: str
    usage: Usage = field(default_factory=Usage)
    model: str | None = None
    trace_messages: list[dict[str, Any]] | None = None


class RawModel(Protocol):
    """The lowest layer: send one request, get one reply (adapters implement this).

    Raises the provider's exception on failure; retrying, recording and
    structured-output handling are layered on top. An adapter whose requests
    honour ``ModelRequest.timeout`` may say so with an ``enforces_timeout``
    attribute that is True; the transport then sends the limit with each request
    instead of watching the call from a helper thread.
    """

    @property
    def replay_identity(self) -> dict[str, Any]:
        """What identifies this model's output for replay keys: adapter, model name and
        the parameters that change output (temperature, max tokens...). Never secrets."""
        ...

    def invoke(self, request: ModelRequest) -> ModelReply: ...


class LLMCallError(RuntimeError):
    """An LLM call failed for good (after the retries its error class allows)."""

    def __init__(self, call_kind: str, reason: str, *, raw_text: str | None = None) -> None:
        self.call_kind = call_kind
        self.reason = reason
        self.raw_text = raw_text
        super().__init__(f"{call_kind} call failed: {reason}")


class ChatPort(Protocol):
    """Free-text chat: messages in, text out."""

    def chat(self, messages: Sequence[ChatMessage], *, call_kind: str) -> ChatResponse: ...


class StructuredPort(Protocol):
    """Structured output: messages and a pydantic class in, a validated instance out.

    Raises :class:`LLMCallError` (with the raw text when there is one) when the
    reply cannot be turned into ``schema`` within the allowed attempts. ``json_schema``:
    the schema to ask for, when it is not ``schema``'s own (a shared relaxed class, see
    :func:`pytest_karenina.templates.extraction.relaxed_schema`).
    """

    def parse(
        self,
        messages: Sequence[ChatMessage],
        schema: type[ModelT],
        *,
        call_kind: str,
        json_schema: dict[str, Any] | None = None,
    ) -> StructuredResponse[ModelT]: ...
