"""HTTP plumbing of :mod:`tests.support.anthropic_server`: the threaded server and its handler.

Reuses the OpenAI server's connection tracking and byte-level helpers (``_send``, ``_reset``);
this handler speaks the Messages API's routes, headers, errors and SSE events.
"""

from __future__ import annotations

import contextlib
import json
import threading
import traceback
from collections.abc import Mapping
from http.server import ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .anthropic_rules import (
    MALFORMED_BODY,
    TRANSPORT_FAULTS,
    AnthropicFault,
    build_message,
    count_tokens,
    describe_request,
    error_body,
    request_text,
    sse_bytes,
    stream_events,
)
from .openai_http import NO_MATCH, Handler, ScriptedHTTPServer
from .openai_rules import Body, Fault, resolve

if TYPE_CHECKING:
    from .anthropic_server import AnthropicServer


class AnthropicHTTPServer(ScriptedHTTPServer):
    """The OpenAI server's ThreadingHTTPServer with the Messages API handler."""

    owner: AnthropicServer

    def __init__(self, owner: AnthropicServer) -> None:
        self.owner = owner
        self.active = set()
        self.accepted = 0
        self.active_lock = threading.Lock()
        ThreadingHTTPServer.__init__(self, ("127.0.0.1", 0), AnthropicHandler)


BATCHES = "/v1/messages/batches"


def _path(raw: str) -> str:
    return urlsplit(raw).path.rstrip("/")


class AnthropicHandler(Handler):
    """Serves ``POST /v1/messages`` (any query, e.g. ``?beta=true``), ``/v1/messages/count_tokens``,
    ``GET /v1/models`` and ``HEAD``/``GET /api/hello``."""

    server: AnthropicHTTPServer  # type: ignore[assignment]

    def do_HEAD(self) -> None:
        self.server.owner._record(self, None)
        status = 200 if _path(self.path) == "/api/hello" else 404
        with contextlib.suppress(OSError):
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.send_header("Connection", "close")
            self.close_connection = True
            self.end_headers()

    def do_GET(self) -> None:
        owner = self.server.owner
        owner._record(self, None)
        path = _path(self.path)
        if path.startswith(BATCHES + "/"):
            self._batch_call("GET", path, None)
        elif path == "/api/hello":
            self._send_json(200, {})
        elif path == "/v1/models":
            data = [
                {"type": "model", "id": m, "display_name": m, "created_at": "2025-01-01T00:00:00Z"}
                for m in owner.models
            ]
            first, last = (data[0]["id"], data[-1]["id"]) if data else (None, None)
            self._send_json(
                200, {"data": data, "has_more": False, "first_id": first, "last_id": last}
            )
        else:
            self._send_json(404, error_body(404, f"no route {self.path}"))

    def _auth_problem(self) -> tuple[int, str] | None:
        owner = self.server.owner
        key = self.headers.get("x-api-key")
        scheme, _, token = (self.headers.get("authorization") or "").partition(" ")
        if key is None and scheme.lower() == "bearer" and token:
            key = token
        if owner.require_auth and not key:
            return 401, "x-api-key or Authorization: Bearer header is required"
        if owner.api_key is not None and key != owner.api_key:
            return 401, "invalid x-api-key"
        if owner.require_auth and not self.headers.get("anthropic-version"):
            return 400, "anthropic-version: header is required"
        return None

    def do_POST(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        path = _path(self.path)
        if path == BATCHES or (path.startswith(BATCHES + "/") and path.endswith("/cancel")):
            return self._batch_call("POST", path, body)
        if path not in ("/v1/messages", "/v1/messages/count_tokens"):
            seq = owner._record(self, body)
            return self._send_json(404, error_body(404, f"no route {self.path}", seq))
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            seq = owner._record(self, body)
            return self._send_json(400, error_body(400, "messages: field required", seq))
        problem = self._auth_problem()
        if problem is not None:
            seq = owner._record(self, body, fault="auth")
            return self._send_json(problem[0], error_body(problem[0], problem[1], seq))
        if path.endswith("count_tokens"):
            owner._record(self, body)
            return self._send_json(200, {"input_tokens": count_tokens(request_text(body))})
        if "thread" in body:
            seq = owner._record(self, body, fault="thread")
            msg = "thread: this server keeps no threads; send the whole conversation"
            return self._send_json(400, error_body(400, msg, seq))
        self._answer(body)

    def _batch_call(self, method: str, path: str, body: Any) -> None:
        """The Message Batches routes (:mod:`.anthropic_batch_book`), behind the auth checks."""
        owner = self.server.owner
        seq = owner._record(self, body)
        problem = self._auth_problem()
        if problem is not None:
            return self._send_json(problem[0], error_body(problem[0], problem[1], seq))
        book = owner.batches
        parts = path[len(BATCHES) :].strip("/").split("/")
        if method == "POST" and path == BATCHES:
            status, answer = book.create(body)
        elif method == "POST" and len(parts) == 2:
            status, answer = book.cancel(parts[0])
        elif method == "GET" and len(parts) == 1:
            status, answer = book.retrieve(parts[0])
        elif method == "GET" and len(parts) == 2 and parts[1] == "results":
            status, answer = book.results(parts[0])
        else:
            status, answer = 404, error_body(404, f"no route {self.path}", seq)
        if isinstance(answer, bytes):
            return self._send(status, "application/binary", answer)
        self._send_json(status, answer)

    def _answer(self, body: Body) -> None:
        owner = self.server.owner
        decision = owner._decide(self, body)
        if decision.latency > 0 and owner._hold(decision.latency):
            return self._reset()
        if decision.reply is NO_MATCH:
            msg = f"anthropic_server: no rule matched request #{decision.seq} "
            return self._send_json(400, error_body(400, msg + describe_request(body), decision.seq))
        try:
            value = resolve(decision.reply, body)
        except Exception:
            owner.errors.append(traceback.format_exc())
            return self._send_json(500, error_body(500, "reply callable raised", decision.seq))
        if isinstance(value, Fault):  # the base server's own fault (a raising `when`)
            value = AnthropicFault.http_error(value.status, value.message)
        if isinstance(value, AnthropicFault) and value.kind in TRANSPORT_FAULTS:
            return self._fault(value, body, decision.seq)
        message = build_message(body, value, decision.rule, decision.seq)
        if body.get("stream"):
            return self._send(200, "text/event-stream", sse_bytes(stream_events(message)))
        self._send_json(200, message, {"request-id": f"req_test_{decision.seq}"})

    def _fault(self, fault: AnthropicFault, body: Body, seq: int) -> None:
        if fault.kind == "http_error":
            self._http_error(fault.status, fault.message, seq, fault.retry_after)
        elif fault.kind == "malformed_body":
            self._send(200, "application/json", MALFORMED_BODY)
        elif fault.kind in ("stream_cut", "stream_error"):
            self._cut(fault, body, seq)
        else:  # timeout: hold the connection first; connection_reset: drop it at once
            if fault.kind == "timeout":
                self.server.owner._hold(fault.seconds)
            self._reset()

    def _http_error(self, status: int, message: str, seq: int, retry_after: float | None) -> None:
        headers = {"request-id": f"req_test_{seq}"}
        if retry_after is not None:
            headers["retry-after"] = f"{retry_after:g}"
        self._send_json(status, error_body(status, message, seq), headers)

    def _cut(self, fault: AnthropicFault, body: Body, seq: int) -> None:
        message = build_message(body, fault.text, None, seq)
        if not body.get("stream"):
            if fault.kind == "stream_error":
                status = 529 if fault.error_type == "overloaded_error" else 500
                return self._http_error(status, fault.message, seq, None)
            data = json.dumps(message).encode()
            return self._send_partial(data, len(data) // 2, fault.reset)
        events = stream_events(message)[: fault.after_events]
        if fault.kind == "stream_error":
            error = error_body(500, fault.message, seq, fault.error_type)
            return self._send(200, "text/event-stream", sse_bytes([*events, ("error", error)]))
        self._send_partial(sse_bytes(events), None, fault.reset)

    def _send_partial(self, data: bytes, cut: int | None, reset: bool) -> None:
        """Headers (a full ``Content-Length`` when ``cut`` is given), part of the body, a close."""
        with contextlib.suppress(OSError):
            self.send_response(200)
            kind = "application/json" if cut is not None else "text/event-stream"
            self.send_header("Content-Type", kind)
            if cut is not None:
                self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.close_connection = True
            self.end_headers()
            self.wfile.write(data if cut is None else data[:cut])
            self.wfile.flush()
        if reset:
            self._reset()

    def _send_json(self, status: int, obj: Body, headers: Mapping[str, str] | None = None) -> None:
        self._send(status, "application/json", json.dumps(obj).encode(), headers)

    def log_message(self, format: str, *args: Any) -> None:
        pass
