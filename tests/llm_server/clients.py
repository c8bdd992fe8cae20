"""Real langchain-openai clients pointed at the scripted server."""

from __future__ import annotations

from typing import Any

from langchain_openai import ChatOpenAI
from pydantic import BaseModel, Field

from tests.support.openai_server import OpenAIServer

API_KEY = "test-key"


class Verdict(BaseModel):
    """A judge's verdict on an answer."""

    correct: bool
    score: int = Field(ge=0, le=10)
    reason: str


def chat(server: OpenAIServer, **overrides: Any) -> ChatOpenAI:
    """ChatOpenAI over real HTTP to ``server``: no retries, a 10 s timeout unless overridden."""
    options: dict[str, Any] = {
        "base_url": server.base_url,
        "api_key": API_KEY,
        "model": "test-model",
        "max_retries": 0,
        "timeout": 10.0,
    }
    return ChatOpenAI(**(options | overrides))
