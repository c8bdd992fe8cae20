"""Which environment variable holds the API key of a LangChain provider, and which are missing.

Used to pick strict replay by default when a run could not call its models anyway: a CI job
without keys then replays its committed recordings instead of failing on every call.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_karenina.config.model import ModelConfig

PROVIDER_KEY_VARIABLES: Mapping[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "azure_openai": ("AZURE_OPENAI_API_KEY",),
    "google_genai": ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
    "mistralai": ("MISTRAL_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "cohere": ("COHERE_API_KEY",),
    "fireworks": ("FIREWORKS_API_KEY",),
    "together": ("TOGETHER_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "perplexity": ("PPLX_API_KEY",),
    "huggingface": ("HUGGINGFACEHUB_API_TOKEN", "HF_TOKEN"),
}
"""Providers (``init_chat_model`` names) whose key comes from the environment. Providers not
listed (local ones like ``ollama``, or cloud ones with their own credential chains like
``bedrock``) are assumed callable."""


def missing_key(model: ModelConfig, environ: Mapping[str, str] | None = None) -> str | None:
    """The variable ``model`` would need but the environment lacks (None when it can call)."""
    env = os.environ if environ is None else environ
    if model.interface != "langchain" or model.model_provider is None:
        return None  # endpoints take a key of their own or none; manual answers need none
    names = PROVIDER_KEY_VARIABLES.get(model.model_provider.lower())
    if names is None or any(env.get(name) for name in names):
        return None
    return names[0]


def models_without_keys(
    models: Iterable[ModelConfig], environ: Mapping[str, str] | None = None
) -> list[tuple[str, str]]:
    """``(model id, variable)`` for every model that cannot be called for want of a key."""
    found = []
    for model in models:
        variable = missing_key(model, environ)
        if variable is not None:
            found.append((model.id or model.model_name or "?", variable))
    return found
