"""Which provider and codec batch a Claude model's calls (the registry's builders for
``claude_tool`` and ``langchain:anthropic``).

The server and key are the ones the live adapter would use: for ``claude_tool`` the model's
``anthropic_base_url`` / ``anthropic_api_key``, else ``ANTHROPIC_BASE_URL`` /
``ANTHROPIC_API_KEY``; for a ``langchain`` model as ``ChatAnthropic`` reads them (its
``base_url`` / ``api_key`` in ``extra_kwargs`` too, and ``ANTHROPIC_API_URL``). A model
without a key is not batched: its live call then fails with the usual error naming it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from pytest_karenina.llm.adapters.anthropic_wire import request_options
from pytest_karenina.llm.adapters.claude_tool import ANTHROPIC_URL_VARIABLE, DEFAULT_URL
from pytest_karenina.llm.batch.anthropic_batches import POOL
from pytest_karenina.llm.batch.anthropic_codecs import ClaudeToolCodec, LangChainAnthropicCodec
from pytest_karenina.llm.batch.protocol import BatchCodec, BatchProvider
from pytest_karenina.llm.provider_keys import configured_key

if TYPE_CHECKING:
    from pytest_karenina.config.model import ModelConfig

KEY_VARIABLE = "ANTHROPIC_API_KEY"


def _secret(value: Any) -> str | None:
    getter = getattr(value, "get_secret_value", None)
    text = getter() if getter is not None else value
    return str(text) if text else None


def claude_tool_parts(config: ModelConfig) -> tuple[BatchProvider, BatchCodec] | None:
    """A ``claude_tool`` model's provider and codec (None: its calls run live)."""
    if config.interface != "claude_tool":
        return None
    extra = dict(config.extra_kwargs or {})
    token = _secret(extra.get("auth_token"))
    key = token or configured_key(config)
    if not key:
        return None
    body, headers = request_options(config.temperature, config.max_tokens, extra)
    url = config.anthropic_base_url or os.environ.get(ANTHROPIC_URL_VARIABLE) or DEFAULT_URL
    provider = POOL.get(url, key, headers, bearer=token is not None)
    return provider, ClaudeToolCodec(config.model_name or "", body)


def langchain_anthropic_parts(config: ModelConfig) -> tuple[BatchProvider, BatchCodec] | None:
    """A ``langchain`` model of provider ``anthropic``: its provider and codec."""
    if config.interface != "langchain" or config.model_provider != "anthropic":
        return None
    extra = dict(config.extra_kwargs or {})
    key = (
        _secret(config.anthropic_api_key)
        or _secret(extra.get("api_key") or extra.get("anthropic_api_key"))
        or os.environ.get(KEY_VARIABLE)
    )
    if not key:
        return None
    url = (
        config.anthropic_base_url
        or extra.get("base_url")
        or extra.get("anthropic_api_url")
        or os.environ.get("ANTHROPIC_API_URL")
        or os.environ.get(ANTHROPIC_URL_VARIABLE)
        or DEFAULT_URL
    )
    headers = {str(k): str(v) for k, v in (extra.get("default_headers") or {}).items()}
    codec = LangChainAnthropicCodec(
        config.model_name or "", config.temperature, config.max_tokens, extra
    )
    return POOL.get(str(url), key, headers), codec
