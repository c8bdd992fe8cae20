"""Assumed replies: what an estimate puts in place of a call the replay store has not recorded.

An estimate sends nothing. For a call the store lacks, :class:`AssumedReplies` answers in the
model's place, so that the pipeline goes on and builds the prompts of its later calls as a live
run would; each such call is tallied (:class:`AssumedTally`) with the usage it is assumed to
have:

- input: the request's characters over four (:func:`approx_tokens`), plus four tokens a
  message for the chat format, plus the JSON schema when the call sends one (providers count
  it as input). tiktoken, which langchain-openai installs, would download its vocabulary on
  first use, and counts OpenAI's tokens only; four characters a token is the usual rule of
  thumb for English text on current tokenizers;
- output: a stated answer length for an answering call (its text is filler of that many
  tokens, which then stands in every prompt that quotes the answer); for a judge call with a
  schema, a JSON object of that schema with short values (:func:`schema_instance`), counted
  like the input; for any other call a few tokens.

``overrides`` set fields of a call kind's object, so that the pipeline takes the path of an
ordinary answer (no abstention, a sufficient response). A reply the pipeline cannot read makes
it retry with a correction: the assumed model refuses that retry (an :class:`LLMCallError`)
rather than tally calls a live run would not make.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_karenina.config.model import ModelConfig
from pytest_karenina.llm.ports import LLMCallError, ModelReply, ModelRequest, RawModel, Usage
from pytest_karenina.llm.replay import ReplayMiss

CHARS_PER_TOKEN = 4
TOKENS_PER_MESSAGE = 4
DEFAULT_ANSWER_TOKENS = 300
"""The answer length an estimate assumes unless told (``--karenina-estimate-answer-tokens``)."""
_FILLER = "assumed answer text "
_TEXT_VALUE = "an assumed value"
_OTHER_REPLY = "assumed"
_DATES = {
    "date": "2000-01-01", "date-time": "2000-01-01T00:00:00Z", "time": "00:00:00",
    "uri": "https://example.org", "email": "someone@example.org",
    "uuid": "00000000-0000-0000-0000-000000000000",
}  # fmt: skip


def approx_tokens(text: str) -> int:
    """Tokens of ``text`` at four characters a token (rounded up)."""
    return -(-len(text) // CHARS_PER_TOKEN)


def request_tokens(request: ModelRequest) -> int:
    """The input tokens :class:`AssumedReplies` assumes for ``request``."""
    tokens = sum(approx_tokens(m.content) + TOKENS_PER_MESSAGE for m in request.messages)
    if request.json_schema is not None:
        tokens += approx_tokens(json.dumps(request.json_schema, separators=(",", ":")))
    return tokens


def filler_text(tokens: int) -> str:
    """Text of ``tokens`` tokens as :func:`approx_tokens` counts them, ending in a full stop
    (a prompt that strips the answer it quotes keeps all of it)."""
    size = tokens * CHARS_PER_TOKEN
    return (_FILLER * (size // len(_FILLER) + 1))[: max(0, size - 1)] + "." if size else ""


def schema_instance(schema: Mapping[str, Any]) -> Any:
    """A value of the JSON schema ``schema`` (pydantic's ``model_json_schema``): every property
    of an object, one item of an array (or its ``minItems``), the first choice of an enum or a
    union that is not null, the lowest number allowed, ``false``, short strings."""
    definitions = schema.get("$defs") or {}

    def make(node: Mapping[str, Any], depth: int) -> Any:
        if depth > 12:  # a recursive model: stop nesting
            return None
        if "$ref" in node:
            return make(definitions.get(str(node["$ref"]).rsplit("/", 1)[-1], {}), depth + 1)
        if "const" in node:
            return node["const"]
        if node.get("enum"):
            return node["enum"][0]
        for key in ("anyOf", "oneOf", "allOf"):
            if node.get(key):
                options = [o for o in node[key] if o.get("type") != "null"] or node[key]
                return make(options[0], depth + 1)
        kind = node.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        if kind == "object":
            properties = node.get("properties") or {}
            return {name: make(sub, depth + 1) for name, sub in properties.items()}
        if kind == "array":
            count = 0 if node.get("maxItems") == 0 else max(1, int(node.get("minItems") or 0))
            return [make(node.get("items") or {}, depth + 1) for _ in range(count)]
        if kind in ("integer", "number"):
            return _lowest(node, int if kind == "integer" else float)
        if kind == "boolean":
            return False
        if kind == "null":
            return None
        return _text(node)

    return make(schema, 0)


def _lowest(node: Mapping[str, Any], kind: type[int] | type[float]) -> int | float:
    low = node.get("minimum")
    if low is None and node.get("exclusiveMinimum") is not None:
        low = node["exclusiveMinimum"] + (1 if kind is int else 1e-6)
    value = kind(low if low is not None else 0)
    high = node.get("maximum")
    return kind(high) if high is not None and value > high else value


def _text(node: Mapping[str, Any]) -> str:
    text = _DATES.get(str(node.get("format")), _TEXT_VALUE)
    text = text.ljust(int(node.get("minLength") or 0), "x")
    limit = node.get("maxLength")
    return text[: int(limit)] if limit is not None else text


@dataclass(frozen=True)
class AssumedCall:
    """One call an estimate assumed: its side, its model as usage metadata labels it (for the
    price table), its question and replicate, and its assumed tokens."""

    answering: bool
    label: str
    question_id: str | None
    replicate: int | None
    input_tokens: int
    output_tokens: int

    @property
    def key(self) -> tuple[str | None, int | None]:
        return self.question_id, self.replicate


@dataclass
class AssumedTally:
    """The assumed calls of a run; thread-safe."""

    _calls: list[AssumedCall] = field(default_factory=list)
    refused: int = 0
    """Retries of an assumed reply the pipeline could not read (refused, not tallied)."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, call: AssumedCall) -> None:
        with self._lock:
            self._calls.append(call)

    def refuse(self) -> None:
        with self._lock:
            self.refused += 1

    def calls(self) -> list[AssumedCall]:
        with self._lock:
            return list(self._calls)

    def questions(self) -> set[tuple[str | None, int | None]]:
        """``(question id, replicate)`` of every assumed call."""
        return {call.key for call in self.calls()}


class AssumedReplies:
    """A :class:`~.ports.RawModel` that sends nothing: it answers every request with an assumed
    reply and tallies it (see the module's docstring)."""

    def __init__(
        self, model: ModelConfig, answering: bool, tally: AssumedTally,
        answer_tokens: int = DEFAULT_ANSWER_TOKENS,
        overrides: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:  # fmt: skip
        self.answering = answering
        self.label = model.identity("answering" if answering else "parsing").display_string
        self.tally = tally
        self.answer_tokens = answer_tokens
        self.overrides = dict(overrides or {})
        self._replies: set[str] = set()

    @property
    def replay_identity(self) -> dict[str, Any]:
        return {"adapter": "assumed", "model": self.label}

    def invoke(self, request: ModelRequest) -> ModelReply:
        if self.answering:
            text, output = filler_text(self.answer_tokens), self.answer_tokens
        elif request.json_schema is not None:
            value = schema_instance(request.json_schema)
            if isinstance(value, dict):
                value.update(self.overrides.get(request.call_kind) or {})
            text = json.dumps(value, ensure_ascii=False)
            self._replies.add(text)
            output = approx_tokens(text)
        elif any(m.role == "assistant" and m.content in self._replies for m in request.messages):
            self.tally.refuse()
            raise LLMCallError(
                request.call_kind,
                "estimate: the assumed reply did not fit the reply schema; the calls after it "
                "are not counted",
            )
        else:
            text, output = _OTHER_REPLY, approx_tokens(_OTHER_REPLY)
        tokens_in = request_tokens(request)
        self.tally.add(AssumedCall(self.answering, self.label, request.question_id,
                                   request.replicate, tokens_in, output))  # fmt: skip
        return ModelReply(text, Usage(tokens_in, output), f"assumed {self.label}")


class AnswerMisses:
    """A :class:`~.ports.RawModel` over a strict replaying model: a recorded call is answered
    from the store, a miss by ``fallback`` instead of a :class:`~.replay.ReplayMiss`."""

    def __init__(self, replaying: RawModel, fallback: RawModel) -> None:
        self.replaying = replaying
        self.fallback = fallback

    @property
    def replay_identity(self) -> dict[str, Any]:
        return self.replaying.replay_identity

    def invoke(self, request: ModelRequest) -> ModelReply:
        try:
            return self.replaying.invoke(request)
        except ReplayMiss:
            return self.fallback.invoke(request)
