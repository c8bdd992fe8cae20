"""``manual``: answers recorded ahead of time, per question id (no network).

A recorded answer is a text, or an agent's conversation, so agent benchmarks can be judged
without running the agent again:

* a list of messages, in Karenina's ``trace_messages`` shape (``role``, ``content``,
  ``tool_calls``, ``tool_result``) or as LangChain message dumps (``type`` ``ai``/``tool``...);
* ``{"trace_messages": [...]}``, as Karenina's trace recordings store it;
* ``{"request": {"messages": [...]}, "response": {...}}``, one recorded model call: the
  conversation up to it, then its reply.

A conversation's answer is its rendered trace (``--- AI Message ---`` blocks with the tool
calls, ``--- Tool Message ---`` blocks with their results); the messages go with it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_karenina.llm.agents.trace_convert import conversation_usage, trace_messages
from pytest_karenina.llm.ports import LLMCallError, ModelReply, ModelRequest, Usage
from pytest_karenina.results.text import encodable
from pytest_karenina.results.trace import render_trace


class ManualTraceError(ValueError):
    """A recorded answer that is neither a text nor a conversation."""


def conversation(recorded: Any) -> list[Mapping[str, Any]] | None:
    """The messages of a recorded conversation, or None for a text answer."""
    if isinstance(recorded, str):
        return None
    if isinstance(recorded, list) and all(isinstance(m, Mapping) for m in recorded):
        return recorded
    if isinstance(recorded, Mapping):
        if isinstance(recorded.get("trace_messages"), list):
            return list(recorded["trace_messages"])
        request = recorded.get("request")
        if isinstance(request, Mapping) and isinstance(request.get("messages"), list):
            response = recorded.get("response")
            tail = [{"type": "ai", **response}] if isinstance(response, Mapping) else []
            return [*request["messages"], *tail]
    raise ManualTraceError(
        "a recorded answer must be a text, a list of messages, {'trace_messages': [...]} or "
        f"{{'request': {{'messages': [...]}}, 'response': {{...}}}}, not {type(recorded).__name__}"
    )


class ManualModel:
    """Replies with the recorded answer of the request's question.

    ``answers`` maps question ids to a text or a conversation (see the module docstring).
    It answers any call kind, so it serves as an answering model only.
    """

    def __init__(self, answers: Mapping[str, Any], *, source: str = "<manual answers>") -> None:
        self.source = source
        self.answers: dict[str, ModelReply] = {}
        for key, recorded in answers.items():
            try:
                self.answers[key] = _reply(recorded)
            except ManualTraceError as exc:
                raise ValueError(f"{source}: question {key!r}: {exc}") from None

    @classmethod
    def from_file(cls, path: str | Path) -> ManualModel:
        """Read ``{"<question id>": <answer>, ...}`` from a JSON file."""
        try:
            data: Any = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path}: cannot read manual answers: {exc}") from exc
        if not isinstance(data, dict):
            raise ValueError(f"{path}: manual answers must be an object of question id -> answer")
        return cls(data, source=str(path))

    @property
    def replay_identity(self) -> dict[str, Any]:
        return {"adapter": "manual", "source": self.source}

    def invoke(self, request: ModelRequest) -> ModelReply:
        answer = self.answers.get(request.question_id or "")
        if answer is None:
            raise LLMCallError(
                request.call_kind,
                f"{self.source} has no answer for question {request.question_id!r}",
            )
        return answer


def _reply(recorded: Any) -> ModelReply:
    messages = conversation(recorded)
    if messages is None:
        return ModelReply(encodable(recorded), model="manual")
    trace = trace_messages(messages)
    usage = conversation_usage(messages) if trace else Usage()
    return ModelReply(render_trace(trace), usage, "manual", trace_messages=trace)
