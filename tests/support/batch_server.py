"""A scripted OpenAI Batch API server for tests: Files + Batches on 127.0.0.1, in front of a
scripted chat server (:class:`~tests.support.openai_server.OpenAIServer`).

Endpoints: ``POST /v1/files`` (multipart, purpose ``batch``), ``GET /v1/files/{id}/content``,
``POST /v1/batches``, ``GET /v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``. Anything
else (``/v1/chat/completions``) is passed to the chat server, so one base URL serves live and
batched calls. A batch answers each of its lines by a real POST to the chat server (its rules
decide the replies) once ``delay`` seconds have passed and the server is not ``hold()``-ing.

Scripting: ``delay``; ``fail`` (a callable on a line's body returning an error message, or
None: that request lands in the error file, the rest in the output file); ``expire_after``
(process that many requests, then the batch expires: the others come back ``batch_expired``);
``hold()``/``release()`` (``held_from = N``: only batches from the N-th on, counting from
0, are held); ``restart()`` (the listener goes away and comes back on the same
port, batches kept). ``requests`` logs (method, path) of what clients sent; ``submitted``
the request lines of every batch created.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .openai_server import OpenAIServer


class BatchServer:
    """Files + Batches over HTTP; ``chat`` answers the requests inside batches."""

    def __init__(self, chat: OpenAIServer, *, delay: float = 0.0) -> None:
        self.chat, self.delay = chat, delay
        self.fail: Any = None
        self.expire_after: int | None = None
        self.requests: list[tuple[str, str]] = []
        self.submitted: list[list[dict[str, Any]]] = []
        self.errors: list[str] = []
        self._files: dict[str, bytes] = {}
        self._batches: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._go = threading.Event()
        self._go.set()
        self.held_from: int | None = None
        self._port = 0
        self._httpd: ThreadingHTTPServer | None = None

    # --- lifecycle ------------------------------------------------------------------------
    def start(self) -> BatchServer:
        handler = type("BoundHandler", (_Handler,), {"owner": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", self._port), handler)
        self._httpd.daemon_threads = True
        self._port = self._httpd.server_address[1]
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        self._go.set()

    def restart(self, down: float = 0.0) -> None:
        """The listener goes away (connections are refused) and comes back on its port."""
        self.stop()
        time.sleep(down)
        self.start()

    def hold(self) -> None:
        self._go.clear()

    def release(self) -> None:
        self._go.set()

    def __enter__(self) -> BatchServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}/v1"

    def batch_states(self) -> dict[str, str]:
        with self._lock:
            return {batch_id: batch["status"] for batch_id, batch in self._batches.items()}

    # --- behaviour ------------------------------------------------------------------------
    def _create(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            data = self._files[body["input_file_id"]]
            lines = [json.loads(line) for line in data.splitlines() if line.strip()]
            batch_id = f"batch_{len(self._batches) + 1:04x}{int(time.time() * 1000) % 65536:04x}"
            batch = {
                "id": batch_id, "object": "batch", "endpoint": body["endpoint"],
                "input_file_id": body["input_file_id"], "completion_window": "24h",
                "status": "in_progress", "output_file_id": None, "error_file_id": None,
                "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
                "created_at": int(time.time()), "errors": None,
            }  # fmt: skip
            self._batches[batch_id] = batch
            self.submitted.append(lines)
        index = len(self.submitted) - 1
        args = (batch_id, lines, index)
        threading.Thread(target=self._process, args=args, daemon=True).start()
        return dict(batch)

    def _process(self, batch_id: str, lines: list[dict[str, Any]], index: int) -> None:
        time.sleep(self.delay)
        if self.held_from is None or index >= self.held_from:
            self._go.wait()
        output: list[bytes] = []
        errors: list[bytes] = []
        batch = self._batches[batch_id]
        for number, line in enumerate(lines):
            custom_id = line["custom_id"]
            with self._lock:
                cancelled = batch["status"] == "cancelling"
            expired = self.expire_after is not None and number >= self.expire_after
            if cancelled or expired:
                code = "batch_cancelled" if cancelled else "batch_expired"
                message = f"This request could not be executed before the batch was {code[6:]}."
                errors.append(_line(custom_id, None, {"code": code, "message": message}))
                continue
            reason = self.fail(line["body"]) if self.fail is not None else None
            if reason:
                errors.append(_line(custom_id, None, {"code": "server_error", "message": reason}))
                with self._lock:
                    batch["request_counts"]["failed"] += 1
                continue
            status, reply = self._chat(line["body"])
            target = output if status < 400 else errors
            target.append(_line(custom_id, {"status_code": status, "body": reply}, None))
            with self._lock:
                batch["request_counts"]["completed" if status < 400 else "failed"] += 1
        with self._lock:
            for name, data in (("output_file_id", output), ("error_file_id", errors)):
                if data:
                    file_id = f"file-{batch_id}-{name[:3]}"
                    self._files[file_id] = b"".join(data)
                    batch[name] = file_id
            if batch["status"] == "cancelling":
                batch["status"] = "cancelled"
            elif self.expire_after is not None and len(lines) > self.expire_after:
                batch["status"] = "expired"
            else:
                batch["status"] = "completed"

    def _chat(self, body: dict[str, Any]) -> tuple[int, Any]:
        request = urllib.request.Request(
            f"{self.chat.base_url}/chat/completions", data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )  # fmt: skip
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"{}")


def _line(custom_id: str, response: Any, error: Any) -> bytes:
    entry = {"id": f"req_{custom_id[:8]}", "custom_id": custom_id, "response": response,
             "error": error}  # fmt: skip
    return json.dumps(entry).encode() + b"\n"


class _Handler(BaseHTTPRequestHandler):
    owner: BatchServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _reply(self, status: int, body: Any, raw: bytes | None = None) -> None:
        data = raw if raw is not None else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def _body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def do_GET(self) -> None:
        owner, path = self.owner, self.path.split("?")[0]
        owner.requests.append(("GET", path))
        parts = path.strip("/").split("/")
        if parts[:2] == ["v1", "batches"] and len(parts) == 3 and parts[2] in owner._batches:
            with owner._lock:
                return self._reply(200, owner._batches[parts[2]])
        if parts[:2] == ["v1", "files"] and len(parts) == 4 and parts[3] == "content":
            found = owner._files.get(parts[2])
            if found is not None:
                return self._reply(200, None, found)
        self._reply(404, {"error": {"message": f"no route {path}", "type": "invalid_request"}})

    def do_POST(self) -> None:
        owner, path = self.owner, self.path.split("?")[0]
        owner.requests.append(("POST", path))
        data = self._body()
        parts = path.strip("/").split("/")
        try:
            if parts == ["v1", "files"]:
                return self._reply(200, self._upload(data))
            if parts == ["v1", "batches"]:
                return self._reply(200, owner._create(json.loads(data)))
            if parts[:2] == ["v1", "batches"] and parts[3:] == ["cancel"]:
                with owner._lock:
                    batch = owner._batches[parts[2]]
                    if batch["status"] in ("in_progress", "validating"):
                        batch["status"] = "cancelling"
                    return self._reply(200, batch)
        except Exception as exc:  # a test bug: fail loudly
            owner.errors.append(f"{path}: {type(exc).__name__}: {exc}")
            return self._reply(500, {"error": {"message": str(exc)}})
        request = urllib.request.Request(
            f"{owner.chat.url}{self.path}", data=data,
            headers={"Content-Type": "application/json",
                     "Authorization": self.headers.get("Authorization", "")},
        )  # fmt: skip
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return self._reply(response.status, None, response.read())
        except urllib.error.HTTPError as exc:
            return self._reply(exc.code, None, exc.read())

    def _upload(self, data: bytes) -> dict[str, Any]:
        header = f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode()
        message = BytesParser(policy=HTTP).parsebytes(header + data)
        fields = {part.get_param("name", header="content-disposition"): part.get_payload(
            decode=True) for part in message.iter_parts()}  # fmt: skip
        if fields.get("purpose") != b"batch":
            raise ValueError(f"purpose is {fields.get('purpose')!r}, not batch")
        with self.owner._lock:
            file_id = f"file-{len(self.owner._files) + 1:04d}"
            self.owner._files[file_id] = fields["file"]
        return {"id": file_id, "object": "file", "purpose": "batch", "bytes": len(fields["file"])}
