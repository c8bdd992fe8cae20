"""Anthropic's Message Batches: create, poll, results and cancel over ``urllib3``.

A batch is ``POST /v1/messages/batches`` with ``{"requests": [{"custom_id", "params"}]}``, the
params being a Messages call's body without ``stream``; ``GET .../{id}`` reports
``processing_status`` (``in_progress``, ``canceling``, ``ended``) and ``request_counts``
(``processing``, ``succeeded``, ``errored``, ``canceled``, ``expired``); once ended, the
results are JSONL at the batch's ``results_url``: ``{"custom_id", "result": {"type":
"succeeded", "message"} | {"type": "errored", "error": {"error": {"type", "message"}}} |
{"type": "canceled"} | {"type": "expired"}}``, in any order.

Anthropic takes a ``custom_id`` of 1-64 characters of ``[a-zA-Z0-9_-]``: a request key that
fits is sent as it is (replay keys, 64 hex digits, always do), any other as a reversible
encoding (:func:`custom_id`, :func:`request_key`). The key reaches the API in the
``x-api-key`` header only, never a URL, the state file or a message.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from pytest_karenina.llm.adapters.claude_tool import ClaudeAPIError
from pytest_karenina.llm.batch.http import BatchHTTP
from pytest_karenina.llm.batch.protocol import BatchReply, BatchRequest, BatchStatus

API_VERSION = "2023-06-01"
BATCHES_PATH = "/v1/messages/batches"
SAFE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
ENCODED = "b64-"
"""Prefix of a key sent base64url-encoded (a key that fits the charset but starts with it is
encoded too, so no two keys share a ``custom_id``)."""
HASHED = "sha-"
"""Prefix of a key too long to encode: its SHA-256, mapped back by the provider that sent it."""
UNRUN = {
    "canceled": "canceled: the batch was cancelled before this request ran",
    "expired": "expired: the batch's 24-hour window ended before this request ran",
}


def custom_id(key: str) -> str:
    """The ``custom_id`` Anthropic accepts for ``key``: the key itself when it fits, else
    ``b64-`` and its UTF-8 in base64url (keys up to 45 bytes), else ``sha-`` and a digest."""
    if SAFE_ID.fullmatch(key) and not key.startswith((ENCODED, HASHED)):
        return key
    raw = key.encode("utf-8")
    encoded = ENCODED + base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
    if len(encoded) <= 64:
        return encoded
    return HASHED + hashlib.sha256(raw).hexdigest()[: 64 - len(HASHED)]


def request_key(sent: str, hashed: Mapping[str, str] | None = None) -> str:
    """The key a ``custom_id`` stands for (``hashed``: the digests a provider sent); an id
    that maps to nothing comes back as it is, and its request then has no result."""
    if sent.startswith(ENCODED):
        try:
            payload = sent[len(ENCODED) :]
            return base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            return sent
    if sent.startswith(HASHED):
        return (hashed or {}).get(sent, sent)
    return sent


class AnthropicBatchProvider:
    """Message Batches at ``base_url`` (the API's root, as ``ANTHROPIC_BASE_URL`` names it)
    with ``key`` in ``x-api-key`` (``bearer``: as ``Authorization: Bearer``, a proxy's
    ``auth_token``). Limits are Anthropic's: 100,000 requests and 256 MB per batch, 24 h."""

    name = "anthropic"
    max_requests = 100_000
    max_bytes = 256 * 1000 * 1000
    completion_window_s = 24 * 3600.0

    def __init__(
        self, base_url: str, key: str | None, headers: Mapping[str, str] | None = None,
        *, bearer: bool = False,
    ) -> None:  # fmt: skip
        self._http = BatchHTTP(
            base_url, key, {"anthropic-version": API_VERSION, **(headers or {})},
            read_timeout=300.0,
        )  # fmt: skip
        self._base = self._http.base
        self.lane = f"anthropic:{self._base}"
        if key and bearer:
            self._http.headers["Authorization"] = f"Bearer {key}"
        elif key:
            self._http.headers["x-api-key"] = key
        self._hashed: dict[str, str] = {}
        self._lock = threading.Lock()

    def _call(self, method: str, url: str, body: bytes | None = None) -> bytes:
        response = self._http.send(method, url, body=body)
        if response.status >= 300:
            message = self._http.redact(_error_text(response.data))
            raise ClaudeAPIError(f"{method} {url}: {message}", response.status, response)
        return bytes(response.data)

    def submit(self, requests: Sequence[BatchRequest]) -> str:
        entries = []
        for request in requests:
            sent = custom_id(request.key)
            if sent.startswith(HASHED):
                with self._lock:
                    self._hashed[sent] = request.key
            entries.append({"custom_id": sent, "params": request.body})
        url = f"{self._base}{BATCHES_PATH}"
        created = orjson.loads(self._call("POST", url, orjson.dumps({"requests": entries})))
        return str(created["id"])

    def poll(self, batch_id: str) -> BatchStatus:
        batch = orjson.loads(self._call("GET", f"{self._base}{BATCHES_PATH}/{batch_id}"))
        found = batch.get("request_counts") or {}
        counts = {str(name): int(value or 0) for name, value in found.items()}
        state = str(batch.get("processing_status", "unknown"))
        failed = sum(counts.get(name, 0) for name in ("errored", "canceled", "expired"))
        return BatchStatus(
            batch_id, state, counts.get("succeeded", 0), failed,
            sum(counts.values()), state == "ended",
        )  # fmt: skip

    def results(self, batch_id: str) -> list[BatchReply]:
        own = f"{self._base}{BATCHES_PATH}/{batch_id}/results"
        batch = orjson.loads(self._call("GET", f"{self._base}{BATCHES_PATH}/{batch_id}"))
        url = str(batch.get("results_url") or own)
        if not url.startswith(f"{self._base}/"):  # the key goes to this server only
            url = own
        with self._lock:
            hashed = dict(self._hashed)
        data = self._call("GET", url)
        return [_reply(line, hashed) for line in data.splitlines() if line.strip()]

    def cancel(self, batch_id: str) -> None:
        self._call("POST", f"{self._base}{BATCHES_PATH}/{batch_id}/cancel", b"{}")


def _reply(line: bytes, hashed: Mapping[str, str]) -> BatchReply:
    """One result line as a :class:`BatchReply` under the request's key."""
    entry = orjson.loads(line)
    key = request_key(str(entry.get("custom_id")), hashed)
    result = entry.get("result") if isinstance(entry.get("result"), dict) else {}
    kind = str(result.get("type"))
    message = result.get("message")
    if kind == "succeeded" and isinstance(message, dict):
        return BatchReply(key, message, None)
    if kind == "errored":
        return BatchReply(key, None, _error_text(orjson.dumps(result.get("error"))))
    return BatchReply(key, None, UNRUN.get(kind, f"no result ({kind})"))


def _error_text(data: bytes) -> str:
    """An API error body (``{"type": "error", "error": {"type", "message"}}``) as
    ``type: message``; anything else cut to 300 characters."""
    try:
        body: Any = orjson.loads(data)
    except orjson.JSONDecodeError:
        return data[:300].decode("utf-8", "replace") or "no error body"
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return f"{error.get('type') or 'error'}: {error['message']}"
    return str(body)[:300]


class AnthropicProviderPool:
    """One provider per server, key and headers: the calls of the Claude models that share
    them go in the same batches (a second key at one server gets batches, and a lane, of its
    own)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._made: dict[tuple[str, str | None, bool, tuple[tuple[str, str], ...]], Any] = {}

    def get(
        self, url: str, key: str | None, headers: Mapping[str, str], bearer: bool = False
    ) -> AnthropicBatchProvider:
        slot = (url, key, bearer, tuple(sorted(headers.items())))
        with self._lock:
            found: AnthropicBatchProvider | None = self._made.get(slot)
            if found is None:
                found = self._made[slot] = AnthropicBatchProvider(url, key, headers, bearer=bearer)
                lanes = [p.lane for p in self._made.values() if p is not found]
                if found.lane in lanes:
                    found.lane = f"{found.lane}#{lanes.count(found.lane) + 1}"
            return found


POOL = AnthropicProviderPool()
