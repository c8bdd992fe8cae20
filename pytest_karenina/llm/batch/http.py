"""The HTTP side every batch provider shares: the API's base URL without credentials, the
headers (URL credentials as basic auth), one small connection pool, and transport failures
as :class:`ConnectionError` (what the collector retries) with every secret redacted."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import urllib3
from urllib3.util import Url, parse_url

from pytest_karenina.llm.adapters.openai_endpoint import _pool_manager
from pytest_karenina.llm.errors import redact


class BatchHTTP:
    """``base_url`` and ``key`` of one provider lane; the provider adds its key header."""

    def __init__(
        self, base_url: str, key: str | None, headers: Mapping[str, str], read_timeout: float
    ) -> None:
        parsed = parse_url(base_url)
        self.base = Url(
            scheme=parsed.scheme, host=parsed.host, port=parsed.port,
            path=(parsed.path or "").rstrip("/"),
        ).url  # fmt: skip
        self.secrets = [value for value in (key, parsed.auth) if value]
        self.headers = {"Accept": "application/json", **headers}
        if parsed.auth:
            self.headers.update(urllib3.make_headers(basic_auth=parsed.auth))
        self._read_timeout = read_timeout
        self._pool = _pool_manager(self.base, 4)

    def send(
        self, method: str, url: str, *, body: bytes | None = None,
        fields: dict[str, Any] | None = None,
    ) -> urllib3.BaseHTTPResponse:  # fmt: skip
        """The response, whatever its status; a transport failure is a ConnectionError naming
        the method and URL, never a secret."""
        headers = dict(self.headers)
        if body is not None:
            headers["Content-Type"] = "application/json"
        try:
            if fields is not None:
                return self._pool.request(
                    method, url, fields=fields, headers=headers, retries=False,
                    timeout=self._read_timeout,
                )  # fmt: skip
            return self._pool.urlopen(
                method, url, body=body, headers=headers, retries=False, redirect=False,
                timeout=urllib3.Timeout(connect=30.0, read=self._read_timeout),
            )  # fmt: skip
        except urllib3.exceptions.HTTPError as exc:
            reason = redact(f"{type(exc).__name__}: {exc}", self.secrets)
            raise ConnectionError(f"{method} {url}: {reason}") from None

    def redact(self, text: str) -> str:
        return redact(text, self.secrets)
