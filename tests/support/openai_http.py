"""HTTP plumbing of :mod:`tests.support.openai_server`: the threaded server and its handler.

The :class:`~tests.support.openai_server.OpenAIServer` owns the state (rules, log, faults);
this module turns its decisions into bytes on the socket (JSON, SSE, resets).
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import sys
import threading
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .openai_rules import (
    MALFORMED_BODY,
    TRANSPORT_FAULTS,
    Body,
    Fault,
    Reply,
    Rule,
    build_completion,
    describe_request,
    drop_path,
    error_body,
    resolve,
    stream_chunks,
)

if TYPE_CHECKING:
    from .openai_server import OpenAIServer


NO_MATCH = object()  # the reply of an unmatched request without a default


@dataclass(frozen=True)
class Decision:
    """What the server decided to answer to one request."""

    seq: int
    rule: Rule | None
    reply: Reply
    latency: float


class ScriptedHTTPServer(ThreadingHTTPServer):
    """ThreadingHTTPServer on 127.0.0.1:0 that tracks open connections to drop them on stop."""

    daemon_threads = True
    request_queue_size = 128  # dozens of clients may connect at once (the default is 5)

    def __init__(self, owner: OpenAIServer) -> None:
        self.owner = owner
        self.active: set[socket.socket] = set()
        self.accepted = 0  # connections accepted so far
        self.active_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), Handler)

    def process_request(
        self, request: socket.socket | tuple[bytes, socket.socket], client_address: Any
    ) -> None:
        if isinstance(request, socket.socket):
            with self.active_lock:
                self.active.add(request)
                self.accepted += 1
        super().process_request(request, client_address)

    def shutdown_request(self, request: socket.socket | tuple[bytes, socket.socket]) -> None:
        if isinstance(request, socket.socket):
            with self.active_lock:
                self.active.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], OSError):  # a client hanging up is not an error
            self.owner.errors.append(traceback.format_exc())

    def drop_connections(self) -> None:
        with self.active_lock:
            sockets = list(self.active)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


class Handler(BaseHTTPRequestHandler):
    """Serves the OpenAI routes; the owning OpenAIServer decides what to answer."""

    server: ScriptedHTTPServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as separate writes
    timeout = 60.0  # socket timeout: no handler thread waits on a silent client forever

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        owner = self.server.owner
        owner._record(self, None)
        if urlsplit(self.path).path.rstrip("/") == "/v1/models":
            data = [
                {"id": m, "object": "model", "created": 0, "owned_by": "test"} for m in owner.models
            ]
            self._send_json(200, {"object": "list", "data": data})
        else:
            self._send_json(404, error_body(f"no route {self.path}", "invalid_request_error"))

    def do_POST(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        if not urlsplit(self.path).path.rstrip("/").endswith("/chat/completions"):
            owner._record(self, body)
            self._send_json(404, error_body(f"no route {self.path}", "invalid_request_error"))
            return
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            owner._record(self, body)
            msg = "request body is not a chat-completions JSON object with messages"
            self._send_json(400, error_body(msg, "invalid_request_error"))
            return
        decision = owner._decide(self, body)
        if decision.latency > 0 and owner._hold(decision.latency):
            return self._reset()
        if decision.reply is NO_MATCH:
            msg = f"openai_server: no rule matched request #{decision.seq} {describe_request(body)}"
            return self._send_json(400, error_body(msg, "invalid_request_error", "no_rule_matched"))
        try:
            value = resolve(decision.reply, body)
        except Exception:
            owner.errors.append(traceback.format_exc())
            return self._send_json(500, error_body("reply callable raised", "server_error"))
        if isinstance(value, Fault) and value.kind in TRANSPORT_FAULTS:
            return self._transport_fault(value)
        completion = build_completion(body, value, decision.rule, decision.seq)
        missing = value.path if isinstance(value, Fault) and value.kind == "missing_field" else None
        if not body.get("stream"):
            if missing:
                drop_path(completion, missing)
            return self._send_json(200, completion)
        options = body.get("stream_options")
        include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
        chunks = stream_chunks(completion, include_usage)
        if missing:
            for chunk in chunks:
                drop_path(chunk, missing)
        self._send_sse(chunks)

    def _transport_fault(self, fault: Fault) -> None:
        if fault.kind == "http_error":
            headers = {}
            if fault.retry_after is not None:
                headers["Retry-After"] = f"{fault.retry_after:g}"
            kind = "rate_limit_error" if fault.status == 429 else "server_error"
            self._send_json(fault.status, error_body(fault.message, kind), headers)
        elif fault.kind == "malformed_body":
            self._send(200, "application/json", MALFORMED_BODY)
        else:  # timeout: hold the connection first; connection_reset: drop it at once
            if fault.kind == "timeout":
                self.server.owner._hold(fault.seconds)
            self._reset()

    def _reset(self) -> None:
        """Close the socket with an RST (SO_LINGER 0) and no response."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()

    def _send(
        self, status: int, content_type: str, data: bytes, headers: Mapping[str, str] | None = None
    ) -> None:
        with contextlib.suppress(OSError):  # the client may have given up already
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            if content_type != "text/event-stream":
                self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            if content_type == "text/event-stream" or not self.server.owner.keep_alive:
                self.close_connection = True
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)

    def _send_json(self, status: int, obj: Body, headers: Mapping[str, str] | None = None) -> None:
        self._send(status, "application/json", json.dumps(obj).encode(), headers)

    def _send_sse(self, chunks: Sequence[Body]) -> None:
        events = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks] + ["data: [DONE]\n\n"]
        self._send(200, "text/event-stream", "".join(events).encode())
