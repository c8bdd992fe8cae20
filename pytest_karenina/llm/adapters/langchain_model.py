"""Models reached through LangChain: any ``init_chat_model`` provider (the ``langchain``
interface), with LangChain's callbacks and tracing.

An OpenAI-compatible server can be reached this way too, for its tracing: provider
``openai`` with ``base_url`` (and ``api_key``) in ``extra_kwargs``. The ``openai_endpoint``
interface reaches it without LangChain, at a fraction of the CPU (``openai_endpoint.py``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from pytest_karenina.llm.adapters.identity import config_identity
from pytest_karenina.llm.ports import ChatMessage, ModelReply, ModelRequest, Usage
from pytest_karenina.llm.strict_schema import ResponseFormats
from pytest_karenina.results.text import encodable

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage

    from pytest_karenina.config.model import ModelConfig

_IMPORTS = threading.RLock()
"""Serialises model construction across all models: it imports provider packages."""


def to_langchain(messages: Sequence[ChatMessage]) -> list[BaseMessage]:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    kinds = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}
    return [kinds[message.role](content=message.content) for message in messages]


def content_text(content: Any) -> str:
    """The text of a LangChain message content (a string or a list of blocks)."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or []:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "".join(parts)


def token_usage(message: Any) -> Usage:
    metadata = getattr(message, "usage_metadata", None) or {}
    return Usage(metadata.get("input_tokens"), metadata.get("output_tokens"))


class LangChainModel:
    """A :class:`~pytest_karenina.llm.ports.RawModel` over a LangChain chat model.

    The chat model is built by ``init_chat_model`` on first use (or by :meth:`prepare`)
    with SDK retries off: retrying is the transport's job.
    """

    def __init__(self, config: ModelConfig, *, chat_model: BaseChatModel | None = None) -> None:
        self.config = config
        self._chat_model = chat_model
        self._formats = ResponseFormats()

    @property
    def replay_identity(self) -> dict[str, Any]:
        return config_identity(self.config)

    def _model(self) -> BaseChatModel:
        with _IMPORTS:
            if self._chat_model is None:
                self._chat_model = self._build()
            return self._chat_model

    def _build(self) -> BaseChatModel:
        return build_chat_model(self.config)

    def prepare(self) -> None:
        """Build the chat model now (imports the provider package); idempotent."""
        self._model()

    @property
    def enforces_timeout(self) -> bool:
        """OpenAI models take ``ModelRequest.timeout`` per request (the SDK's ``timeout``)."""
        return _speaks_openai(self._model())

    def invoke(self, request: ModelRequest) -> ModelReply:
        model = self._model()
        messages = to_langchain(request.messages)
        openai = _speaks_openai(model)
        options: dict[str, Any] = {}
        if openai and request.timeout is not None:
            options["timeout"] = request.timeout
        if request.json_schema is None:
            return self._reply(model.invoke(messages, **options))
        name = request.schema_name or "Output"
        if openai:
            # The same request on the wire as with_structured_output, at a fraction of the
            # client-side CPU: inside extra_body the schema skips langchain-openai's parse
            # path and openai's per-request type walk (docs/performance.md).
            extra_body = {**(getattr(model, "extra_body", None) or {})}
            extra_body["response_format"] = self._formats.get(name, request.json_schema)
            return self._reply(model.invoke(messages, extra_body=extra_body, **options))
        schema = {"title": name, **request.json_schema}
        structured = model.with_structured_output(schema, include_raw=True)
        outcome = structured.invoke(messages)
        raw = outcome.get("raw") if isinstance(outcome, dict) else None
        parsed = outcome.get("parsed") if isinstance(outcome, dict) else outcome
        if parsed is not None:
            text = json.dumps(parsed, ensure_ascii=False)
        else:  # let the service extract and validate (or retry) from the raw reply
            text = content_text(getattr(raw, "content", "")) or _tool_arguments(raw)
        return ModelReply(text, token_usage(raw), self.config.model_name)

    def _reply(self, message: Any) -> ModelReply:
        text = encodable(content_text(message.content))
        return ModelReply(text, token_usage(message), self.config.model_name)


def build_chat_model(config: ModelConfig) -> BaseChatModel:
    """``init_chat_model`` for ``config``, with SDK retries off (the caller retries), at the
    server the model's own fields name (:func:`server_options`)."""
    options: dict[str, Any] = {
        "temperature": config.temperature,
        "max_tokens": config.max_tokens,
        "max_retries": 0,
        **(config.extra_kwargs or {}),
        **server_options(config),
    }
    if config.request_timeout is not None:
        options["timeout"] = config.request_timeout
    from langchain.chat_models import init_chat_model

    with _IMPORTS:
        model = init_chat_model(config.model_name, model_provider=config.model_provider, **options)
    return cast("BaseChatModel", model)


def server_options(config: ModelConfig) -> dict[str, Any]:
    """``base_url`` and ``api_key`` from the model's dedicated fields, as Karenina reads them.

    A ``langchain_deep_agents`` model with ``endpoint_base_url`` talks to that server with
    ``endpoint_api_key``; without the key it is refused, as in Karenina: the provider client
    would otherwise send its environment key (``OPENAI_API_KEY``) there. An ``anthropic``
    model of ``langchain`` or ``langchain_deep_agents`` takes ``anthropic_base_url`` and
    ``anthropic_api_key``. Fields that are not set leave the provider's defaults (and
    ``extra_kwargs``) alone.
    """
    found: dict[str, Any] = {}
    if config.interface == "langchain_deep_agents" and config.endpoint_base_url:
        if config.endpoint_api_key is None:
            raise ValueError(
                f"model {config.id!r}: a langchain_deep_agents model with endpoint_base_url "
                "needs endpoint_api_key (the provider's own key is never sent to that server)"
            )
        found["base_url"] = config.endpoint_base_url
        found["api_key"] = config.endpoint_api_key.get_secret_value()
    if config.model_provider == "anthropic" and config.interface in (
        "langchain",
        "langchain_deep_agents",
    ):
        if config.anthropic_base_url:
            found["base_url"] = config.anthropic_base_url
        if config.anthropic_api_key is not None:
            found["api_key"] = config.anthropic_api_key.get_secret_value()
    return found


def _speaks_openai(model: Any) -> bool:
    """Whether ``model`` is a langchain-openai chat model (OpenAI's response_format)."""
    return any(cls.__module__.startswith("langchain_openai") for cls in type(model).__mro__)


def _tool_arguments(message: Any) -> str:
    calls = getattr(message, "tool_calls", None) or []
    return json.dumps(calls[0].get("args", {})) if calls else ""
