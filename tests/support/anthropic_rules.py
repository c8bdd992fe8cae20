"""Rules, faults, message bodies and SSE events of :mod:`tests.support.anthropic_server`.

Pure data and functions (no sockets, no threads). The server module's docstring documents
the whole API; this module decides *what* to answer, in the Anthropic Messages API's shapes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel

from .openai_rules import Body, RecordedRequest, Rule, count_tokens

AnthropicFaultKind: TypeAlias = Literal[
    "http_error",
    "timeout",
    "connection_reset",
    "malformed_body",
    "malformed_content",
    "empty_answer",
    "stream_cut",
    "stream_error",
]
TRANSPORT_FAULTS: frozenset[str] = frozenset(
    {"http_error", "timeout", "connection_reset", "malformed_body", "stream_cut", "stream_error"}
)
MALFORMED_BODY = b'{"id": "msg_broken", "type": "message", "content": ['
ERROR_TYPES: Mapping[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass(frozen=True)
class AnthropicFault:
    """A failure to answer with instead of a reply. Build one with the class methods."""

    kind: AnthropicFaultKind
    status: int = 500
    message: str = "injected fault"
    retry_after: float | None = None
    seconds: float = 30.0
    text: str = ""
    after_events: int = 3
    reset: bool = False
    error_type: str = "overloaded_error"

    @classmethod
    def http_error(
        cls, status: int, message: str = "injected HTTP error", *, retry_after: float | None = None
    ) -> AnthropicFault:
        """An Anthropic error JSON with this status (and a ``retry-after`` header)."""
        return cls("http_error", status=status, message=message, retry_after=retry_after)

    @classmethod
    def rate_limit(cls, retry_after: float = 1.0) -> AnthropicFault:
        """HTTP 429 ``rate_limit_error`` with ``retry-after`` (seconds)."""
        return cls.http_error(429, "injected rate limit", retry_after=retry_after)

    @classmethod
    def overloaded(cls, retry_after: float | None = 1.0) -> AnthropicFault:
        """HTTP 529 ``overloaded_error`` (with ``retry-after`` unless None)."""
        return cls.http_error(529, "Overloaded", retry_after=retry_after)

    @classmethod
    def server_error(cls, status: int = 500) -> AnthropicFault:
        """HTTP 500 (or another 5xx) ``api_error``."""
        return cls.http_error(status, f"injected server error {status}")

    @classmethod
    def timeout(cls, seconds: float = 30.0) -> AnthropicFault:
        """Send nothing for ``seconds`` (cut short when the server stops), then drop the socket."""
        return cls("timeout", seconds=seconds)

    @classmethod
    def connection_reset(cls) -> AnthropicFault:
        """Close the socket with a TCP reset, without any HTTP response."""
        return cls("connection_reset")

    @classmethod
    def malformed_body(cls) -> AnthropicFault:
        """HTTP 200, ``application/json``, a truncated JSON body."""
        return cls("malformed_body")

    @classmethod
    def malformed_content(cls, text: str = '{"verdict": tru') -> AnthropicFault:
        """A valid message whose only block is the text ``text`` (no tool_use, even if forced)."""
        return cls("malformed_content", text=text)

    @classmethod
    def empty_answer(cls) -> AnthropicFault:
        """A valid message with no content blocks."""
        return cls("empty_answer")

    @classmethod
    def stream_cut(
        cls, after_events: int = 3, *, reset: bool = False, text: str = "a partial answer"
    ) -> AnthropicFault:
        """Send the first ``after_events`` SSE events of a message for ``text``, then close the
        connection (a FIN, or an RST with ``reset``). A non-streaming request gets half its
        JSON body under the full ``Content-Length``, then the close."""
        return cls("stream_cut", after_events=after_events, reset=reset, text=text)

    @classmethod
    def stream_error(
        cls,
        after_events: int = 2,
        *,
        error_type: str = "overloaded_error",
        message: str = "Overloaded",
        text: str = "a partial answer",
    ) -> AnthropicFault:
        """Send ``after_events`` SSE events, then an ``event: error`` of ``error_type``. A
        non-streaming request gets the same error as an HTTP 529 (or 500) JSON."""
        return cls(
            "stream_error",
            after_events=after_events,
            error_type=error_type,
            message=message,
            text=text,
        )


@dataclass(frozen=True)
class ToolUse:
    """A ``tool_use`` block to answer with: the model calls ``name`` with ``input``."""

    name: str
    input: Mapping[str, Any]
    id: str | None = None


@dataclass(frozen=True)
class Turn:
    """An assistant message of several blocks, in order: ``str`` parts are text blocks,
    :class:`ToolUse` parts tool calls (``Turn("Let me look.", ToolUse("add", {...}))``)."""

    parts: tuple[str | ToolUse, ...]

    def __init__(self, *parts: str | ToolUse) -> None:
        object.__setattr__(self, "parts", tuple(parts))


@dataclass(eq=False)
class AnthropicRule(Rule):
    """A :class:`~tests.support.openai_rules.Rule` read against a Messages API body:
    ``contains`` searches the system prompt and every message's text, tool_use inputs and
    tool_result contents; ``role="tool"`` matches a last user turn of tool results;
    ``structured`` means tools or ``output_config.format`` are given;
    ``stop_reason`` overrides the computed one (``end_turn`` / ``tool_use``)."""

    stop_reason: str | None = None

    def matches(self, body: Body) -> bool:
        messages = messages_of(body)
        if self.model is not None and body.get("model") != self.model:
            return False
        if self.role is not None and last_role(messages) != self.role:
            return False
        if self.structured is not None and is_structured(body) != self.structured:
            return False
        haystack = request_text(body).casefold()
        if not all(needle.casefold() in haystack for needle in _as_tuple(self.contains)):
            return False
        last = message_text(messages[-1]).casefold() if messages else ""
        if not all(needle.casefold() in last for needle in _as_tuple(self.last_contains)):
            return False
        return self.when is None or bool(self.when(body))


def last_role(messages: Sequence[Mapping[str, Any]]) -> str | None:
    """The last message's role, ``tool`` for a user turn that carries tool results (what
    the OpenAI server's ``role="tool"`` rules match)."""
    if not messages:
        return None
    content = messages[-1].get("content")
    if isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    ):
        return "tool"
    role = messages[-1].get("role")
    return str(role) if role is not None else None


def _as_tuple(value: str | Sequence[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else tuple(value)


def messages_of(body: Body) -> list[dict[str, Any]]:
    messages = body.get("messages")
    return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []


def _block_text(block: object) -> str:
    if isinstance(block, str):
        return block
    if not isinstance(block, dict):
        return ""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "tool_use":
        return json.dumps(block.get("input", {}))
    if kind == "tool_result":
        return content_text(block.get("content"))
    return ""


def content_text(content: object) -> str:
    """The text of a content value: a string, or the text of each block, newline-joined."""
    if isinstance(content, list):
        return "\n".join(_block_text(block) for block in content)
    return _block_text(content)


def message_text(message: Mapping[str, Any]) -> str:
    return content_text(message.get("content"))


def request_text(body: Body) -> str:
    """The system prompt and all message texts, newline-joined (what ``contains`` searches)."""
    parts = [content_text(body.get("system"))] if body.get("system") else []
    return "\n".join(parts + [message_text(m) for m in messages_of(body)])


def is_structured(body: Body) -> bool:
    """True for calls asking for JSON: ``output_config.format`` given, or any tools."""
    config = body.get("output_config")
    if isinstance(config, dict) and isinstance(config.get("format"), dict):
        return True
    return bool(body.get("tools"))


def tool_names(body: Body) -> list[str]:
    return [str(t.get("name", "")) for t in body.get("tools") or [] if isinstance(t, dict)]


def _forced_tool(body: Body) -> str | None:
    """The tool ``tool_choice`` forces (``any`` forces the first), else None."""
    choice = body.get("tool_choice")
    names = tool_names(body)
    if not isinstance(choice, dict) or not names:
        return None
    if choice.get("type") == "tool":
        return str(choice.get("name"))
    return names[0] if choice.get("type") == "any" else None


def _as_json(value: object) -> object:
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else value


def _blocks_for(body: Body, value: object, rule: Rule | None, seq: int) -> list[Body]:
    if isinstance(value, ToolUse):
        value = Turn(value)
    if isinstance(value, Turn):
        blocks: list[Body] = []
        for i, part in enumerate(value.parts):
            if isinstance(part, ToolUse):
                block_id = part.id or f"toolu_test_{seq}_{i}"
                blocks.append(
                    {"type": "tool_use", "id": block_id, "name": part.name, "input": part.input}
                )
            else:
                blocks.append({"type": "text", "text": part})
        return blocks
    names = tool_names(body)
    choice = body.get("tool_choice")
    offered = bool(names) and not (isinstance(choice, dict) and choice.get("type") == "none")
    target = _forced_tool(body) or (rule.tool if rule is not None and offered else None)
    data = _as_json(value)
    if isinstance(data, str) and target is not None:
        try:
            data = json.loads(data)
        except ValueError:
            pass
    if offered and not isinstance(data, str) and target is None:
        target = names[0]
    if target is not None and isinstance(data, dict):
        return [{"type": "tool_use", "id": f"toolu_test_{seq}", "name": target, "input": data}]
    text = data if isinstance(data, str) else json.dumps(data)
    return [{"type": "text", "text": text}]


def build_message(body: Body, value: object, rule: Rule | None, seq: int) -> Body:
    """A Messages API ``message`` for a reply value (or a content-level fault)."""
    if isinstance(value, AnthropicFault):
        blocks = [] if value.kind == "empty_answer" else [{"type": "text", "text": value.text}]
    else:
        blocks = _blocks_for(body, value, rule, seq)
    uses_tool = any(b["type"] == "tool_use" for b in blocks)
    stop = "tool_use" if uses_tool else "end_turn"
    if isinstance(rule, AnthropicRule) and rule.stop_reason:
        stop = rule.stop_reason
    usage: dict[str, int] = {
        "input_tokens": count_tokens(request_text(body)),
        "output_tokens": count_tokens(content_text(blocks)),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    usage.update(rule.usage if rule is not None and rule.usage else {})
    return {
        "id": f"msg_test_{seq}",
        "type": "message",
        "role": "assistant",
        "model": str(body.get("model", "claude-test")),
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }


def _halves(text: str) -> list[str]:
    cut = len(text) // 2
    return [part for part in (text[:cut], text[cut:]) if part]


def stream_events(message: Body) -> list[tuple[str, Body]]:
    """The SSE events of a streamed message, as (event name, data): message_start, a ping,
    per block content_block_start / two deltas / content_block_stop, message_delta (stop
    reason, usage), message_stop."""
    usage = dict(message["usage"])
    head = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events: list[tuple[str, Body]] = [
        ("message_start", {"type": "message_start", "message": head}),
        ("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(message["content"]):
        if block["type"] == "tool_use":
            start = {**block, "input": {}}
            deltas = [
                {"type": "input_json_delta", "partial_json": part}
                for part in _halves(json.dumps(block["input"]))
            ]
        else:
            start = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": part} for part in _halves(block["text"])]
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
        )
        events += [
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
            for d in deltas
        ]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    events.append(("message_delta", {"type": "message_delta", "delta": delta, "usage": usage}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def sse_bytes(events: Sequence[tuple[str, Body]]) -> bytes:
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()


def error_body(status: int, message: str, seq: int | None = None, kind: str | None = None) -> Body:
    """An Anthropic error object for this HTTP status."""
    body: Body = {
        "type": "error",
        "error": {"type": kind or ERROR_TYPES.get(status, "api_error"), "message": message},
    }
    if seq is not None:
        body["request_id"] = f"req_test_{seq}"
    return body


@dataclass(frozen=True)
class AnthropicRequest(RecordedRequest):
    """One request as the server saw it (credentials redacted), read as a Messages API call."""

    @property
    def text(self) -> str:
        return request_text(self.body) if isinstance(self.body, dict) else ""

    @property
    def structured(self) -> bool:
        return isinstance(self.body, dict) and is_structured(self.body)

    @property
    def stream(self) -> bool:
        return isinstance(self.body, dict) and bool(self.body.get("stream"))

    @property
    def tools(self) -> list[str]:
        return tool_names(self.body) if isinstance(self.body, dict) else []

    @property
    def tool_results(self) -> list[dict[str, Any]]:
        """The tool_result blocks of the last message."""
        messages = self.messages
        content = messages[-1].get("content") if messages else None
        if not isinstance(content, list):
            return []
        return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


def describe_request(body: Body) -> str:
    messages = messages_of(body)
    last = messages[-1] if messages else {}
    return (
        f"(model={body.get('model')!r}, structured={is_structured(body)}, "
        f"{len(messages)} messages, last {last.get('role')!r}: {message_text(last)[:300]!r})"
    )
