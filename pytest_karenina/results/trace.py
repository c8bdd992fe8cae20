"""Karenina's textual trace format (spec 5.9): rendering messages and reading the final answer.

A trace is a sequence of blocks separated by a blank line. Each block starts with a header line::

    --- Thinking ---
    --- AI Message ---
    --- Tool Message (call_id: <id>) ---

User and system messages are not rendered. An AI message with tool calls ends with::

    Tool Calls:
      <name> (call_<id>)
       Call ID: <id>
       Args: <input>

A plain (non-agent) answer is therefore ``"--- AI Message ---\\n" + text``.

A result stores a trace's structured messages (``trace_messages``) and its text
(``raw_llm_response``); a tool result longer than :data:`TOOL_PREVIEW` is held whole in the
messages only, its text cut to a preview there (:func:`stored_trace_text`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

AI_HEADER = "--- AI Message ---"
THINKING_HEADER = "--- Thinking ---"
TOOL_HEADER = "--- Tool Message (call_id: {call_id}) ---"
BLOCK_SEPARATOR = "\n\n"
TOOL_CALLS_MARKER = "Tool Calls:"
TOOL_PREVIEW = 2_000
"""Characters of a tool result that a stored trace text keeps (see :func:`stored_trace_text`)."""

_AI_ROLES = frozenset({"assistant", "ai"})


class TraceError(ValueError):
    """The final AI message cannot be extracted from a trace (the message says why)."""


def render_trace(messages: Sequence[Mapping[str, Any]], *, tool_preview: int | None = None) -> str:
    """Render ``trace_messages`` dicts as trace text.

    Message dicts are ``{role, content, block_index[, tool_calls][, tool_result][, thinking]}``
    as stored in ``template.trace_messages``:

    * ``assistant`` (or ``ai``): an optional ``--- Thinking ---`` block with ``thinking``, then
      an AI block with ``content`` and the ``Tool Calls:`` section for ``tool_calls``
      (``[{id, name, input}]``; the ``Args:`` line only when ``input`` is non-empty). An
      assistant message with neither text nor tool calls renders no AI block.
    * ``tool``: a tool block for ``tool_result.tool_use_id`` (or ``tool_call_id``), its
      ``content`` prefixed with ``[ERROR] `` when ``tool_result.is_error``.
    * ``user`` / ``system``: omitted.

    With ``tool_preview``, a tool result longer than that keeps its first ``tool_preview``
    characters and a line saying how many more are in ``trace_messages[<index>]``.
    """
    blocks: list[str] = []
    for index, message in enumerate(messages):
        role = str(message.get("role", ""))
        if role in _AI_ROLES:
            blocks.extend(_assistant_blocks(message))
        elif role == "tool":
            blocks.append(_tool_block(message, index, tool_preview))
    return BLOCK_SEPARATOR.join(blocks)


def stored_trace_text(text: str, messages: Sequence[Mapping[str, Any]]) -> str:
    """The trace text a result stores for ``text`` (``raw_llm_response``, or the evaluation
    input when the judge read the whole trace): when ``text`` is the rendering of
    ``messages`` and a tool result in them is longer than :data:`TOOL_PREVIEW`, the
    rendering with tool results cut to that preview (they are whole in ``trace_messages``,
    so an export holds them once); otherwise ``text`` itself."""
    if not all(isinstance(message, Mapping) for message in messages):
        return text
    long = any(
        message.get("role") == "tool" and len(content_text(message.get("content"))) > TOOL_PREVIEW
        for message in messages
    )
    if not long or text != render_trace(messages):
        return text
    return render_trace(messages, tool_preview=TOOL_PREVIEW)


def content_text(content: Any) -> str:
    """Message text: a string, or the text parts of a list of content parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        parts = [
            part if isinstance(part, str) else str(part.get("text", ""))
            for part in content
            if isinstance(part, str) or (isinstance(part, Mapping) and part.get("type") == "text")
        ]
        return "\n".join(parts)
    return str(content)


def _assistant_blocks(message: Mapping[str, Any]) -> list[str]:
    blocks: list[str] = []
    thinking = message.get("thinking")
    if thinking:
        blocks.append(f"{THINKING_HEADER}\n{thinking}")
    body = content_text(message.get("content"))
    tool_calls = message.get("tool_calls") or []
    if tool_calls:
        lines = ["", TOOL_CALLS_MARKER]
        for call in tool_calls:
            call_id = call.get("id", "")
            lines.append(f"  {call.get('name', '')} (call_{call_id})")
            lines.append(f"   Call ID: {call_id}")
            if call.get("input"):
                lines.append(f"   Args: {call['input']}")
        body += "\n".join(lines)
    if body:
        blocks.append(f"{AI_HEADER}\n{body}")
    return blocks


def _tool_block(message: Mapping[str, Any], index: int, preview: int | None) -> str:
    result = message.get("tool_result") or {}
    call_id = result.get("tool_use_id", message.get("tool_call_id", ""))
    content = content_text(message.get("content"))
    if preview is not None and len(content) > preview:
        more = len(content) - preview
        content = f"{content[:preview]}\n[... {more:,} more characters: trace_messages[{index}]]"
    if result.get("is_error"):
        content = f"[ERROR] {content}"
    return f"{TOOL_HEADER.format(call_id=call_id)}\n{content}"


def final_ai_message(trace: str) -> str:
    """The text of the last AI message of ``trace``, without its ``Tool Calls:`` section.

    Blocks are found by header lines (starting with ``--- `` and ending with `` ---``). Text
    without any header is a plain answer and is returned whole (stripped). Raises
    :class:`TraceError` with Karenina's message when the trace is empty
    (``"Empty or whitespace-only trace"``), when the last block is not an AI message
    (``"Last message in trace is not an AI message"``) or when that message has no text
    (``"Final AI message has no text content (only tool calls)"``).
    """
    if not trace or not trace.strip():
        raise TraceError("Empty or whitespace-only trace")
    text = trace.strip()
    last_header: str | None = None
    last_lines: list[str] = []
    for line in text.split("\n"):
        if line.startswith("--- ") and line.endswith(" ---"):
            last_header, last_lines = line, []
        elif last_header is not None:
            last_lines.append(line)
    if last_header is None:
        return text
    if not last_header.startswith("--- AI Message"):
        raise TraceError("Last message in trace is not an AI message")
    content = "\n".join(last_lines).strip()
    if f"\n{TOOL_CALLS_MARKER}" in content:
        content = content.split(f"\n{TOOL_CALLS_MARKER}")[0].strip()
    elif content.startswith(TOOL_CALLS_MARKER):
        content = ""
    if not content:
        raise TraceError("Final AI message has no text content (only tool calls)")
    return content


def prepare_evaluation_input(raw_response: str, use_full_trace: bool) -> tuple[str, str | None]:
    """``(evaluation_input, error)`` for template or rubric evaluation.

    With ``use_full_trace`` the raw response is used as is. Otherwise the final AI message; if
    that cannot be extracted the raw response is returned together with the error
    ``"Failed to extract final AI message: <reason>"`` and the caller decides what to do.
    """
    if use_full_trace:
        return raw_response, None
    try:
        return final_ai_message(raw_response), None
    except TraceError as exc:
        return raw_response, f"Failed to extract final AI message: {exc}"
