"""LLM access: ports, adapters, structured output, transport and record/replay.

Importing this package loads no provider SDK; adapters import theirs on first use.
"""

from pytest_karenina.llm.ports import (
    ChatMessage,
    ChatPort,
    ChatResponse,
    LLMCallError,
    ModelReply,
    ModelRequest,
    RawModel,
    StructuredPort,
    StructuredResponse,
    Usage,
)

__all__ = [
    "ChatMessage",
    "ChatPort",
    "ChatResponse",
    "LLMCallError",
    "ModelReply",
    "ModelRequest",
    "RawModel",
    "StructuredPort",
    "StructuredResponse",
    "Usage",
]
