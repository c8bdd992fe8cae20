"""Agent conversations into Karenina's ``trace_messages`` (see :mod:`..agent_ports`).

Two inputs have the same shape once dumped: LangChain messages of a live run
(``message.model_dump()``: ``type`` ``human``/``ai``/``tool``/``system``, content as text or
blocks, ``tool_calls``, ``tool_call_id``, ``status``, ``usage_metadata``) and recorded
traces, either such dumps or Karenina's own ``{role, content, tool_calls, tool_result}``
dicts (kept as they are). User and system turns are not part of a trace.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pytest_karenina.llm.ports import Usage
from pytest_karenina.results.text import encodable
from pytest_karenina.results.trace import content_text

_ROLES = {"ai": "assistant", "AIMessageChunk": "assistant", "tool": "tool"}


def _thinking(content: Any) -> str | None:
    if not isinstance(content, Sequence) or isinstance(content, str):
        return None
    parts = [
        str(part.get("thinking") or part.get("text") or "")
        for part in content
        if isinstance(part, Mapping) and part.get("type") in ("thinking", "reasoning")
    ]
    return "\n".join(p for p in parts if p) or None


def _calls(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    calls = [
        {"id": str(call.get("id") or ""), "name": str(call.get("name") or ""),
         "input": call.get("args", call.get("input")) or {}}
        for call in record.get("tool_calls") or []
        if isinstance(call, Mapping)
    ]  # fmt: skip
    if calls:
        return calls
    content = record.get("content")
    if isinstance(content, Sequence) and not isinstance(content, str):
        return [
            {"id": str(block.get("id") or ""), "name": str(block.get("name") or ""),
             "input": block.get("input") or {}}
            for block in content
            if isinstance(block, Mapping) and block.get("type") == "tool_use"
        ]  # fmt: skip
    return []


def trace_message(record: Mapping[str, Any], index: int) -> dict[str, Any] | None:
    """One trace message from a dumped LangChain message or a Karenina trace dict (None for
    user and system turns)."""
    if "role" in record:
        if record["role"] not in ("assistant", "ai", "tool"):
            return None
        return {**record, "content": encodable(content_text(record.get("content"))),
                "block_index": index}  # fmt: skip
    role = _ROLES.get(str(record.get("type")))
    if role is None:
        return None
    message: dict[str, Any] = {
        "role": role,
        "content": encodable(content_text(record.get("content"))),
        "block_index": index,
    }
    if role == "assistant":
        calls = _calls(record)
        if calls:
            message["tool_calls"] = calls
        thinking = _thinking(record.get("content"))
        if thinking:
            message["thinking"] = encodable(thinking)
        return message
    message["name"] = record.get("name")
    message["tool_result"] = {
        "tool_use_id": str(record.get("tool_call_id") or ""),
        "is_error": record.get("status") == "error",
    }
    return message


def trace_messages(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The trace of a conversation, numbered from 0 (user and system turns left out)."""
    found: list[dict[str, Any]] = []
    for record in records:
        message = trace_message(record, len(found))
        if message is not None:
            found.append(message)
    return found


def conversation_usage(records: Iterable[Mapping[str, Any]]) -> Usage:
    """Tokens summed over every model turn's ``usage_metadata``."""
    total = Usage()
    for record in records:
        metadata = record.get("usage_metadata") or {}
        if metadata:
            total = total + Usage(metadata.get("input_tokens"), metadata.get("output_tokens"))
    return total


def final_answer(trace: Sequence[Mapping[str, Any]]) -> str:
    """The text of the last assistant message that has text."""
    for message in reversed(trace):
        if message.get("role") in ("assistant", "ai") and content_text(message.get("content")):
            return content_text(message.get("content"))
    return ""


def tool_input_text(value: Any) -> str:
    """A tool call's input as one line of JSON (for prompts and reports)."""
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return str(value)
