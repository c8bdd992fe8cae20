"""Running the real Claude Code CLI (``claude_agent_sdk``) against the scripted Anthropic server.

The CLI's requests differ from a plain client's: its first request ends with a ``system``
message of its own (its environment), and tool results come back in a ``user`` message; so
rules tell turns apart by what the conversation holds (:func:`answered`, :func:`fresh`)
rather than by the last message's role. Tests that start the CLI are marked
``subprocess``; :data:`needs_claude_extra` skips them, naming the install command, where
the package (which bundles the CLI) is missing.
"""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from .anthropic_rules import messages_of
from .anthropic_server import AnthropicServer

FAKE_KEY = "sk-ant-fake-0123456789abcdef"
"""The explicit fake key the tests give the CLI; no artifact may hold it."""

needs_claude_extra = pytest.mark.skipif(
    find_spec("claude_agent_sdk") is None,
    reason="claude_agent_sdk tests need the claude extra: pip install -e '.[claude]'",
)


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``tool_result`` blocks of a request, oldest first."""
    return [
        block
        for message in messages_of(body)
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def fresh(body: dict[str, Any]) -> bool:
    """The run's first model call: no tool has answered yet."""
    return not tool_results(body)


def answered(body: dict[str, Any]) -> bool:
    """A model call after at least one tool result."""
    return bool(tool_results(body))


def last_result(body: dict[str, Any]) -> str:
    """The text of the newest tool result."""
    content = tool_results(body)[-1].get("content")
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


def claude_model(server: AnthropicServer, name: str, **settings: Any) -> dict[str, Any]:
    """A ``claude_agent_sdk`` model at the scripted server (server-side model ``name``), with
    the fake key and no retries (a failing call fails at once)."""
    no_retries = {"max_attempts": 0}
    return {
        "id": name, "model_name": name, "interface": "claude_agent_sdk",
        "anthropic_base_url": server.base_url, "anthropic_api_key": FAKE_KEY,
        "retry_policy": {"connection": no_retries, "timeout": no_retries,
                         "rate_limit": no_retries, "server_error": no_retries},
        **settings,
    }  # fmt: skip


def files_holding(root: Path, secret: str) -> list[Path]:
    """Every file under ``root`` whose bytes contain ``secret``."""
    needle = secret.encode()
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]
