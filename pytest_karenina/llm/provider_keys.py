"""Which environment variable holds the API key of a LangChain provider, and which are missing.

Used to pick strict replay by default when a run could not call its models anyway (a CI job
without keys then replays its committed recordings instead of failing on every call), and to
refuse a run whose live calls have no key before any of them is made.
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


KEY_INTERFACES = ("langchain", "langchain_deep_agents")
"""Interfaces whose models reach their provider with the provider's own key."""

INTERFACE_KEY_VARIABLES: Mapping[str, tuple[str, ...]] = {
    "claude_tool": ("ANTHROPIC_API_KEY",),
    "claude_agent_sdk": ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN"),
    "openrouter": ("OPENROUTER_API_KEY",),
}
"""Interfaces bound to one API whatever ``model_provider`` says, and the variables their key
comes from when the model's own setting (:func:`configured_key`) has none (the Claude Code
CLI also takes a Claude subscription's token)."""
ANTHROPIC_KEY_INTERFACES = ("claude_tool", "claude_agent_sdk")
"""Interfaces whose own key setting is ``anthropic_api_key`` (else ``endpoint_api_key``)."""


class MissingKeyError(RuntimeError):
    """A model of an interface with a key of its own has none (not retried)."""


def require_key(model: ModelConfig) -> str:
    """:func:`configured_key`, or :class:`MissingKeyError` naming the model and where the key
    goes."""
    key = configured_key(model)
    if key:
        return key
    field = (
        "anthropic_api_key" if model.interface in ANTHROPIC_KEY_INTERFACES else "endpoint_api_key"
    )
    variable = INTERFACE_KEY_VARIABLES[model.interface][0]
    raise MissingKeyError(
        f"{model.interface} model {model.id!r} has no API key: set {variable} or the "
        f"model's {field}"
    )


def configured_key(model: ModelConfig, environ: Mapping[str, str] | None = None) -> str | None:
    """The key an interface of :data:`INTERFACE_KEY_VARIABLES` sends: the model's own setting
    (``anthropic_api_key`` for ``claude_tool`` and ``claude_agent_sdk``, ``endpoint_api_key``
    for ``openrouter``), else its variables in the environment; None when neither has one."""
    names = INTERFACE_KEY_VARIABLES.get(model.interface, ())
    anthropic = model.interface in ANTHROPIC_KEY_INTERFACES
    own = model.anthropic_api_key if anthropic else model.endpoint_api_key
    if own is not None and names:
        return own.get_secret_value() or None
    env = os.environ if environ is None else environ
    return next((env[name] for name in names if env.get(name)), None)


def key_variables(model: ModelConfig) -> tuple[str, ...]:
    """The environment variables that can hold ``model``'s key (empty: it needs none from the
    environment: no provider key, or a key or server of its own in its configuration)."""
    if model.interface in INTERFACE_KEY_VARIABLES:
        return () if configured_key(model, {}) else INTERFACE_KEY_VARIABLES[model.interface]
    if model.interface not in KEY_INTERFACES or model.model_provider is None:
        return ()  # endpoints take a key of their own or none; manual answers need none
    if model.interface == "langchain_deep_agents" and model.endpoint_base_url:
        return ()  # its endpoint_api_key (a config rule requires it) goes to that server
    if _configured_key(model):
        return ()
    return PROVIDER_KEY_VARIABLES.get(model.model_provider.replace("-", "_").lower(), ())


def _configured_key(model: ModelConfig) -> bool:
    """A key in the model's own settings: ``anthropic_api_key``, or ``extra_kwargs`` holding
    ``api_key`` (or a provider's ``<name>_api_key`` / ``_api_token``)."""
    if model.model_provider == "anthropic" and model.anthropic_api_key is not None:
        return True
    extra = model.extra_kwargs or {}
    return any(
        str(name).lower().endswith(("api_key", "api_token")) and value
        for name, value in extra.items()
    )


def missing_key(model: ModelConfig, environ: Mapping[str, str] | None = None) -> str | None:
    """The variable ``model`` would need but the environment lacks (None when it can call)."""
    env = os.environ if environ is None else environ
    names = key_variables(model)
    if not names or any(env.get(name) for name in names):
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
