"""The HTTP side of the ``openai_endpoint`` wire tool loop (:mod:`.endpoint_loop`): where a
model's chat-completions requests go, with the headers and time limits the openai SDK would
send for ``ChatOpenAI`` (see :func:`~.chat_model.agent_chat_model`), over the plain
adapter's ``urllib3`` pool; failures raise the plain adapter's exceptions."""

from __future__ import annotations

from typing import Any

import orjson

DEFAULT_TIMEOUT = (5.0, 600.0)
"""Connect and read seconds of the openai SDK's default time limit (``request_timeout``
unset)."""


def post(target: Target, body: bytes) -> dict[str, Any]:
    """POST one chat-completions request; the reply's JSON (raises as the plain
    ``openai_endpoint`` adapter does for HTTP, connection and time-limit failures)."""
    from urllib3.exceptions import HTTPError as Urllib3Error

    from pytest_karenina.llm.adapters.openai_wire import (
        EndpointHTTPError,
        MalformedReplyError,
        error_message,
    )
    from pytest_karenina.llm.errors import redact

    try:
        response = target.http.urlopen(
            "POST", target.url, body=body, headers=target.headers, retries=False,
            redirect=False, timeout=target.timeout,
        )  # fmt: skip
    except Urllib3Error as exc:
        raise target.transport_error(exc) from None
    if response.status >= 300:
        message = redact(error_message(response.data), target.secrets)
        raise EndpointHTTPError(response.status, message, response)
    try:
        completion = orjson.loads(response.data)
    except orjson.JSONDecodeError:
        raise MalformedReplyError("the reply is not JSON") from None
    if not isinstance(completion, dict):
        raise MalformedReplyError("the reply is not a JSON object")
    return completion


class Target:
    """Where and how a model's chat-completions requests go, as ``ChatOpenAI`` would send
    them (see :func:`~.chat_model.agent_chat_model`)."""

    def __init__(self, model: Any) -> None:
        import urllib3
        from urllib3.util import Url, parse_url

        from pytest_karenina.llm.adapters.openai_endpoint import (
            DEFAULT_POOL_SIZE,
            _pool_manager,
            endpoint_key,
            endpoint_url,
        )
        from pytest_karenina.llm.agents.chat_model import endpoint_headers

        base = parse_url(endpoint_url(model) or "")
        self.url = Url(
            scheme=base.scheme, host=base.host, port=base.port,
            path=f"{(base.path or '').rstrip('/')}/chat/completions",
        ).url  # fmt: skip
        self.secrets = [value for value in (endpoint_key(model), base.auth) if value]
        self.headers = {"Content-Type": "application/json", "Accept": "application/json"}
        self.headers.update(endpoint_headers(model))
        seconds = model.request_timeout
        connect, read = DEFAULT_TIMEOUT if seconds is None else (seconds, seconds)
        self.timeout = urllib3.Timeout(connect=connect, read=read)
        self.http = _pool_manager(self.url, model.max_concurrent_requests or DEFAULT_POOL_SIZE)

    def transport_error(self, exc: Exception) -> Exception:
        from urllib3.exceptions import NewConnectionError
        from urllib3.exceptions import TimeoutError as Urllib3Timeout

        from pytest_karenina.llm.adapters.openai_endpoint import (
            EndpointConnectionError,
            EndpointTimeoutError,
        )
        from pytest_karenina.llm.errors import redact

        reason = redact(f"{type(exc).__name__}: {exc}", self.secrets)
        if isinstance(exc, Urllib3Timeout) and not isinstance(exc, NewConnectionError):
            return EndpointTimeoutError(f"POST {self.url}: no reply ({reason})")
        return EndpointConnectionError(f"POST {self.url}: connection failed ({reason})")
