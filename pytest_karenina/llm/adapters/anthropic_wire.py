"""The Anthropic Messages API as the ``claude_tool`` interface speaks it: request parameters,
the structured-output form of a reply schema, reply text and usage.

Pure functions over dicts and the SDK's reply objects (no client, no sockets), shared by the
chat adapter (:mod:`.claude_tool`) and the tool loop's chat model
(:mod:`pytest_karenina.llm.agents.claude_chat`).

A reply schema is asked for the way Karenina's adapter asks (the SDK's structured outputs:
``output_config.format``, a JSON schema the API then holds the reply to) when the schema fits
the API's strict subset; a schema that does not (a mapping field, a root that is no object)
is asked for as the input of one forced tool instead, which takes any JSON schema. A model
that refuses ``output_config`` (an older model answers 400) is asked the forced-tool way
from then on (:class:`StructuredForms`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pytest_karenina.llm.adapters.openai_wire import body_options
from pytest_karenina.llm.ports import ChatMessage, Usage
from pytest_karenina.llm.strict_schema import strict_variant

ANTHROPIC_CLIENT_OPTIONS = frozenset({"auth_token", "default_query", "anthropic_api_url"})
"""``extra_kwargs`` names that configure the Anthropic client (beyond those of
:data:`~.openai_wire.CLIENT_OPTIONS`): never sent as body fields."""
EMPTY_TURN = "(no reply)"
"""Stands in for an empty assistant turn: the API refuses empty text blocks."""
STRUCTURED_TOOL_PREFIX = "reply_as_"


def request_options(
    temperature: float | None, max_tokens: int, extra: Mapping[str, Any] | None
) -> tuple[dict[str, Any], dict[str, str]]:
    """The fixed body fields and extra headers of a model, read from its ``extra_kwargs`` as
    for ``openai_endpoint`` (``default_headers``, ``model_kwargs``, ``extra_body``, other
    entries such as ``top_p`` or ``stop_sequences`` as body fields, client options dropped)."""
    kept = {k: v for k, v in (extra or {}).items() if k not in ANTHROPIC_CLIENT_OPTIONS}
    body, headers = body_options(temperature, max_tokens, kept)
    return body, headers


def conversation(messages: Iterable[ChatMessage]) -> tuple[str | None, list[dict[str, Any]]]:
    """The ``system`` text and the ``messages`` list of a request. System turns are joined;
    consecutive turns of one role become one message of several text blocks (the API wants
    the roles to alternate)."""
    system: list[str] = []
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            system.append(message.content)
            continue
        text = message.content or (EMPTY_TURN if message.role == "assistant" else " ")
        block = {"type": "text", "text": text}
        if turns and turns[-1]["role"] == message.role:
            turns[-1]["content"].append(block)
        else:
            turns.append({"role": message.role, "content": [block]})
    return ("\n\n".join(system) or None), turns


def structured_tool_name(schema_name: str | None) -> str:
    """The forced tool's name for a reply schema (the API allows ``[a-zA-Z0-9_-]{1,64}``)."""
    cleaned = "".join(c if c.isalnum() or c in "_-" else "_" for c in schema_name or "reply")
    return (STRUCTURED_TOOL_PREFIX + cleaned)[:64]


def as_output_config(schema: dict[str, Any]) -> dict[str, Any] | None:
    """``output_config`` asking for ``schema``, or None when the schema does not fit the
    structured-outputs subset (then a forced tool asks for it)."""
    if strict_variant(schema) is None:
        return None
    from anthropic import transform_schema

    try:
        return {"format": {"type": "json_schema", "schema": transform_schema(schema)}}
    except (ValueError, TypeError):
        return None


def as_forced_tool(schema_name: str | None, schema: dict[str, Any]) -> dict[str, Any]:
    """``tools`` and ``tool_choice`` asking for ``schema`` as the input of one forced tool."""
    name = structured_tool_name(schema_name)
    tool = {
        "name": name,
        "description": "Give your reply as this tool's input.",
        "input_schema": schema if schema.get("type") == "object" else _wrapped(schema),
    }
    return {"tools": [tool], "tool_choice": {"type": "tool", "name": name}}


def _wrapped(schema: dict[str, Any]) -> dict[str, Any]:
    # A tool's input is an object: a non-object schema travels as its ``value`` field.
    return {"type": "object", "properties": {"value": schema}, "required": ["value"]}


class StructuredForms:
    """How each reply schema is asked for, remembered per schema object; a model whose API
    refused ``output_config`` gets forced tools from then on. Thread-safe."""

    def __init__(self, size: int = 256) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._by_id: dict[int, tuple[dict[str, Any], dict[str, Any] | None]] = {}
        self.output_config_refused = False

    def params(self, schema_name: str | None, schema: dict[str, Any]) -> dict[str, Any]:
        """The request parameters asking for ``schema``."""
        config = None if self.output_config_refused else self._output_config(schema)
        if config is not None:
            return {"output_config": config}
        return as_forced_tool(schema_name, schema)

    def _output_config(self, schema: dict[str, Any]) -> dict[str, Any] | None:
        with self._lock:
            found = self._by_id.get(id(schema))
            if found is not None and found[0] is schema:
                return found[1]
        built = as_output_config(schema)
        with self._lock:
            if len(self._by_id) >= self._size:
                self._by_id.clear()
            self._by_id[id(schema)] = (schema, built)
        return built


def _field(block: Any, name: str) -> Any:
    return block.get(name) if isinstance(block, Mapping) else getattr(block, name, None)


def reply_text(content: Sequence[Any], structured_tool: str | None = None) -> str:
    """A reply's text: the forced tool's input as JSON when ``structured_tool`` names it and
    the reply called it (a wrapped non-object reply unwrapped), else the text blocks joined."""
    if structured_tool is not None:
        for block in content:
            if _field(block, "type") == "tool_use" and _field(block, "name") == structured_tool:
                data = _field(block, "input")
                if isinstance(data, Mapping) and set(data) == {"value"}:
                    data = data["value"]
                return json.dumps(data, ensure_ascii=False)
    texts = [str(_field(b, "text") or "") for b in content if _field(b, "type") == "text"]
    return "".join(texts)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def usage_of(usage: Any) -> Usage:
    """Tokens of a reply: the prompt's input tokens counting those read from or written to
    the prompt cache (the API reports them apart), and the output tokens."""
    if usage is None:
        return Usage()
    prompt = sum(
        _count(_field(usage, name))
        for name in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )
    return Usage(prompt, _count(_field(usage, "output_tokens")))


def error_text(exc: BaseException) -> str:
    """An SDK error's message: the API's ``error.message`` when the body has one."""
    body = getattr(exc, "body", None)
    error = body.get("error") if isinstance(body, Mapping) else None
    message = error.get("message") if isinstance(error, Mapping) else None
    kind = error.get("type") if isinstance(error, Mapping) else None
    status = getattr(exc, "status_code", None)
    if isinstance(message, str) and message:
        prefix = f"HTTP {status} " if isinstance(status, int) else ""
        return f"{prefix}{kind or 'error'}: {message}"
    return str(exc) or type(exc).__name__
