"""A forwarding HTTP proxy on 127.0.0.1 for tests (standard library only).

It takes absolute-form requests (``POST http://host:port/path``, what a client sends to an
HTTP proxy for a plain-HTTP target), records the target URL and the ``Proxy-Authorization``
header, forwards the request and relays the reply::

    with ForwardProxy() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        ...
        assert proxy.seen == ["http://127.0.0.1:1234/v1/chat/completions"]
"""

from __future__ import annotations

import http.client
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit


class ForwardProxy:
    def __init__(self) -> None:
        self.seen: list[str] = []
        self.proxy_authorization: list[str | None] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def record(self, target: str, authorization: str | None) -> None:
        with self._lock:
            self.seen.append(target)
            self.proxy_authorization.append(authorization)

    def __enter__(self) -> ForwardProxy:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()


def _handler_for(proxy: ForwardProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            proxy.record(self.path, self.headers.get("Proxy-Authorization"))
            target = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            headers = {
                name: value
                for name, value in self.headers.items()
                if name.lower() not in ("proxy-authorization", "proxy-connection", "host")
            }
            upstream = http.client.HTTPConnection(target.hostname or "", target.port, timeout=30)
            try:
                upstream.request("POST", target.path, body=body, headers=headers)
                reply = upstream.getresponse()
                data = reply.read()
            finally:
                upstream.close()
            self.send_response(reply.status)
            for name, value in reply.getheaders():
                if name.lower() not in ("connection", "transfer-encoding", "content-length"):
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler
