"""Which models can batch, and through which provider and codec.

:func:`batch_parts` answers for one model config: ``openai_endpoint`` models and
``langchain`` models of provider ``openai`` go through OpenAI's Batch API
(:mod:`.openai_batch`), ``claude_tool`` models and ``langchain`` models of provider
``anthropic`` through Anthropic's Message Batches (:mod:`.anthropic_parts`); other providers
register a builder in :data:`BUILDERS` under their interface or ``langchain:<provider>``.
Providers are shared per lane (endpoint and key), so calls of every model at one endpoint
share batches.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from pytest_karenina.llm.adapters.openai_endpoint import endpoint_key, endpoint_url
from pytest_karenina.llm.batch.anthropic_parts import claude_tool_parts, langchain_anthropic_parts
from pytest_karenina.llm.batch.openai_batch import OpenAIBatchProvider, chat_codec
from pytest_karenina.llm.batch.protocol import BatchCodec, BatchProvider

if TYPE_CHECKING:
    from pytest_karenina.config.model import ModelConfig

BatchParts = tuple[BatchProvider, BatchCodec]
Builder = Callable[["ModelConfig"], "BatchParts | None"]

OPENAI_BASE_URL = "https://api.openai.com/v1"


def _secret(value: object) -> str | None:
    getter = getattr(value, "get_secret_value", None)
    return str(getter()) if getter is not None else (str(value) if value else None)


class ProviderPool:
    """One provider per endpoint and key: the calls of models that share them batch together."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._made: dict[tuple[str, str | None, tuple[tuple[str, str], ...]], BatchProvider] = {}

    def openai(self, url: str, key: str | None, headers: dict[str, str]) -> BatchProvider:
        slot = (url, key, tuple(sorted(headers.items())))
        with self._lock:
            found = self._made.get(slot)
            if found is None:
                found = self._made[slot] = OpenAIBatchProvider(url, key, headers)
                lanes = [p.lane for p in self._made.values() if p is not found]
                if found.lane in lanes:  # same endpoint, another key: batches of its own
                    found.lane = f"{found.lane}#{lanes.count(found.lane) + 1}"
            return found


POOL = ProviderPool()


def openai_endpoint_parts(config: ModelConfig) -> BatchParts | None:
    url = endpoint_url(config)
    if config.interface != "openai_endpoint" or not url:
        return None
    codec, headers = chat_codec(
        config.model_name, config.temperature, config.max_tokens, config.extra_kwargs
    )
    return POOL.openai(url, endpoint_key(config), headers), codec


def langchain_openai_parts(config: ModelConfig) -> BatchParts | None:
    """A ``langchain`` model of provider ``openai``: the request ``ChatOpenAI`` would send,
    sent by our own batch client (``base_url``/``api_key`` as ``ChatOpenAI`` reads them)."""
    extra = dict(config.extra_kwargs or {})
    url = extra.get("base_url") or extra.get("openai_api_base") or os.environ.get(
        "OPENAI_BASE_URL"
    )  # fmt: skip
    key = _secret(extra.get("api_key") or extra.get("openai_api_key")) or os.environ.get(
        "OPENAI_API_KEY"
    )  # fmt: skip
    codec, headers = chat_codec(config.model_name, config.temperature, config.max_tokens, extra)
    return POOL.openai(str(url or OPENAI_BASE_URL), key, headers), codec


BUILDERS: dict[str, Builder] = {
    "openai_endpoint": openai_endpoint_parts,
    "langchain:openai": langchain_openai_parts,
    "claude_tool": claude_tool_parts,  # Anthropic's Message Batches (.anthropic_batches)
    "langchain:anthropic": langchain_anthropic_parts,
}
"""Batch builders by interface, or ``langchain:<model_provider>`` for LangChain models."""


def batch_parts(config: ModelConfig) -> BatchParts | None:
    """The provider and codec that batch ``config``'s calls; None: its calls run live."""
    name: str = config.interface
    if name == "langchain":
        name = f"langchain:{config.model_provider}"
    builder = BUILDERS.get(name)
    return builder(config) if builder is not None else None
