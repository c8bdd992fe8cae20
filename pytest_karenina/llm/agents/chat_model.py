"""The LangChain chat model an agent runs on, for any interface.

``langchain`` and ``langchain_deep_agents`` build it with ``init_chat_model`` (at the server
their own fields name, see ``build_chat_model``); ``openai_endpoint`` and ``openrouter`` with
``ChatOpenAI`` at the endpoint (URL and key as the endpoint adapter finds them:
``endpoint_url``, ``endpoint_key``; ``user:password`` in the URL as basic auth;
``extra_kwargs`` read as the endpoint adapter reads them); ``claude_tool`` with the Messages
API model of :mod:`.claude_chat`. SDK retries are off: :mod:`.transport_middleware` retries
within the run's policy.
"""

from __future__ import annotations

import base64
import functools
from typing import TYPE_CHECKING, Any

from pytest_karenina.llm.adapters.langchain_model import build_chat_model
from pytest_karenina.llm.adapters.openai_endpoint import endpoint_key, endpoint_url
from pytest_karenina.llm.adapters.openai_wire import body_options
from pytest_karenina.llm.agents.registry import agent_tier

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from pytest_karenina.config.model import ModelConfig

NO_KEY = "no-key"
"""Sent as the API key to an endpoint that needs none (the client insists on one)."""


def agent_chat_model(model: ModelConfig) -> BaseChatModel:
    """The chat model of ``model`` for an agent runtime."""
    if model.interface in ("openai_endpoint", "openrouter"):
        return _endpoint_model(model)
    if model.interface == "claude_tool":
        from pytest_karenina.llm.agents.claude_chat import claude_chat_model

        return claude_chat_model(model)
    if model.interface == "langchain" or agent_tier(model.interface) == "deep_agent":
        return build_chat_model(model)
    raise ValueError(f"interface {model.interface!r} cannot run agents in pytest-karenina")


def _endpoint_model(model: ModelConfig) -> BaseChatModel:
    from urllib.parse import urlsplit, urlunsplit

    url = endpoint_url(model)
    if not url:
        raise ValueError(f"model {model.id!r}: openai_endpoint needs endpoint_base_url")
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    body, _ = body_options(None, None, model.extra_kwargs)
    headers = _extra_headers(model)
    key = endpoint_key(model)
    options: dict[str, Any] = {
        "model": model.model_name,
        "base_url": urlunsplit(parts._replace(netloc=host)),
        "api_key": key or NO_KEY,
        "temperature": model.temperature,
        "max_tokens": model.max_tokens,
        "max_retries": 0,
        "default_headers": headers or None,
        "extra_body": body or None,
    }
    if model.request_timeout is not None:
        options["timeout"] = model.request_timeout
    return lean_chat_openai()(**options)


def _extra_headers(model: ModelConfig) -> dict[str, str]:
    """The headers an endpoint model adds to the client's: ``extra_kwargs.default_headers``,
    and basic auth for ``user:password`` in the URL when there is no key."""
    from urllib.parse import urlsplit

    _, headers = body_options(None, None, model.extra_kwargs)
    credentials = urlsplit(endpoint_url(model) or "").netloc.rpartition("@")[0]
    if credentials and not endpoint_key(model):
        token = base64.b64encode(credentials.encode()).decode()
        headers["Authorization"] = f"Basic {token}"
    return headers


def endpoint_headers(model: ModelConfig) -> dict[str, str]:
    """The authorization and extra headers the agent's ``ChatOpenAI`` client sends to an
    endpoint model (the client's key header, which the model's own headers override)."""
    return {"Authorization": f"Bearer {endpoint_key(model) or NO_KEY}", **_extra_headers(model)}


@functools.cache
def lean_chat_openai() -> type[BaseChatModel]:
    """``ChatOpenAI`` whose chat-completions requests carry the messages and tools in
    ``extra_body``: the same JSON on the wire, without the openai SDK's per-request walk of
    its request types, which costs milliseconds per call and grows with the conversation
    (docs/performance.md)."""
    from langchain_openai import ChatOpenAI

    class LeanChatOpenAI(ChatOpenAI):
        def _get_request_payload(
            self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any
        ) -> dict[str, Any]:
            payload: dict[str, Any] = super()._get_request_payload(input_, stop=stop, **kwargs)
            if "response_format" in payload or self._use_responses_api(payload):
                return payload
            moved = {key: payload.pop(key) for key in ("messages", "tools") if key in payload}
            payload["extra_body"] = {**(payload.get("extra_body") or {}), **moved}
            payload["messages"] = []  # a required argument; extra_body's messages replace it
            return payload

    return LeanChatOpenAI
