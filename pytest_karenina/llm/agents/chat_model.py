"""The LangChain chat model an agent runs on, for any interface.

``langchain`` builds it with ``init_chat_model``; ``openai_endpoint`` with ``ChatOpenAI`` at
the endpoint (the key from ``endpoint_api_key``, else ``OPENAI_API_KEY``; ``user:password``
in the URL as basic auth; ``extra_kwargs`` read as the endpoint adapter reads them). SDK
retries are off: :mod:`.limits_middleware` retries within the run's policy.
"""

from __future__ import annotations

import base64
import os
from typing import TYPE_CHECKING, Any

from pytest_karenina.llm.adapters.langchain_model import build_chat_model
from pytest_karenina.llm.adapters.openai_endpoint import ENDPOINT_KEY_VARIABLE
from pytest_karenina.llm.adapters.openai_wire import body_options
from pytest_karenina.llm.agents.registry import agent_tier

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from pytest_karenina.config.model import ModelConfig

NO_KEY = "no-key"
"""Sent as the API key to an endpoint that needs none (the client insists on one)."""


def agent_chat_model(model: ModelConfig) -> BaseChatModel:
    """The chat model of ``model`` for an agent runtime."""
    if model.interface == "openai_endpoint":
        return _endpoint_model(model)
    if model.interface == "langchain" or agent_tier(model.interface) == "deep_agent":
        return build_chat_model(model)
    raise ValueError(f"interface {model.interface!r} cannot run agents in pytest-karenina")


def _endpoint_model(model: ModelConfig) -> BaseChatModel:
    from urllib.parse import urlsplit, urlunsplit

    from langchain_openai import ChatOpenAI

    if not model.endpoint_base_url:
        raise ValueError(f"model {model.id!r}: openai_endpoint needs endpoint_base_url")
    parts = urlsplit(model.endpoint_base_url)
    credentials, _, host = parts.netloc.rpartition("@")
    body, headers = body_options(None, None, model.extra_kwargs)
    secret = model.endpoint_api_key
    key = secret.get_secret_value() if secret else os.environ.get(ENDPOINT_KEY_VARIABLE)
    if credentials and not key:
        token = base64.b64encode(credentials.encode()).decode()
        headers["Authorization"] = f"Basic {token}"
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
    return ChatOpenAI(**options)
