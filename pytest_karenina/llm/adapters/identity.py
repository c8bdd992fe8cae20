"""What identifies a configured model's output in replay keys."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_karenina.config.secrets import without_userinfo

if TYPE_CHECKING:
    from pytest_karenina.config.model import ModelConfig


def config_identity(config: ModelConfig) -> dict[str, Any]:
    """Interface, provider, model name and the parameters that change output; for an
    ``openai_endpoint`` model also its base URL. Never a key.

    Every recording made so far is keyed on exactly these fields: changing them is a
    migration of every replay store.
    """
    identity: dict[str, Any] = {
        "adapter": config.interface,
        "provider": config.model_provider,
        "model": config.model_name,
        "temperature": config.temperature,
        "max_tokens": config.max_tokens,
    }
    if config.interface == "openai_endpoint":
        url = config.endpoint_base_url
        identity["base_url"] = without_userinfo(url) if url else url
    return identity
