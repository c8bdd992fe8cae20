"""``openai_endpoint``: any OpenAI-compatible chat-completions server, spoken to directly.

vLLM, Ollama, llama.cpp, LiteLLM proxies and hosted OpenAI-compatible APIs answer fast and in
parallel, so the client's CPU per call decides the wall time of a run. This adapter speaks the
wire protocol itself over ``urllib3`` (pooled keep-alive connections shared by all threads,
TLS, proxies) with ``orjson``: about a fifth of the CPU of ``ChatOpenAI`` per call
(docs/performance.md). For LangChain callbacks and tracing use the ``langchain`` interface
with the ``openai`` provider and a ``base_url`` in ``extra_kwargs``.

``openrouter`` models speak the same protocol to OpenRouter (``https://openrouter.ai/api/v1``
unless ``endpoint_base_url`` names another server) with ``endpoint_api_key`` or
``OPENROUTER_API_KEY``, as Karenina's ``ChatOpenRouter`` does (no headers of its own; add
OpenRouter's ``HTTP-Referer`` / ``X-Title`` through ``extra_kwargs.default_headers``).

Proxies come from the standard environment variables (``HTTPS_PROXY``, ``HTTP_PROXY``,
``ALL_PROXY``, ``NO_PROXY``), read when the model is built.
"""

from __future__ import annotations

import os
import urllib.request
from typing import TYPE_CHECKING, Any

import urllib3
from urllib3 import HTTPConnectionPool
from urllib3.exceptions import HTTPError as Urllib3Error
from urllib3.exceptions import NewConnectionError, ProxyError, SSLError
from urllib3.exceptions import TimeoutError as Urllib3Timeout
from urllib3.util import Url, parse_url

from pytest_karenina.llm.adapters.identity import config_identity
from pytest_karenina.llm.adapters.openai_wire import (
    EndpointHTTPError,
    body_options,
    error_message,
    parse_reply,
    request_body,
)
from pytest_karenina.llm.errors import redact
from pytest_karenina.llm.ports import ModelReply, ModelRequest
from pytest_karenina.llm.provider_keys import MissingKeyError, require_key
from pytest_karenina.llm.strict_schema import ResponseFormats

if TYPE_CHECKING:
    from pytest_karenina.config.model import ModelConfig

ENDPOINT_KEY_VARIABLE = "OPENAI_API_KEY"
"""Environment variable read for an ``openai_endpoint`` model without ``endpoint_api_key``."""

DEFAULT_POOL_SIZE = 256
"""Kept-alive connections per endpoint when the model sets no ``max_concurrent_requests``
(connections open lazily, so a large pool costs nothing until used)."""


class EndpointConnectionError(ConnectionError):
    """The endpoint could not be reached, or dropped the connection (retried)."""


class EndpointTimeoutError(TimeoutError):
    """No reply within the attempt's time limit (retried)."""


OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"
"""Where ``openrouter`` models are sent unless their ``endpoint_base_url`` says otherwise."""


def endpoint_url(config: ModelConfig) -> str | None:
    """The base URL of an ``openai_endpoint`` or ``openrouter`` model."""
    if config.interface == "openrouter":
        return config.endpoint_base_url or OPENROUTER_BASE_URL
    return config.endpoint_base_url


def endpoint_key(config: ModelConfig) -> str | None:
    """The key sent to the endpoint: for ``openrouter`` its ``endpoint_api_key``, else
    ``OPENROUTER_API_KEY`` (:class:`~..provider_keys.MissingKeyError` without either); for
    ``openai_endpoint`` its ``endpoint_api_key``, else ``OPENAI_API_KEY``, else none."""
    if config.interface == "openrouter":
        return require_key(config)
    secret = config.endpoint_api_key
    return secret.get_secret_value() if secret else os.environ.get(ENDPOINT_KEY_VARIABLE)


class OpenAIEndpointModel:
    """A :class:`~pytest_karenina.llm.ports.RawModel` for an OpenAI-compatible endpoint.

    Thread-safe: one instance serves every thread of a run over one connection pool. It
    honours ``ModelRequest.timeout`` (``enforces_timeout``); without one it uses the
    model's ``request_timeout``. The API key is ``endpoint_api_key``, else the
    ``OPENAI_API_KEY`` environment variable, else none (no ``Authorization`` header).
    """

    enforces_timeout = True

    def __init__(self, config: ModelConfig) -> None:
        url = endpoint_url(config)
        if not url:
            raise ValueError(f"model {config.id!r}: openai_endpoint needs endpoint_base_url")
        self.config = config
        base = parse_url(url)
        self._url = Url(
            scheme=base.scheme, host=base.host, port=base.port,
            path=f"{(base.path or '').rstrip('/')}/chat/completions",
        ).url  # fmt: skip
        self._body, headers = body_options(
            config.temperature, config.max_tokens, config.extra_kwargs
        )
        self._missing_key: MissingKeyError | None = None
        try:
            key = endpoint_key(config)
        except MissingKeyError as exc:  # fails each call, not the run's setup
            key, self._missing_key = None, exc
        self._secrets = [value for value in (key, base.auth) if value]
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if base.auth:  # user:password in the URL: basic auth, never part of the URL we log
            self._headers.update(urllib3.make_headers(basic_auth=base.auth))
        if key:
            self._headers["Authorization"] = f"Bearer {key}"
        self._headers.update(headers)
        self._timeout = config.request_timeout
        self._formats = ResponseFormats()
        self._http = _pool_manager(self._url, config.max_concurrent_requests or DEFAULT_POOL_SIZE)
        # Without a proxy every call goes to one pool: asking it directly spares the manager's
        # URL parsing and pool lookup on each call (about 0.05 ms of a 0.35 ms call).
        self._pool: HTTPConnectionPool | None = None
        if type(self._http) is urllib3.PoolManager:
            self._pool = self._http.connection_from_url(self._url)
        self._path = parse_url(self._url).request_uri

    @property
    def replay_identity(self) -> dict[str, Any]:
        return config_identity(self.config)

    def invoke(self, request: ModelRequest) -> ModelReply:
        if self._missing_key is not None:
            raise self._missing_key
        body = request_body(self.config.model_name or "", self._body, request, self._formats)
        seconds = request.timeout if request.timeout is not None else self._timeout
        timeout = urllib3.Timeout(connect=seconds, read=seconds)
        try:
            if self._pool is not None:
                response = self._pool.urlopen(
                    "POST", self._path, body=body, headers=self._headers, retries=False,
                    redirect=False, assert_same_host=False, timeout=timeout,
                )  # fmt: skip
            else:
                response = self._http.urlopen(
                    "POST", self._url, body=body, headers=self._headers, retries=False,
                    redirect=False, timeout=timeout,
                )  # fmt: skip
        except Urllib3Error as exc:
            raise self._transport_error(exc, seconds) from None
        if response.status >= 400:
            message = redact(error_message(response.data), self._secrets)
            raise EndpointHTTPError(response.status, message, response)
        if response.status >= 300:  # not followed: a POST is not replayed elsewhere unasked
            target = redact(str(response.headers.get("Location", "?")), self._secrets)
            message = f"redirected to {target}; set endpoint_base_url to the final URL"
            raise EndpointHTTPError(response.status, message, response)
        return parse_reply(response.data, self.config.model_name)

    def _transport_error(self, exc: Urllib3Error, seconds: float | None) -> Exception:
        """Our exception for a urllib3 failure: a timeout or a connection error, never with
        a credential in its message (the cause is not chained for the same reason)."""
        reason = redact(f"{type(exc).__name__}: {exc}", self._secrets)
        where = f"POST {self._url}"
        if isinstance(exc, Urllib3Timeout) and not isinstance(exc, NewConnectionError):
            limit = f" within {seconds:g}s" if seconds is not None else ""
            return EndpointTimeoutError(f"{where}: no reply{limit} ({reason})")
        if isinstance(exc, ProxyError | SSLError):
            return EndpointConnectionError(f"{where}: {reason}")
        return EndpointConnectionError(f"{where}: connection failed ({reason})")


def _pool_manager(url: str, size: int) -> urllib3.PoolManager:
    """A pool for ``url``: through the proxy the environment names for it, if any."""
    parsed = parse_url(url)
    proxies = urllib.request.getproxies()
    proxy = proxies.get(parsed.scheme or "http") or proxies.get("all")
    bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]
    if proxy and not bypass(parsed.host or "", proxies):
        target = parse_url(proxy)
        headers = urllib3.make_headers(proxy_basic_auth=target.auth) if target.auth else None
        plain = Url(scheme=target.scheme, host=target.host, port=target.port).url
        return urllib3.ProxyManager(plain, proxy_headers=headers, maxsize=size, block=False)
    return urllib3.PoolManager(maxsize=size, block=False)
