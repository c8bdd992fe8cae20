"""Which replay store each side of a run's calls goes through, and how many calls each side
sent to a live model.

A run's calls have two sides: the **answering** side (answer generation, the answering
model's agent runs) and the **judge** side (template parsing, the abstention and sufficiency
checks, rubric traits, deep judgment, the embedding check's equivalence call, the agentic
judge's runs). Usually one store serves both (:meth:`ReplaySides.shared`); re-judging
recorded answers gives the answering side a strict store and the judge side a store of its
own, or none (live calls). The split is by side, not by model: one model may answer and
judge, and its two sides then reach different stores (while sharing one transport: its
connection pool, concurrency cap and pacing).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pytest_karenina.llm.agent_ports import AgentPort, AgentResult, AgentRunConfig
from pytest_karenina.llm.ports import ChatMessage, ModelReply, ModelRequest, RawModel
from pytest_karenina.llm.replay import ReplayStore

Side = Literal["answering", "judge"]
"""The side of a call: the model under test answering, or the judge grading."""


@dataclass(frozen=True)
class ReplaySides:
    """The replay store of each side (None: that side's calls are live and not recorded)."""

    answering: ReplayStore | None
    judge: ReplayStore | None

    @classmethod
    def of(cls, replay: ReplayStore | ReplaySides | None) -> ReplaySides:
        """``replay`` as sides: a single store serves both; a store in ``off`` mode none."""
        if isinstance(replay, ReplaySides):
            return cls(_used(replay.answering), _used(replay.judge))
        return cls(_used(replay), _used(replay))

    def store(self, side: Side) -> ReplayStore | None:
        return self.answering if side == "answering" else self.judge


def _used(store: ReplayStore | None) -> ReplayStore | None:
    return store if store is not None and store.mode != "off" else None


class LiveCalls:
    """How many calls (agent runs count one each) each side sent to a live model, past the
    replay store; a call's retries are one call. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[Side, int] = {"answering": 0, "judge": 0}

    def add(self, side: Side) -> None:
        with self._lock:
            self._counts[side] += 1

    def of(self, side: Side) -> int:
        with self._lock:
            return self._counts[side]


class CountingModel:
    """A :class:`~pytest_karenina.llm.ports.RawModel` that counts its calls for ``side``."""

    def __init__(self, inner: RawModel, calls: LiveCalls, side: Side) -> None:
        self.inner = inner
        self.calls = calls
        self.side: Side = side

    @property
    def replay_identity(self) -> dict[str, Any]:
        return self.inner.replay_identity

    def invoke(self, request: ModelRequest) -> ModelReply:
        self.calls.add(self.side)
        return self.inner.invoke(request)


class CountingAgent:
    """An :class:`~pytest_karenina.llm.agent_ports.AgentPort` that counts its runs for
    ``side``."""

    def __init__(self, inner: AgentPort, calls: LiveCalls, side: Side) -> None:
        self.inner = inner
        self.calls = calls
        self.side: Side = side

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()

    def run(self, messages: Sequence[ChatMessage], config: AgentRunConfig) -> AgentResult:
        self.calls.add(self.side)
        return self.inner.run(messages, config)
