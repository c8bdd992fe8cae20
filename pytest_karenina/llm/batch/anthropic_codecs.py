"""Messages API bodies for batched calls of Claude models, and the replies in their results.

Two codecs, one per interface, each giving the reply its live adapter gives, so a batched
call's replay entry is the one a live call records:

* :class:`ClaudeToolCodec` (``claude_tool``): the parameters
  :class:`~pytest_karenina.llm.adapters.claude_tool.ClaudeToolModel` streams, without
  ``stream``; a reply schema as ``output_config`` or a forced tool
  (:mod:`~pytest_karenina.llm.adapters.anthropic_wire`);
* :class:`LangChainAnthropicCodec` (``langchain`` models of provider ``anthropic``): the
  request ``ChatAnthropic`` sends, a reply schema as its ``with_structured_output`` asks for it
  (one forced tool named after the schema), the reply as the tool's input in JSON.

A batch cannot retry a request inside it, so what the live ``claude_tool`` adapter does on a
refusal happens one wave later (:meth:`ClaudeToolCodec.retry`): a model that refuses
``temperature`` (Claude models after Opus 4.6) is asked again without it, and a model that
refuses ``output_config`` through a forced tool; the codec remembers both for its later calls.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from pytest_karenina.llm.adapters.anthropic_wire import (
    STRUCTURED_TOOL_PREFIX,
    StructuredForms,
    conversation,
    reply_text,
    usage_of,
)
from pytest_karenina.llm.ports import ModelReply, ModelRequest
from pytest_karenina.results.text import encodable

logger = logging.getLogger(__name__)
STRUCTURED_WORDS = ("output_config", "output_format", "structured output")
"""Words of a refusal of structured outputs (any other 400 is the request's own fault)."""

LANGCHAIN_CLIENT_OPTIONS = frozenset(
    {"api_key", "anthropic_api_key", "base_url", "anthropic_api_url", "anthropic_proxy",
     "default_headers", "max_retries", "timeout", "default_request_timeout", "streaming",
     "stream_usage"}
)  # fmt: skip
"""``ChatAnthropic`` fields that configure its client, not a request."""
LANGCHAIN_BODY_FIELDS = frozenset({"top_k", "top_p", "stop_sequences", "thinking", "metadata"})
"""``ChatAnthropic`` fields sent as they are in the request body."""


def _finished(body: Mapping[str, Any]) -> list[Any]:
    """The content of a complete message; raises on a body that is none."""
    content = body.get("content")
    if body.get("type") != "message" or not isinstance(content, list):
        raise ValueError("the result is not a Messages API message")
    return content


class ClaudeToolCodec:
    """``claude_tool`` bodies: ``model``, ``max_tokens``, ``system``, ``messages`` and the
    model's fixed fields (``body``: :func:`~.anthropic_wire.request_options`' first part)."""

    def __init__(self, model: str, body: Mapping[str, Any]) -> None:
        self._model, self._body = model, dict(body)
        self._forms = StructuredForms()
        self.temperature_refused = False

    def encode(self, request: ModelRequest) -> dict[str, Any] | None:
        system, messages = conversation(request.messages)
        fixed = {k: v for k, v in self._body.items() if k != "temperature"}
        if not self.temperature_refused and "temperature" in self._body:
            fixed["temperature"] = self._body["temperature"]
        params: dict[str, Any] = {"model": self._model, **fixed, "messages": messages}
        if system:
            params["system"] = system
        if request.json_schema is not None:
            params.update(self._forms.params(request.schema_name, request.json_schema))
        return params

    def retry(
        self, request: ModelRequest, body: Mapping[str, Any], error: str
    ) -> dict[str, Any] | None:
        """The body to send again after the API refused ``body`` with ``error`` the way the
        live adapter sends again (without ``temperature``; a forced tool instead of
        ``output_config``), or None: the refusal stands."""
        text = error.lower()
        if "invalid_request_error" not in text:
            return None
        if "temperature" in body and "temperature" in text:
            if not self.temperature_refused:
                logger.warning("%s refuses temperature: sent without it from now on (%s)",
                               self._model, error)  # fmt: skip
            self.temperature_refused = True
            return self.encode(request)
        if "output_config" in body and any(word in text for word in STRUCTURED_WORDS):
            self._forms.output_config_refused = True
            return self.encode(request)
        return None

    def decode(self, body: dict[str, Any]) -> ModelReply:
        content = _finished(body)
        if body.get("stop_reason") is None:
            raise ValueError("the message has no stop_reason")
        tool = next(
            (
                str(block.get("name"))
                for block in content
                if isinstance(block, dict)
                and block.get("type") == "tool_use"
                and str(block.get("name", "")).startswith(STRUCTURED_TOOL_PREFIX)
            ),
            None,
        )
        text = encodable(reply_text(content, tool))
        return ModelReply(text, usage_of(body.get("usage")), body.get("model") or self._model)


class LangChainAnthropicCodec:
    """``ChatAnthropic`` bodies for a ``langchain`` model of provider ``anthropic``.

    ``extra``: the model's ``extra_kwargs``; a field this codec does not know the wire form
    of makes every call of the model unbatchable (it runs live, and is counted so)."""

    def __init__(
        self, model: str, temperature: float | None, max_tokens: int,
        extra: Mapping[str, Any] | None,
    ) -> None:  # fmt: skip
        self._model = model
        self._body: dict[str, Any] = {"max_tokens": max_tokens}
        if temperature is not None:
            self._body["temperature"] = temperature
        self.unknown: list[str] = []
        for name, value in (extra or {}).items():
            if name == "model_kwargs" and isinstance(value, Mapping):
                self._body.update(value)
            elif name == "stop":
                self._body["stop_sequences"] = value
            elif name in LANGCHAIN_BODY_FIELDS:
                self._body[name] = value
            elif name not in LANGCHAIN_CLIENT_OPTIONS:
                self.unknown.append(name)

    def encode(self, request: ModelRequest) -> dict[str, Any] | None:
        if self.unknown:
            return None
        system, messages = conversation(request.messages)
        params: dict[str, Any] = {"model": self._model, **self._body, "messages": messages}
        if system:
            params["system"] = system
        if request.json_schema is not None:
            tool = _langchain_tool(request.schema_name or "Output", request.json_schema)
            params["tools"] = [tool]
            params["tool_choice"] = {"type": "tool", "name": tool["name"]}
        return params

    def decode(self, body: dict[str, Any]) -> ModelReply:
        content = _finished(body)
        called = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
        if called:  # with_structured_output's parsed reply, as the live adapter dumps it
            text = json.dumps(called[0].get("input") or {}, ensure_ascii=False)
        else:
            text = encodable(reply_text(content))
        return ModelReply(text, usage_of(body.get("usage")), self._model)


def _langchain_tool(name: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    """The tool ``with_structured_output`` makes of a titled JSON schema."""
    from langchain_anthropic.chat_models import convert_to_anthropic_tool

    return dict(convert_to_anthropic_tool({"title": name, **schema}))
