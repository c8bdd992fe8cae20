"""Message Batches on the scripted Anthropic server: what ``POST /v1/messages/batches``,
``GET /v1/messages/batches/{id}``, ``GET .../results`` and ``POST .../cancel`` answer.

Each request of a batch is answered by the server's rules, as ``POST /v1/messages`` would
answer it, when the batch ends; the requests are kept in :attr:`BatchBook.items` (never in
the server's request log, so ``messages_requests`` holds live calls only). Settings
(:meth:`BatchBook.configure`), all deterministic, none timed:

* ``polls``: how many retrieves answer ``in_progress`` before the batch ends (default 1);
* ``hold``: an event; until it is set, batches stay ``in_progress`` whatever ``polls`` says;
* ``expire``: a predicate on a request's params: those requests come back ``expired``
  (``lambda params: True``: the whole batch ran out of its 24 hours);
* a rule whose reply is an :class:`~.anthropic_rules.AnthropicFault` of the transport kind
  (``http_error``, ``server_error``, ``overloaded``...), or no rule at all, makes its request
  ``errored`` with that error's type and message; a content fault (``malformed_content``,
  ``empty_answer``) is a succeeded message with that content.

``cancel`` marks a batch ``canceling``; the next retrieve ends it, every request ``canceled``.
Create checks what Anthropic checks: ``custom_id`` of 1-64 ``[a-zA-Z0-9_-]``, unique in the
batch; params with ``model``, ``max_tokens`` and ``messages`` and no ``stream``; at most
100,000 requests. An unknown id is a 404; results before the end a 400.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .anthropic_rules import TRANSPORT_FAULTS, AnthropicFault, build_message, error_body
from .openai_http import NO_MATCH
from .openai_rules import Fault, resolve

if TYPE_CHECKING:
    from .anthropic_server import AnthropicServer

SAFE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
Answer = tuple[int, Any]  # HTTP status and a JSON body (or JSONL bytes for results)


@dataclass
class ServedBatch:
    id: str
    requests: list[dict[str, Any]]
    polls: int = 0
    canceling: bool = False
    results: list[dict[str, Any]] | None = None

    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(("processing", "succeeded", "errored", "canceled", "expired"), 0)
        if self.results is None:
            counts["processing"] = len(self.requests)
        for entry in self.results or ():
            counts[entry["result"]["type"]] += 1
        return counts


@dataclass
class BatchBook:
    """The server's batches; see the module docstring."""

    owner: AnthropicServer
    polls: int = 1
    hold: threading.Event | None = None
    expire: Callable[[dict[str, Any]], bool] | None = None
    served: dict[str, ServedBatch] = field(default_factory=dict)
    items: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def configure(
        self, *, polls: int | None = None, hold: threading.Event | None = None,
        expire: Callable[[dict[str, Any]], bool] | None = None,
    ) -> None:  # fmt: skip
        with self._lock:
            self.polls = self.polls if polls is None else polls
            self.hold, self.expire = hold, expire

    def create(self, body: Any) -> Answer:
        requests = body.get("requests") if isinstance(body, dict) else None
        if not isinstance(requests, list) or not requests:
            return 400, error_body(400, "requests: a non-empty list is required")
        if len(requests) > 100_000:
            return 400, error_body(400, "requests: at most 100,000 requests per batch")
        seen: set[str] = set()
        for index, request in enumerate(requests):
            problem = _invalid(request, seen)
            if problem is not None:
                return 400, error_body(400, f"requests.{index}: {problem}")
            seen.add(request["custom_id"])
        with self._lock:
            batch = ServedBatch(f"msgbatch_test{len(self.served) + 1:04d}", requests)
            self.served[batch.id] = batch
            self.items.extend((batch.id, r["custom_id"], r["params"]) for r in requests)
        return 200, self._view(batch)

    def retrieve(self, batch_id: str) -> Answer:
        with self._lock:
            batch = self.served.get(batch_id)
            if batch is None:
                return 404, error_body(404, f"no message batch {batch_id}")
            batch.polls += 1
            held = self.hold is not None and not self.hold.is_set()
            if batch.results is None and (
                batch.canceling or (batch.polls > self.polls and not held)
            ):
                batch.results = [self._result(batch, r) for r in batch.requests]
            return 200, self._view(batch)

    def results(self, batch_id: str) -> Answer:
        with self._lock:
            batch = self.served.get(batch_id)
            if batch is None:
                return 404, error_body(404, f"no message batch {batch_id}")
            if batch.results is None:
                return 400, error_body(400, f"message batch {batch_id} is still processing")
            lines = "".join(json.dumps(entry) + "\n" for entry in reversed(batch.results))
        return 200, lines.encode()

    def cancel(self, batch_id: str) -> Answer:
        with self._lock:
            batch = self.served.get(batch_id)
            if batch is None:
                return 404, error_body(404, f"no message batch {batch_id}")
            if batch.results is None:
                batch.canceling = True
            self.cancelled.append(batch_id)
            return 200, self._view(batch)

    def _result(self, batch: ServedBatch, request: dict[str, Any]) -> dict[str, Any]:
        """What the batch gives for one request (called with the lock held)."""
        params, custom_id = request["params"], request["custom_id"]
        if batch.canceling:
            return {"custom_id": custom_id, "result": {"type": "canceled"}}
        if self.expire is not None and self.expire(params):
            return {"custom_id": custom_id, "result": {"type": "expired"}}
        seq, rule, reply = self.owner.choose(params)
        value = reply if reply is NO_MATCH else resolve(reply, params)
        if isinstance(value, Fault):
            value = AnthropicFault.http_error(value.status, value.message)
        failed = isinstance(value, AnthropicFault) and value.kind in TRANSPORT_FAULTS
        if value is NO_MATCH or failed:
            status = value.status if isinstance(value, AnthropicFault) else 400
            message = value.message if isinstance(value, AnthropicFault) else "no rule matched"
            error = error_body(status, message, seq)
            return {"custom_id": custom_id, "result": {"type": "errored", "error": error}}
        message_body = build_message(params, value, rule, seq)
        return {"custom_id": custom_id, "result": {"type": "succeeded", "message": message_body}}

    def _view(self, batch: ServedBatch) -> dict[str, Any]:
        ended = batch.results is not None
        status = "ended" if ended else "canceling" if batch.canceling else "in_progress"
        url = f"{self.owner.url}/v1/messages/batches/{batch.id}/results" if ended else None
        return {
            "id": batch.id, "type": "message_batch", "processing_status": status,
            "request_counts": batch.counts(), "created_at": "2026-01-01T00:00:00Z",
            "expires_at": "2026-01-02T00:00:00Z", "ended_at": "2026-01-01T01:00:00Z" if ended
            else None, "archived_at": None, "cancel_initiated_at": None, "results_url": url,
        }  # fmt: skip


def _invalid(request: Any, seen: set[str]) -> str | None:
    """Why one batch request is refused, or None."""
    if not isinstance(request, dict) or not isinstance(request.get("params"), dict):
        return "each request needs custom_id and params"
    custom_id = request.get("custom_id")
    if not isinstance(custom_id, str) or not SAFE_ID.fullmatch(custom_id):
        return f"custom_id {custom_id!r} must be 1-64 characters of [a-zA-Z0-9_-]"
    if custom_id in seen:
        return f"custom_id {custom_id!r} is used twice"
    params = request["params"]
    if params.get("stream"):
        return "params.stream: batch requests cannot stream"
    missing = [name for name in ("model", "max_tokens", "messages") if name not in params]
    return f"params: {', '.join(missing)} required" if missing else None
