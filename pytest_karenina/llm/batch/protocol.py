"""What a batch provider and an adapter's batch codec implement.

A *provider* speaks one vendor's batch endpoints (submit a list of requests, poll, download,
cancel); a *codec* turns one :class:`~pytest_karenina.llm.ports.ModelRequest` of an adapter
into the body the provider sends for it, and the provider's response body back into a
:class:`~pytest_karenina.llm.ports.ModelReply` -- the same reply the live adapter would give,
so replay entries of batched and live calls are interchangeable.

The request key of a batched call is its replay key
(:func:`pytest_karenina.llm.replay.replay_key`): the provider sends it as the request's
``custom_id``, the state file keeps it, and resume matches downloaded results by it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pytest_karenina.llm.ports import LLMCallError, ModelReply, ModelRequest


@dataclass(frozen=True)
class BatchRequest:
    """One call in a batch: ``key`` (the replay key, sent as ``custom_id``) and ``body``
    (what the live adapter would POST for it, e.g. a chat-completions or messages body)."""

    key: str
    body: dict[str, Any]


@dataclass(frozen=True)
class BatchReply:
    """The outcome of one request of a finished batch: ``body`` is the provider's response
    body for it (a chat completion, a message) when it succeeded, else ``None`` and ``error``
    the provider's reason (``"expired"``, ``"cancelled"``, an error message...)."""

    key: str
    body: dict[str, Any] | None
    error: str | None = None


@dataclass(frozen=True)
class BatchStatus:
    """A batch as the provider reports it: its ``state`` in the provider's words
    (``in_progress``, ``ended``...), requests ``done`` (succeeded) and ``failed`` so far out
    of ``total``; ``finished`` once results can be downloaded (completed, expired, cancelled
    or failed: whatever did not finish then comes back as an errored :class:`BatchReply`).
    ``reason``: why the whole batch failed (validation), in the provider's words."""

    batch_id: str
    state: str
    done: int
    failed: int
    total: int
    finished: bool
    reason: str | None = None


class BatchProvider(Protocol):
    """One vendor's batch endpoints at one base URL with one key.

    ``name`` (``"openai"``, ``"anthropic"``) names it in logs and the state file;
    ``max_requests`` and ``max_bytes`` are the provider's limits per batch (the collector
    splits larger ones; ``max_bytes`` counts the JSON of the request bodies with their
    keys); ``completion_window_s`` is how long the provider may take (the default wait).
    ``lane`` identifies the endpoint and account without any secret (for example
    ``"openai:https://api.openai.com/v1"``): requests of providers with the same lane are
    batched together, and the state file records it.
    Methods raise on transport failures; the collector retries them.
    """

    name: str
    lane: str
    max_requests: int
    max_bytes: int
    completion_window_s: float

    def submit(self, requests: Sequence[BatchRequest]) -> str:
        """Create a batch of ``requests``; returns its id."""
        ...

    def poll(self, batch_id: str) -> BatchStatus: ...

    def results(self, batch_id: str) -> list[BatchReply]:
        """Every request's outcome of a finished batch (requests without one are missing)."""
        ...

    def cancel(self, batch_id: str) -> None: ...


class BatchCodec(Protocol):
    """An adapter's side of batching: request bodies and replies in its wire format."""

    def encode(self, request: ModelRequest) -> dict[str, Any] | None:
        """The provider body for ``request``, or ``None`` when it cannot be batched (then
        it runs live through the adapter and the run counts it as unbatched)."""
        ...

    def decode(self, body: dict[str, Any]) -> ModelReply:
        """The reply in a successful response body (raises on a malformed one)."""
        ...


class BatchCallError(LLMCallError):
    """A batched call that did not succeed: expired, cancelled, failed in the provider, or
    the batch wait ran out. ``reason`` carries the provider's words; the item errors, the
    rest of the run goes on."""
