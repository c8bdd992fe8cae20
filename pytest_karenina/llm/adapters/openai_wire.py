"""The OpenAI chat-completions wire protocol: request bodies, replies and error replies.

Pure functions over bytes and dicts (no sockets), used by the ``openai_endpoint`` adapter.
The subset spoken: ``model``, ``messages``, ``temperature``, ``max_tokens``, extra body
fields, ``response_format`` (JSON schema, strict where possible); from the reply the first
choice's ``content`` (or its first tool call's arguments), ``usage`` and ``model``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from pytest_karenina.llm.ports import ModelReply, ModelRequest, Usage
from pytest_karenina.llm.strict_schema import ResponseFormats
from pytest_karenina.results.fast_json import loads
from pytest_karenina.results.text import encodable

CLIENT_OPTIONS = frozenset(
    {"api_key", "base_url", "timeout", "max_retries", "http_client", "http_async_client",
     "streaming", "stream_usage", "openai_api_key", "openai_api_base", "openai_proxy"}
)  # fmt: skip
"""``extra_kwargs`` names that configure a client rather than a request: not sent."""

HEADER_OPTIONS = ("default_headers",)
BODY_OPTIONS = ("model_kwargs", "extra_body")
"""``extra_kwargs`` entries (as for ``ChatOpenAI``) whose dict merges into headers / body."""


class EndpointHTTPError(Exception):
    """The endpoint answered with an HTTP error status.

    ``status_code`` and ``response`` (whose ``headers`` carry ``Retry-After``) are what
    :func:`~pytest_karenina.llm.errors.classify_error` reads.
    """

    def __init__(self, status_code: int, message: str, response: Any) -> None:
        super().__init__(f"HTTP {status_code}: {message}")
        self.status_code = status_code
        self.response = response


class MalformedReplyError(Exception):
    """A success status with a body that is not a chat completion (retried as a server fault)."""


def request_body(
    model: str, options: Mapping[str, Any], request: ModelRequest, formats: ResponseFormats
) -> bytes:
    """The JSON body for ``request``; ``options`` are the model's fixed body fields."""
    body = {
        "model": model,
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        **options,
    }
    if request.json_schema is not None:
        body["response_format"] = formats.get(request.schema_name or "Output", request.json_schema)
    return orjson.dumps(body)


def body_options(
    temperature: float | None, max_tokens: int | None, extra: Mapping[str, Any] | None
) -> tuple[dict[str, Any], dict[str, str]]:
    """Fixed body fields and extra headers of a model, from its config.

    ``extra`` is ``ModelConfig.extra_kwargs`` read the way ``ChatOpenAI`` reads it: its
    ``model_kwargs`` and ``extra_body`` dicts merge into the body, ``default_headers`` into
    the headers, client options (``timeout``, ``max_retries``, ...) are dropped, and every
    other entry (``top_p``, ``seed``, ``stop``...) is a body field.
    """
    body: dict[str, Any] = {}
    if temperature is not None:
        body["temperature"] = temperature
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    headers: dict[str, str] = {}
    for key, value in (extra or {}).items():
        if key in HEADER_OPTIONS and isinstance(value, Mapping):
            headers.update({str(name): str(text) for name, text in value.items()})
        elif key in BODY_OPTIONS and isinstance(value, Mapping):
            body.update(value)
        elif key not in CLIENT_OPTIONS:
            body[key] = value
    return body, headers


def parse_reply(data: bytes, fallback_model: str | None) -> ModelReply:
    """The :class:`ModelReply` of a chat-completion body; raises :class:`MalformedReplyError`."""
    try:
        completion = loads(data)
        message = completion["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise MalformedReplyError(f"the reply is not a chat completion: {_excerpt(data)}") from None
    if not isinstance(message, dict):
        raise MalformedReplyError(f"the reply's message is not an object: {_excerpt(data)}")
    text = message.get("content")
    if not isinstance(text, str) or not text:
        text = _tool_arguments(message) or (text if isinstance(text, str) else "")
    usage = completion.get("usage")
    counts = usage if isinstance(usage, dict) else {}
    model = completion.get("model")
    return ModelReply(
        encodable(text),
        Usage(_count(counts.get("prompt_tokens")), _count(counts.get("completion_tokens"))),
        model if isinstance(model, str) and model else fallback_model,
    )


def error_message(data: bytes) -> str:
    """The ``error.message`` of an error body, or an excerpt of the body."""
    try:
        parsed = orjson.loads(data)
    except orjson.JSONDecodeError:
        return _excerpt(data) or "(empty body)"
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(error, str):
        return error
    return _excerpt(data)


def _tool_arguments(message: Mapping[str, Any]) -> str:
    calls = message.get("tool_calls")
    if not isinstance(calls, list) or not calls or not isinstance(calls[0], dict):
        return ""
    function = calls[0].get("function")
    arguments = function.get("arguments") if isinstance(function, dict) else None
    return arguments if isinstance(arguments, str) else ""


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _excerpt(data: bytes, limit: int = 200) -> str:
    text = data[:limit].decode("utf-8", errors="replace").strip()
    return f"{text}..." if len(data) > limit else text
