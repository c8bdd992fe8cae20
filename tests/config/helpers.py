"""Small builders for configuration tests."""

from __future__ import annotations

from typing import Any

from pytest_karenina.config.verification import VerificationConfig

CANARY = "sk-canary-7f3e9a1b2c4d"
"""A key that must never show up in text meant for people or files."""


def model(**overrides: Any) -> dict[str, Any]:
    """A valid langchain model entry, as JSON-like data."""
    return {"id": "gpt", "model_provider": "openai", "model_name": "gpt-4o", **overrides}


def config(**overrides: Any) -> VerificationConfig:
    """A valid one-answerer, one-judge configuration with ``overrides``."""
    data: dict[str, Any] = {"answering_models": [model()], "parsing_models": [model(id="judge")]}
    data.update(overrides)
    return VerificationConfig(**data)
