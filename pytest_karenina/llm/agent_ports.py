"""The agent port: a model that works in turns, with tools, until it answers.

An agent run takes the conversation so far and returns the final answer together with the
whole trace (assistant turns with their tool calls, tool results, usage summed over every
model call) and how it ended: normally, at its call limit, or at its time limit, in which
case the trace holds what was done until then. Stages depend on this protocol only; the
adapters (LangChain's agent runtime with MCP tools, ``deepagents``, recorded traces) live in
:mod:`pytest_karenina.llm.agents`.

Trace messages are dicts in Karenina's ``trace_messages`` shape::

    {"role": "assistant", "content": str, "block_index": int,
     "tool_calls": [{"id", "name", "input"}]}            # tool_calls when there are any
    {"role": "tool", "content": str, "block_index": int, "name": str,
     "tool_result": {"tool_use_id", "is_error"}}
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pytest_karenina.llm.ports import ChatMessage, LLMCallError, Usage

if TYPE_CHECKING:
    from pytest_karenina.config.model import ModelConfig

DEFAULT_MODEL_CALL_LIMIT = 25
DEFAULT_TOOL_CALL_LIMIT = 50
DEFAULT_AGENT_TIMEOUT = 180.0


def model_limits(model: ModelConfig) -> tuple[int, int, float]:
    """``(model calls, tool calls, seconds)`` of ``model``'s agent runs."""
    middleware = model.agent_middleware
    limits = middleware.limits if middleware is not None else None
    return (
        limits.model_call_limit if limits is not None else DEFAULT_MODEL_CALL_LIMIT,
        limits.tool_call_limit if limits is not None else DEFAULT_TOOL_CALL_LIMIT,
        float(model.agent_timeout) if model.agent_timeout else DEFAULT_AGENT_TIMEOUT,
    )


@dataclass(frozen=True)
class AgentRunConfig:
    """How one agent run is bounded and where it works.

    ``call_kind`` keys usage, replay entries and errors as for chat calls. ``max_turns``
    (model calls) and ``timeout`` (seconds for the whole run) override the model's own
    limits when given. ``workspace``: the directory the agent's file tools are rooted at
    (None: no file tools); ``read_only`` refuses writes there. ``replicate``: the replicate
    the run belongs to (None without replicates), and ``judge_replicate`` the judge replicate
    of a judge's run, keyed for replay as in ``ModelRequest``.
    """

    call_kind: str
    question_id: str | None = None
    max_turns: int | None = None
    timeout: float | None = None
    workspace: Path | None = None
    read_only: bool = False
    replicate: int | None = None
    judge_replicate: int | None = None


@dataclass(frozen=True)
class AgentResult:
    """What an agent run produced; ``turns`` counts model calls."""

    final_response: str
    trace_messages: list[dict[str, Any]] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    turns: int = 0
    limit_reached: bool = False
    timeout_reached: bool = False
    model: str | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON-native form (for the replay store)."""
        return {
            "final_response": self.final_response,
            "trace_messages": self.trace_messages,
            "usage": {"input_tokens": self.usage.input_tokens,
                      "output_tokens": self.usage.output_tokens},
            "turns": self.turns,
            "limit_reached": self.limit_reached,
            "timeout_reached": self.timeout_reached,
            "model": self.model,
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AgentResult:
        usage = data.get("usage") or {}
        return cls(
            final_response=str(data.get("final_response") or ""),
            trace_messages=list(data.get("trace_messages") or []),
            usage=Usage(usage.get("input_tokens"), usage.get("output_tokens")),
            turns=int(data.get("turns") or 0),
            limit_reached=bool(data.get("limit_reached")),
            timeout_reached=bool(data.get("timeout_reached")),
            model=data.get("model"),
        )


class AgentError(LLMCallError):
    """An agent run that failed for good; ``partial`` holds the trace until the failure."""

    def __init__(self, call_kind: str, reason: str, *, partial: AgentResult | None = None) -> None:
        super().__init__(call_kind, reason)
        self.partial = partial


class AgentPort(Protocol):
    """Runs an agent on ``messages`` (system and user turns) until it answers.

    Raises :class:`~pytest_karenina.llm.ports.LLMCallError` (or :class:`AgentError`) when
    the run cannot be made; a run that hits its call or time limit returns normally with
    ``limit_reached`` or ``timeout_reached`` set. An adapter that holds connections (MCP
    sessions) may have a ``close()`` method; the run's LLM stack calls it at the end.
    """

    def run(self, messages: Sequence[ChatMessage], config: AgentRunConfig) -> AgentResult: ...
