"""Whether LangChain can build a model's chat model: its provider is one ``init_chat_model``
knows, and the provider's package is installed.

Checked before a run, so that a typo (``opnai:gpt-4.1-mini``) or a missing package is one
message with a suggestion instead of a failed call per question. LangChain keeps its provider
table private (``langchain.chat_models.base._BUILTIN_PROVIDERS``, provider -> module, class,
factory); when a LangChain release no longer has it in that shape, nothing is checked and
the calls report what LangChain says.
"""

from __future__ import annotations

import difflib
import functools
import importlib.util
from typing import TYPE_CHECKING

from pytest_karenina.llm.provider_keys import KEY_INTERFACES

if TYPE_CHECKING:
    from pytest_karenina.config.model import ModelConfig

COMMON_PROVIDERS = ("openai", "anthropic", "google_genai", "mistralai", "ollama")
"""Named as examples when a provider has no close match (not the whole list)."""
PROVIDERS_PAGE = "https://docs.langchain.com/oss/python/integrations/providers"
CLAUDE_MISSING = (
    "interface 'claude_tool' needs the anthropic package (pip install 'pytest-karenina[claude]')"
)
FALLBACK_MODULES = {"ollama": "langchain_community"}
"""Providers LangChain also builds from a second package when the first is missing."""


@functools.cache
def langchain_providers() -> dict[str, str] | None:
    """Provider -> the top-level module of its package, as ``init_chat_model`` knows them
    (None: LangChain's table is not where or what this module expects)."""
    try:
        from langchain.chat_models import base
    except ImportError:
        return None
    table = getattr(base, "_BUILTIN_PROVIDERS", None)
    if not isinstance(table, dict) or not table:
        return None
    found: dict[str, str] = {}
    for name, entry in table.items():
        if not isinstance(entry, tuple) or not entry or not isinstance(entry[0], str):
            return None
        found[str(name)] = entry[0].partition(".")[0]
    return found


def normalized(provider: str) -> str:
    """The provider's name as ``init_chat_model`` looks it up."""
    return provider.replace("-", "_").lower()


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def provider_problem(model: ModelConfig) -> str | None:
    """Why ``init_chat_model`` could not build ``model``'s chat model (or, for ``claude_tool``,
    why its SDK is missing), with how to fix it (None: it can, the model does not go through
    LangChain, or there is no table to check)."""
    if model.interface == "claude_tool":
        if _installed("anthropic"):
            return None
        return CLAUDE_MISSING
    if model.interface not in KEY_INTERFACES or not model.model_provider:
        return None
    providers = langchain_providers()
    if providers is None:
        return None
    provider = normalized(model.model_provider)
    if provider not in providers:
        close = difflib.get_close_matches(provider, providers, n=1, cutoff=0.6)
        if close:
            return (
                f"unknown LangChain provider {model.model_provider!r}; did you mean "
                f"{close[0]!r} ({close[0]}:{model.model_name})?"
            )
        return (
            f"unknown LangChain provider {model.model_provider!r} (providers are named as "
            f"init_chat_model takes them, e.g. {', '.join(COMMON_PROVIDERS)}: {PROVIDERS_PAGE})"
        )
    module = providers[provider]
    fallback = FALLBACK_MODULES.get(provider)
    if _installed(module) or (fallback is not None and _installed(fallback)):
        return None
    package = module.replace("_", "-")
    return f"provider {provider!r} needs the {package} package (pip install {package})"
