"""A Claude Code run's messages (``claude-agent-sdk`` message objects) into ``trace_messages``
and token usage (see :mod:`..agent_ports` for the trace shape).

The CLI reports each content block of a model reply as its own ``AssistantMessage``, all
with the reply's ``message_id``: they are merged back into one assistant turn (its text, its
thinking and its tool calls), so a turn is one model call. A ``UserMessage`` holding
``ToolResultBlock`` s gives one ``tool`` message per result, named after its call; other user
turns (the prompt, the CLI's "[Request interrupted by user]") and system messages are not part
of a trace.

Tool results that are refusals rather than results count as errors (``is_error``): the
CLI's permission denials (a path out of the workspace, a write by a read-only judge) and the
tool call limit's refusals, whose text becomes the limit's own wording
(:data:`~pytest_karenina.results.agent_metrics` counts them as refused, not failed).

Messages are read by attribute, duck-typed: this module never imports the SDK.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pytest_karenina.llm.ports import Usage
from pytest_karenina.results.text import encodable
from pytest_karenina.results.trace import content_text

TOOL_LIMIT_REFUSAL = "Tool call limit exceeded. Do not make additional tool calls."
"""What a call refused by the tool call limit gets as its result (LangChain's wording)."""
PERMISSION_DENIED = "Permission to use "
"""How the CLI's result for a call its permission rules denied begins."""


def _kind(message: Any) -> str:
    return type(message).__name__


def _blocks(message: Any) -> list[Any]:
    content = getattr(message, "content", None)
    return list(content) if isinstance(content, list) else []


def _assistant(messages: Sequence[Any], index: int) -> dict[str, Any]:
    texts: list[str] = []
    thinking: list[str] = []
    calls: list[dict[str, Any]] = []
    for message in messages:
        for block in _blocks(message):
            kind = _kind(block)
            if kind == "TextBlock":
                texts.append(str(block.text))
            elif kind == "ThinkingBlock":
                thinking.append(str(block.thinking))
            elif kind in ("ToolUseBlock", "ServerToolUseBlock"):
                calls.append({"id": str(block.id), "name": str(block.name),
                              "input": dict(block.input or {})})  # fmt: skip
    turn: dict[str, Any] = {
        "role": "assistant",
        "content": encodable("\n".join(t for t in texts if t)),
        "block_index": index,
    }
    if calls:
        turn["tool_calls"] = calls
    if any(thinking):
        turn["thinking"] = encodable("\n".join(t for t in thinking if t))
    return turn


def _tool(block: Any, name: str | None, refused: bool, index: int) -> dict[str, Any]:
    text = TOOL_LIMIT_REFUSAL if refused else content_text(getattr(block, "content", None))
    error = bool(getattr(block, "is_error", False)) or refused or text.startswith(PERMISSION_DENIED)
    return {
        "role": "tool",
        "content": encodable(text),
        "block_index": index,
        "name": name,
        "tool_result": {"tool_use_id": str(block.tool_use_id), "is_error": error},
    }


def _own_reply(message: Any) -> bool:
    """Whether an ``AssistantMessage`` is a reply of the model to the run: not a sub-agent's,
    nor the text the CLI makes up for a failed call (``API Error: ...``, with ``error``
    set), which the run's result reports instead."""
    return getattr(message, "parent_tool_use_id", None) is None and not getattr(
        message, "error", None
    )


def trace_messages(
    messages: Iterable[Any], refused: frozenset[str] = frozenset()
) -> list[dict[str, Any]]:
    """The trace of a run's messages; ``refused``: the ids of the tool calls the tool call
    limit refused."""
    trace: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    pending: list[Any] = []

    def flush() -> None:
        if pending:
            turn = _assistant(pending, len(trace))
            names.update((c["id"], c["name"]) for c in turn.get("tool_calls", []))
            trace.append(turn)
            pending.clear()

    for message in messages:
        kind = _kind(message)
        if kind == "AssistantMessage" and _own_reply(message):
            if pending and getattr(pending[-1], "message_id", None) != getattr(
                message, "message_id", None
            ):
                flush()
            pending.append(message)
        elif kind == "UserMessage":
            results = [b for b in _blocks(message) if _kind(b) == "ToolResultBlock"]
            if results:
                flush()
            for block in results:
                call = str(block.tool_use_id)
                trace.append(_tool(block, names.get(call), call in refused, len(trace)))
    flush()
    return trace


def _usage(data: Any) -> Usage:
    if not isinstance(data, dict):
        return Usage()
    sent = [data.get(name) for name in ("input_tokens", "cache_creation_input_tokens",
                                        "cache_read_input_tokens")]  # fmt: skip
    counted = [int(n) for n in sent if isinstance(n, int)]
    output = data.get("output_tokens")
    return Usage(sum(counted) if counted else None, output if isinstance(output, int) else None)


def run_usage(messages: Sequence[Any]) -> Usage:
    """Tokens of the whole run: the CLI's own total (its result message), else the sum over
    each model reply's usage as reported when the reply started (a run that never ended
    may then undercount the output tokens of its last reply). Input tokens include the
    cached ones (read and written), as LangChain counts them."""
    for message in reversed(messages):
        if _kind(message) == "ResultMessage" and isinstance(getattr(message, "usage", None), dict):
            return _usage(message.usage)
    per_reply: dict[str, Any] = {}
    for message in messages:
        if _kind(message) == "AssistantMessage" and getattr(message, "usage", None):
            per_reply[str(getattr(message, "message_id", None) or id(message))] = message.usage
    total = Usage()
    for data in per_reply.values():
        total = total + _usage(data)
    return total


def reply_model(messages: Sequence[Any]) -> str | None:
    """The model that wrote the last reply, as the server named it."""
    for message in reversed(messages):
        if _kind(message) == "AssistantMessage" and getattr(message, "model", None):
            return str(message.model)
    return None
