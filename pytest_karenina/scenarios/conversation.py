"""The conversation a scenario's turns share, and the handover transcripts of edges.

Each message is tagged with who produced it: ``__user__`` for the scenario's questions, else
the answering agent's identity (the node's ``agentIdentity``, else the entry node's, else the
answering model's id). A turn's answering call carries the earlier messages (Karenina's
``conversation_history``); an edge with a transcript handover instead folds them into a
labelled transcript before (``transcript_prepend``) or after (``transcript_append``) the next
question, and that turn starts a fresh conversation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pytest_karenina.llm.ports import ChatMessage

USER = "__user__"
SEPARATOR = "\n\n---\n\n"


@dataclass(frozen=True)
class Tagged:
    message: ChatMessage
    agent_id: str


def transcript(messages: list[Tagged]) -> str:
    """``[__user__] text`` for questions, ``[agent:role:text] text`` for the rest."""
    lines = []
    for tagged in messages:
        label = (
            "[__user__]"
            if tagged.agent_id == USER
            else f"[{tagged.agent_id}:{tagged.message.role}:text]"
        )
        lines.append(f"{label} {tagged.message.content}")
    return "\n".join(lines)


def hand_over(strategy: str, messages: list[Tagged], question: str) -> str:
    """The next question with the transcript of ``messages`` folded in."""
    text = transcript(messages)
    if strategy == "transcript_prepend":
        return text + SEPARATOR + question
    return question + SEPARATOR + text


def replies(trace: list[dict[str, Any]] | None) -> list[ChatMessage]:
    """The answering side's messages of a turn's trace, as the next turns see them."""
    found = []
    for message in trace or []:
        content = message.get("content") if isinstance(message, dict) else None
        if message.get("role") in ("assistant", "ai") and isinstance(content, str) and content:
            found.append(ChatMessage("assistant", content))
    return found
