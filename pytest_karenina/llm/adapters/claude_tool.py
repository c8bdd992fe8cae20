"""``claude_tool``: Anthropic's Messages API through the ``anthropic`` SDK (the ``claude`` extra).

Plain answers and judge replies are one streamed ``messages`` call each; judge replies ask
for their schema natively (:mod:`.anthropic_wire`). Streaming is deliberate: the API and SDK
want it for long replies (a non-streamed call whose ``max_tokens`` could take over ten
minutes is refused), and a stream that ends before ``message_stop`` is told apart from a
complete reply (the SDK accepts it silently), so a cut reply is retried as a dropped
connection instead of being judged. With MCP tools the model answers through the tool loop
(:mod:`pytest_karenina.llm.agents.claude_chat`), which runs the loop itself: the SDK's
``tool_runner`` keeps its conversation in server-side threads by default, which no
Anthropic-compatible proxy is bound to offer.

The key is the model's ``anthropic_api_key``, else ``ANTHROPIC_API_KEY``; the server is its
``anthropic_base_url``, else ``ANTHROPIC_BASE_URL``, else Anthropic's. The SDK's own retries
are off: the transport retries with the run's policy, honouring ``retry-after`` on 429 and 529.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_karenina.config.secrets import masked_url
from pytest_karenina.llm.adapters.anthropic_wire import (
    StructuredForms,
    as_forced_tool,
    conversation,
    error_text,
    reply_text,
    request_options,
    structured_tool_name,
    usage_of,
)
from pytest_karenina.llm.adapters.identity import config_identity
from pytest_karenina.llm.ports import ModelReply, ModelRequest
from pytest_karenina.llm.provider_keys import require_key
from pytest_karenina.results.text import encodable

if TYPE_CHECKING:
    from pytest_karenina.config.model import ModelConfig

logger = logging.getLogger(__name__)
ANTHROPIC_URL_VARIABLE = "ANTHROPIC_BASE_URL"
CLAUDE_EXTRA = "pip install 'pytest-karenina[claude]'"
DEFAULT_URL = "https://api.anthropic.com"
STATUS_OF_ERROR_TYPE = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}
"""HTTP status of an error the API sends as an SSE ``error`` event inside a 200 stream."""


class ClaudeUnavailable(RuntimeError):
    """The ``anthropic`` package is missing; the message says how to install it."""


class ClaudeAPIError(Exception):
    """The API answered with an error: ``status_code`` and ``response`` (its headers carry
    ``retry-after``) are what the transport classifies and waits by."""

    def __init__(self, message: str, status_code: int, response: Any) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.response = response


class ClaudeConnectionError(ConnectionError):
    """The server could not be reached, dropped the connection or cut the stream (retried)."""


class ClaudeTimeoutError(TimeoutError):
    """No complete reply within the attempt's time limit (retried)."""


@dataclass(frozen=True)
class ClaudeSettings:
    """What a Claude model's client needs: resolved once from its configuration."""

    model: str
    key: str
    base_url: str | None
    timeout: float | None
    body: dict[str, Any]
    headers: dict[str, str]

    @classmethod
    def of(cls, config: ModelConfig) -> ClaudeSettings:
        key = require_key(config)
        body, headers = request_options(config.temperature, config.max_tokens, config.extra_kwargs)
        url = config.anthropic_base_url or os.environ.get(ANTHROPIC_URL_VARIABLE) or None
        return cls(config.model_name or "", key, url, config.request_timeout, body, headers)

    @property
    def shown_url(self) -> str:
        return masked_url(self.base_url or DEFAULT_URL)

    def client_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {"api_key": self.key, "max_retries": 0}
        if self.base_url:
            options["base_url"] = self.base_url
        if self.timeout is not None:
            options["timeout"] = self.timeout
        if self.headers:
            options["default_headers"] = self.headers
        return options

    def params(self, system: str | None, messages: list[dict[str, Any]]) -> dict[str, Any]:
        """Keyword arguments of a ``messages`` call: the model's fixed fields go as
        ``extra_body`` (``temperature`` among them: the SDK's ``stream`` has no parameter
        for it, the API takes it)."""
        extra = dict(self.body)
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": extra.pop("max_tokens"),
            "messages": messages,
        }
        if system:
            params["system"] = system
        if extra:
            params["extra_body"] = extra
        return params


def import_anthropic() -> Any:
    try:
        import anthropic
    except ImportError:
        raise ClaudeUnavailable(
            f"claude_tool needs the anthropic package: {CLAUDE_EXTRA}"
        ) from None
    return anthropic


def translated(exc: BaseException, where: str) -> Exception | None:
    """Our exception for an SDK or transport failure, naming ``where`` (model and server),
    or None when ``exc`` is none of those (it then propagates as it is)."""
    anthropic = import_anthropic()
    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        kind = exc.body.get("error", {}).get("type") if isinstance(exc.body, dict) else None
        if status < 400 and isinstance(kind, str):  # an SSE error event
            status = STATUS_OF_ERROR_TYPE.get(kind, 500)
        return ClaudeAPIError(f"{where}: {error_text(exc)}", status, exc.response)
    name = type(exc).__name__
    if isinstance(exc, anthropic.APITimeoutError) or "Timeout" in name:
        return ClaudeTimeoutError(f"{where}: no reply in time ({name})")
    if isinstance(exc, anthropic.APIConnectionError) or type(exc).__module__.startswith("httpx"):
        return ClaudeConnectionError(f"{where}: connection failed ({name}: {exc})")
    return None


@contextmanager
def sdk_errors(where: str) -> Iterator[None]:
    """Turn SDK and transport failures inside the block into ours (see :func:`translated`)."""
    try:
        yield
    except Exception as exc:
        ours = translated(exc, where)
        if ours is None:
            raise
        raise ours from None


def cut_short(stop_reason: Any, where: str) -> ClaudeConnectionError | None:
    """The error for a stream that ended without a stop reason (no ``message_delta``), or None."""
    if stop_reason is not None:
        return None
    return ClaudeConnectionError(f"{where}: the reply stream ended before message_stop")


class TemperatureGuard:
    """Sends a model's ``temperature`` until the API refuses it, then none: Claude models
    after Opus 4.6 deprecate the sampling parameters and answer a 400 naming them, which
    Karenina's default temperature (0.1) would meet on every call. Logged once per model."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.refused = False

    def applied(self, params: dict[str, Any]) -> dict[str, Any]:
        extra = params.get("extra_body") or {}
        if not self.refused or "temperature" not in extra:
            return params
        kept = {key: value for key, value in extra.items() if key != "temperature"}
        return {key: value for key, value in params.items() if key != "extra_body"} | (
            {"extra_body": kept} if kept else {}
        )

    def refuses(self, exc: ClaudeAPIError, params: dict[str, Any]) -> bool:
        """Whether ``exc`` refuses the temperature ``params`` sent (then it is dropped)."""
        sent = "temperature" in (params.get("extra_body") or {})
        if self.refused or not sent or exc.status_code != 400:
            return False
        if "temperature" not in str(exc).lower():
            return False
        self.refused = True
        logger.warning("%s refuses temperature: sent without it from now on (%s)", self.where, exc)
        return True


class ClaudeToolModel:
    """A :class:`~pytest_karenina.llm.ports.RawModel` over Anthropic's Messages API.

    Thread-safe: one SDK client (one connection pool) serves every thread. It honours
    ``ModelRequest.timeout`` (``enforces_timeout``): the whole streamed reply must arrive
    within it.
    """

    enforces_timeout = True

    def __init__(self, config: ModelConfig) -> None:
        self.config = config
        self._lock = threading.Lock()
        self._client: Any = None
        self._settings: ClaudeSettings | None = None
        self._forms = StructuredForms()
        self._guard = TemperatureGuard(self._where())

    @property
    def replay_identity(self) -> dict[str, Any]:
        return config_identity(self.config)

    def prepare(self) -> Any:
        """Import the SDK and build the client (once); raises when the key or the package
        is missing."""
        with self._lock:
            if self._client is None:
                anthropic = import_anthropic()
                settings = ClaudeSettings.of(self.config)
                self._client = anthropic.Anthropic(**settings.client_options())
                self._settings = settings
            return self._client

    def invoke(self, request: ModelRequest) -> ModelReply:
        client = self.prepare()
        settings = self._settings
        assert settings is not None
        system, messages = conversation(request.messages)
        params = settings.params(system, messages)
        seconds = request.timeout if request.timeout is not None else settings.timeout
        if request.json_schema is None:
            return self._send(client, params, seconds, None)
        forms = self._forms.params(request.schema_name, request.json_schema)
        tool = structured_tool_name(request.schema_name) if "tools" in forms else None
        try:
            return self._send(client, {**params, **forms}, seconds, tool)
        except ClaudeAPIError as exc:
            if exc.status_code != 400 or tool is not None:
                raise
        # The model refused output_config (older models have no structured outputs): ask
        # through a forced tool, and from then on for every schema once that works.
        tool = structured_tool_name(request.schema_name)
        forced = as_forced_tool(request.schema_name, request.json_schema)
        reply = self._send(client, {**params, **forced}, seconds, tool)
        self._forms.output_config_refused = True
        return reply

    def _where(self) -> str:
        shown = self._settings.shown_url if self._settings is not None else DEFAULT_URL
        return f"claude_tool model {self.config.model_name!r} at {shown}"

    def _send(
        self, client: Any, params: dict[str, Any], seconds: float | None, tool: str | None
    ) -> ModelReply:
        try:
            return self._call(client, self._guard.applied(params), seconds, tool)
        except ClaudeAPIError as exc:
            if not self._guard.refuses(exc, params):
                raise
        return self._call(client, self._guard.applied(params), seconds, tool)

    def _call(
        self, client: Any, params: dict[str, Any], seconds: float | None, tool: str | None
    ) -> ModelReply:
        where = self._where()
        deadline = time.monotonic() + seconds if seconds is not None else None
        options = {"timeout": seconds} if seconds is not None else {}
        with sdk_errors(where), client.messages.stream(**params, **options) as stream:
            for _event in stream:
                if deadline is not None and time.monotonic() > deadline:
                    raise ClaudeTimeoutError(f"{where}: no complete reply within {seconds:g}s")
            message = stream.get_final_message()
        problem = cut_short(message.stop_reason, where)
        if problem is not None:
            raise problem
        text = encodable(reply_text(message.content, tool))
        return ModelReply(text, usage_of(message.usage), message.model or self.config.model_name)
