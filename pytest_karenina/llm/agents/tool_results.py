"""The cap on an MCP tool result, applied before the model or the trace sees it.

A tool result's content blocks keep at most :data:`RESULT_LIMIT` characters (text, or the
base64 data of an image, an audio clip or a binary resource) in order: the block that crosses
the limit is cut when it is text and dropped otherwise, later blocks are dropped, and a last
text block says how many characters were dropped. A capped result loses its
``structuredContent`` (servers such as FastMCP repeat the text there).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.types import CallToolResult

RESULT_LIMIT = 100_000
"""Characters of one tool result kept (about 25,000 tokens)."""


def block_size(block: Any) -> int:
    """The characters a content block carries: its text, data or blob."""
    for field in ("text", "data", "blob"):
        value = getattr(block, field, None)
        if isinstance(value, str):
            return len(value)
    resource = getattr(block, "resource", None)
    return block_size(resource) if resource is not None else 0


def dropped_note(dropped: int, total: int, limit: int) -> str:
    return (
        f"[pytest-karenina: {dropped:,} of the {total:,} characters of this tool result were "
        f"dropped; tool results are capped at {limit:,} characters]"
    )


def capped_result(result: CallToolResult, limit: int = RESULT_LIMIT) -> CallToolResult:
    """``result`` with its content cut to ``limit`` characters (itself when it fits)."""
    from mcp.types import TextContent

    total = sum(block_size(block) for block in result.content)
    if total <= limit:
        return result
    kept: list[Any] = []
    used = 0
    for block in result.content:
        size = block_size(block)
        if used + size <= limit:
            kept.append(block)
            used += size
            continue
        if isinstance(block, TextContent) and used < limit:
            kept.append(block.model_copy(update={"text": block.text[: limit - used]}))
            used = limit
        break  # a later, smaller block would read as if it followed this one
    note = TextContent(type="text", text=dropped_note(total - used, total, limit))
    return result.model_copy(update={"content": [*kept, note], "structuredContent": None})
