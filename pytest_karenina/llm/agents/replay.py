"""Record/replay of whole agent runs: one store entry per run.

The entry's key is made like a chat call's (identity, messages, call kind, the replicate
and the judge replicate from 2 on), the identity extended with what bounds the run (its
turn limit, whether it had a workspace and could write there); the reply text is the
:class:`~...agent_ports.AgentResult` as JSON. Strict replay needs no inner agent, so it never
starts a model, a tool or an MCP session.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_karenina.llm.agent_ports import AgentPort, AgentResult, AgentRunConfig
from pytest_karenina.llm.ports import ChatMessage, ModelReply, ModelRequest
from pytest_karenina.llm.replay import ReplayMiss, ReplayStore, replay_key


class ReplayingAgent:
    """An :class:`~...agent_ports.AgentPort` answering from a :class:`ReplayStore` per its
    mode (``inner`` may be None in strict mode only)."""

    def __init__(
        self, inner: AgentPort | None, store: ReplayStore, identity: Mapping[str, Any]
    ) -> None:
        if inner is None and store.mode != "strict":
            raise ValueError("an inner agent is required unless the store is strict")
        self.inner = inner
        self.store = store
        self.identity = dict(identity)

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()

    def run(self, messages: Sequence[ChatMessage], config: AgentRunConfig) -> AgentResult:
        identity = {
            **self.identity,
            "max_turns": config.max_turns,
            "workspace": config.workspace is not None,
            "read_only": config.read_only,
        }
        request = ModelRequest(
            tuple(messages), config.call_kind, schema_name="agent_run",
            question_id=config.question_id, replicate=config.replicate,
            judge_replicate=config.judge_replicate,
        )  # fmt: skip
        key = replay_key(identity, request)
        if self.store.mode != "record":
            found = self.store.lookup(key)
            if found is not None:
                return AgentResult.from_json(json.loads(found.text))
            if self.inner is None:
                raise ReplayMiss(
                    config.call_kind, config.question_id, key, self.store.path,
                    config.replicate, config.judge_replicate,
                )  # fmt: skip
        assert self.inner is not None
        result = self.inner.run(messages, config)
        if not result.timeout_reached:  # a run cut short by the clock is not repeatable
            text = json.dumps(result.to_json(), ensure_ascii=False)
            self.store.record(key, identity, request, ModelReply(text, result.usage, result.model))
        return result
