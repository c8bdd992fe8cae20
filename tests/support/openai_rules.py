"""Rules, faults, response bodies and request records for :mod:`tests.support.openai_server`.

Pure data and functions (no sockets, no threads). The server module's docstring documents
the whole API; this module holds the parts that decide *what* to answer and what is logged.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel

Body: TypeAlias = dict[str, Any]
"""A parsed chat-completions request or response body."""

Reply: TypeAlias = object
"""What a rule answers: ``str`` | :class:`Fault` | pydantic model instance | JSON value, or a
callable taking the parsed request body and returning one of those."""

FaultKind: TypeAlias = Literal[
    "http_error",
    "timeout",
    "connection_reset",
    "malformed_body",
    "malformed_content",
    "missing_field",
    "empty_answer",
]
TRANSPORT_FAULTS: frozenset[str] = frozenset(
    {"http_error", "timeout", "connection_reset", "malformed_body"}
)
CREATED = 1_700_000_000  # fixed "created" timestamp: responses are deterministic
MALFORMED_BODY = b'{"id": "chatcmpl-broken", "object": "chat.completion", "choices": ['


@dataclass(frozen=True)
class ToolCalls:
    """A reply calling several tools at once: ``(name, arguments)`` pairs, in order (the
    calls' ids are ``call_test_<seq>_<index>``)."""

    calls: tuple[tuple[str, Mapping[str, Any]], ...]


@dataclass(frozen=True)
class Fault:
    """A failure to answer with instead of a reply. Build one with the class methods."""

    kind: FaultKind
    status: int = 500
    message: str = "injected fault"
    retry_after: float | None = None
    seconds: float = 30.0
    text: str = ""
    path: str = "choices"

    @classmethod
    def http_error(
        cls, status: int, message: str = "injected HTTP error", *, retry_after: float | None = None
    ) -> Fault:
        """An OpenAI-style error JSON with this HTTP status (and a Retry-After header)."""
        return cls("http_error", status=status, message=message, retry_after=retry_after)

    @classmethod
    def rate_limit(cls, retry_after: float = 1.0) -> Fault:
        """HTTP 429 with ``Retry-After: <retry_after>`` (seconds)."""
        return cls.http_error(429, "injected rate limit", retry_after=retry_after)

    @classmethod
    def server_error(cls, status: int = 500) -> Fault:
        """HTTP 500 (or 502/503/...) with an OpenAI-style error JSON."""
        return cls.http_error(status, f"injected server error {status}")

    @classmethod
    def timeout(cls, seconds: float = 30.0) -> Fault:
        """Send nothing for ``seconds`` (cut short when the server stops), then drop the socket."""
        return cls("timeout", seconds=seconds)

    @classmethod
    def connection_reset(cls) -> Fault:
        """Close the socket with a TCP reset, without any HTTP response."""
        return cls("connection_reset")

    @classmethod
    def malformed_body(cls) -> Fault:
        """HTTP 200, ``Content-Type: application/json``, but the body is truncated JSON."""
        return cls("malformed_body")

    @classmethod
    def malformed_content(cls, text: str = '{"verdict": tru') -> Fault:
        """A valid completion whose content (or forced tool-call arguments) is ``text``."""
        return cls("malformed_content", text=text)

    @classmethod
    def missing_field(cls, path: str = "choices", text: str = "") -> Fault:
        """A valid completion with the dotted ``path`` (e.g. ``choices.0.message``) removed."""
        return cls("missing_field", path=path, text=text)

    @classmethod
    def empty_answer(cls) -> Fault:
        """A valid completion with ``content: ""`` and no tool call."""
        return cls("empty_answer")


def _as_tuple(value: str | Sequence[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else tuple(value)


@dataclass(eq=False)
class Rule:
    """A predicate on the request and the reply to give when it holds (see module docs)."""

    reply: Reply
    contains: str | Sequence[str] | None = None
    last_contains: str | Sequence[str] | None = None
    model: str | None = None
    role: str | None = None
    structured: bool | None = None
    when: Callable[[Body], bool] | None = None
    times: int | None = None
    latency: float | None = None
    usage: Mapping[str, int] | None = None
    finish_reason: str | None = None
    tool: str | None = None
    faults: Sequence[Fault] = ()
    fault_rate: float = 0.0
    name: str | None = None
    uses: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        if isinstance(self.reply, type):
            raise TypeError(f"reply must be a value or a callable on the body, not {self.reply}")
        if self.times is not None and self.times < 1:
            raise ValueError("times must be >= 1")
        if self.latency is not None and self.latency < 0:
            raise ValueError("latency must be >= 0")
        if bool(self.faults) != (self.fault_rate > 0) or not 0 <= self.fault_rate <= 1:
            raise ValueError("give faults together with a fault_rate in (0, 1]")

    @property
    def exhausted(self) -> bool:
        return self.times is not None and self.uses >= self.times

    @property
    def label(self) -> str:
        if self.name:
            return self.name
        parts = [
            f"{key}={value!r}"
            for key in ("contains", "last_contains", "model", "role", "structured", "times")
            if (value := getattr(self, key)) is not None
        ]
        return f"Rule({', '.join(parts)})"

    def matches(self, body: Body) -> bool:
        messages = messages_of(body)
        if self.model is not None and body.get("model") != self.model:
            return False
        if self.role is not None and (not messages or messages[-1].get("role") != self.role):
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


def messages_of(body: Body) -> list[dict[str, Any]]:
    messages = body.get("messages")
    return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []


def message_text(message: Mapping[str, Any]) -> str:
    """A message's text: string content, or the ``text`` parts of a list content."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def request_text(body: Body) -> str:
    """All message texts of a request, joined by newlines (what ``contains`` searches)."""
    return "\n".join(message_text(m) for m in messages_of(body))


def is_structured(body: Body) -> bool:
    """True for calls asking for JSON: ``response_format`` json_schema/json_object, or tools."""
    response_format = body.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") in (
        "json_schema",
        "json_object",
    ):
        return True
    return bool(body.get("tools"))


def count_tokens(text: str) -> int:
    """Deterministic stand-in for a tokenizer: one token per whitespace-separated word."""
    return len(text.split())


def resolve(reply: Reply, body: Body) -> object:
    """The reply value for this request (calls a callable reply with the body)."""
    return reply(body) if callable(reply) else reply


def _to_text(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    return json.dumps(value)


def _tool_to_call(body: Body, value: object, rule: Rule | None) -> str | None:
    """The function a reply should call, or None when the reply is plain content."""
    names = [
        t["function"].get("name", "")
        for t in body.get("tools") or []
        if isinstance(t, dict) and isinstance(t.get("function"), dict)
    ]
    choice = body.get("tool_choice")
    if not names or choice == "none":
        return None
    forced = choice.get("function", {}).get("name") if isinstance(choice, dict) else None
    if rule is not None and rule.tool:
        return rule.tool
    if isinstance(value, str) and forced is None and choice != "required":
        return None  # text answer to a call that merely offers tools
    return str(forced or names[0])


def build_completion(body: Body, value: object, rule: Rule | None, seq: int) -> Body:
    """A ``chat.completion`` for ``value`` (a reply value or a content-level :class:`Fault`)."""
    fault = value if isinstance(value, Fault) else None
    if fault is not None:
        value = fault.text
    tool = None
    if (fault is None or fault.kind != "empty_answer") and not isinstance(value, ToolCalls):
        tool = _tool_to_call(body, value, rule)
    text = _to_text(value) if not isinstance(value, ToolCalls) else ""
    message: Body = {"role": "assistant", "content": text, "refusal": None}
    finish = "stop"
    if isinstance(value, ToolCalls):
        message["content"] = None
        message["tool_calls"] = [
            {"id": f"call_test_{seq}_{index}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(arguments)}}
            for index, (name, arguments) in enumerate(value.calls)
        ]  # fmt: skip
        text = " ".join(json.dumps(arguments) for _, arguments in value.calls)
        finish = "tool_calls"
    if tool is not None:
        message["content"] = None
        message["tool_calls"] = [
            {
                "id": f"call_test_{seq}",
                "type": "function",
                "function": {"name": tool, "arguments": text},
            }
        ]
        finish = "stop" if isinstance(body.get("tool_choice"), dict) else "tool_calls"
    usage = {
        "prompt_tokens": count_tokens(request_text(body)),
        "completion_tokens": count_tokens(text),
    }
    usage.update(rule.usage if rule is not None and rule.usage else {})
    usage.setdefault("total_tokens", usage["prompt_tokens"] + usage["completion_tokens"])
    completion: Body = {
        "id": f"chatcmpl-test-{seq}",
        "object": "chat.completion",
        "created": CREATED,
        "model": str(body.get("model", "test-model")),
        "system_fingerprint": "fp_openai_test_server",
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": (rule.finish_reason if rule and rule.finish_reason else finish),
            }
        ],
        "usage": usage,
    }
    return completion  # the caller drops a missing_field fault's path


def drop_path(obj: object, path: str) -> None:
    """Delete the dotted ``path`` (list indices as integers) from ``obj``; ignore if absent."""
    *parents, last = path.split(".")
    for key in parents:
        if isinstance(obj, dict):
            obj = obj.get(key)
        elif isinstance(obj, list) and key.isdigit() and int(key) < len(obj):
            obj = obj[int(key)]
        else:
            return
    if isinstance(obj, dict):
        obj.pop(last, None)
    elif isinstance(obj, list) and last.isdigit() and int(last) < len(obj):
        del obj[int(last)]


def stream_chunks(completion: Body, include_usage: bool) -> list[Body]:
    """The ``chat.completion.chunk`` events for a completion: one delta, finish, usage."""
    head: Body = {k: completion[k] for k in ("id", "created", "model") if k in completion}
    head["object"] = "chat.completion.chunk"
    choices = completion.get("choices") or [{}]
    message = dict(choices[0].get("message") or {})
    message.pop("refusal", None)
    if "tool_calls" in message:
        message["tool_calls"] = [dict(c, index=i) for i, c in enumerate(message["tool_calls"])]
    finish = choices[0].get("finish_reason", "stop")
    chunks: list[Body] = [
        {**head, "choices": [{"index": 0, "delta": message, "finish_reason": None}]},
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
    ]
    if include_usage and "usage" in completion:
        chunks.append({**head, "choices": [], "usage": completion["usage"]})
    return chunks


def error_body(message: str, kind: str, code: str | None = None) -> Body:
    """An OpenAI-style error object."""
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


_SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "api-key", "x-api-key", "openai-api-key"}
)


def redact_header(name: str, value: str) -> str:
    """A header value fit for the log: credentials become ``<scheme> <redacted>``."""
    if name.lower() not in _SECRET_HEADERS:
        return value
    scheme, _, rest = value.partition(" ")
    return f"{scheme} <redacted>" if rest else "<redacted>"


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server saw it (credentials redacted)."""

    index: int
    method: str
    path: str
    headers: Mapping[str, str]
    body: Any  # parsed JSON; None when the body was empty or not JSON
    rule: str | None = None  # label of the rule that answered
    fault: str | None = None  # kind of the fault injected, if any

    @property
    def messages(self) -> list[dict[str, Any]]:
        return messages_of(self.body) if isinstance(self.body, dict) else []

    @property
    def text(self) -> str:
        return request_text(self.body) if isinstance(self.body, dict) else ""

    @property
    def model(self) -> str | None:
        return self.body.get("model") if isinstance(self.body, dict) else None

    @property
    def structured(self) -> bool:
        return isinstance(self.body, dict) and is_structured(self.body)


def describe_request(body: Body) -> str:
    """A one-line summary of a request for error messages."""
    messages = messages_of(body)
    last = messages[-1] if messages else {}
    text = request_text({"messages": [last]})
    return (
        f"(model={body.get('model')!r}, structured={is_structured(body)}, "
        f"{len(messages)} messages, last {last.get('role')!r}: {text[:300]!r})"
    )
