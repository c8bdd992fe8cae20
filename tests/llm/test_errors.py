"""Error classification, Retry-After parsing and secret redaction."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
import openai
import pytest

from pytest_karenina.config.secrets import is_secret_name
from pytest_karenina.llm.errors import (
    RETRYABLE_CLASSES,
    ErrorClass,
    classify_error,
    env_secrets,
    is_retryable,
    redact,
    retry_after_seconds,
)
from tests.llm import fakes
from tests.llm.fakes import http, request, response, status_error


class OverloadedError(Exception):
    """Named like anthropic's 529 error: classified by type name, never imported."""


class WithStatus(Exception):
    def __init__(self, status_code: int) -> None:
        super().__init__("opaque")
        self.status_code = status_code


def chained(cause: BaseException) -> RuntimeError:
    try:
        raise RuntimeError("adapter failed") from cause
    except RuntimeError as exc:
        return exc


def httpx_status(status: int) -> httpx.HTTPStatusError:
    req = httpx.Request("POST", fakes.URL)
    return httpx.HTTPStatusError("bad", request=req, response=httpx.Response(status, request=req))


CASES: list[tuple[str, Any, ErrorClass]] = [
    ("openai 429", lambda: fakes.rate_limit(), "rate_limit"),
    ("openai timeout", fakes.api_timeout, "timeout"),
    ("openai connection", fakes.connection_error, "connection"),
    ("openai 500", lambda: fakes.server_error(500), "server_error"),
    ("openai 503", lambda: fakes.server_error(503), "server_error"),
    ("openai 401", lambda: status_error(openai.AuthenticationError, 401), "auth"),
    ("openai 403", lambda: status_error(openai.PermissionDeniedError, 403), "auth"),
    ("openai 400", lambda: status_error(openai.BadRequestError, 400), "client_error"),
    ("openai 404", lambda: status_error(openai.NotFoundError, 404), "client_error"),
    ("openai 422", lambda: status_error(openai.UnprocessableEntityError, 422), "client_error"),
    ("openai 409", lambda: status_error(openai.ConflictError, 409), "client_error"),
    ("openai status 418", lambda: status_error(openai.APIStatusError, 418), "client_error"),
    ("openai status 502", lambda: status_error(openai.APIStatusError, 502), "server_error"),
    ("openai status 529", lambda: status_error(openai.APIStatusError, 529), "rate_limit"),
    ("openai status 408", lambda: status_error(openai.APIStatusError, 408), "timeout"),
    ("httpx ReadTimeout", lambda: httpx.ReadTimeout("slow"), "timeout"),
    ("httpx ConnectTimeout", lambda: httpx.ConnectTimeout("slow"), "timeout"),
    ("httpx ConnectError", lambda: httpx.ConnectError("refused"), "connection"),
    ("httpx RemoteProtocolError", lambda: httpx.RemoteProtocolError("eof"), "connection"),
    ("httpx 503", lambda: httpx_status(503), "server_error"),
    ("httpx 404", lambda: httpx_status(404), "client_error"),
    ("httpx 429", lambda: httpx_status(429), "rate_limit"),
    ("openai's http ReadTimeout", lambda: http.ReadTimeout("slow"), "timeout"),
    ("openai's http ConnectError", lambda: http.ConnectError("refused"), "connection"),
    ("ConnectionError", lambda: ConnectionError("x"), "connection"),
    ("ConnectionResetError", lambda: ConnectionResetError(104, "reset"), "connection"),
    ("ConnectionRefusedError", lambda: ConnectionRefusedError(111, "refused"), "connection"),
    ("TimeoutError", lambda: TimeoutError(), "timeout"),
    ("anthropic-style OverloadedError", lambda: OverloadedError("busy"), "rate_limit"),
    ("status_code attribute", lambda: WithStatus(429), "rate_limit"),
    ("status_code attribute 401", lambda: WithStatus(401), "auth"),
    ("cause chain", lambda: chained(fakes.rate_limit()), "rate_limit"),
    ("plain ValueError", lambda: ValueError("bad template"), "permanent"),
    ("KeyError", lambda: KeyError("choices"), "permanent"),
]


@pytest.mark.parametrize(("make", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_classification_by_type_and_status(make: Any, expected: ErrorClass) -> None:
    assert classify_error(make()) == expected


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("Rate limit reached for gpt-4o", "rate_limit"),
        ("Error 429 from upstream", "rate_limit"),
        ("Too Many Requests", "rate_limit"),
        ("the model is overloaded, try later", "rate_limit"),
        ("Request timed out", "timeout"),
        ("read timeout", "timeout"),
        ("deadline exceeded", "timeout"),
        ("Connection refused", "connection"),
        ("DNS lookup failed", "connection"),
        ("network is unreachable", "connection"),
        ("HTTP 502 Bad Gateway", "server_error"),
        ("503 Service Unavailable", "server_error"),
        ("upstream said 500", "server_error"),
        ("Internal Server Error", "server_error"),
        ("401 Unauthorized", "auth"),
        ("Invalid API key provided", "auth"),
        ("max_tokens 1500 is too large", "permanent"),
        ("the answer was not JSON", "permanent"),
        ("", "permanent"),
    ],
)
def test_classification_by_message(message: str, expected: ErrorClass) -> None:
    assert classify_error(RuntimeError(message)) == expected


def test_type_wins_over_message() -> None:
    assert classify_error(status_error(openai.BadRequestError, 400, "timed out 429")) == (
        "client_error"
    )


def test_only_transient_classes_are_retryable() -> None:
    assert set(RETRYABLE_CLASSES) == {"connection", "timeout", "rate_limit", "server_error"}
    for error_class in ("auth", "client_error", "permanent"):
        assert not is_retryable(error_class)
    for error_class in RETRYABLE_CLASSES:
        assert is_retryable(error_class)


@pytest.mark.parametrize(
    ("header", "expected"),
    [("7", 7.0), ("1.5", 1.5), (" 30 ", 30.0), ("-5", 0.0), ("soon", None), ("", None)],
)
def test_retry_after_seconds(header: str, expected: float | None) -> None:
    assert retry_after_seconds(fakes.rate_limit(header)) == expected


def test_retry_after_http_date() -> None:
    future = format_datetime(datetime.now(UTC) + timedelta(seconds=120), usegmt=True)
    past = format_datetime(datetime.now(UTC) - timedelta(seconds=120), usegmt=True)

    seconds = retry_after_seconds(fakes.rate_limit(future))

    assert seconds is not None and 0.0 < seconds <= 120.0
    assert retry_after_seconds(fakes.rate_limit(past)) == 0.0


def test_retry_after_absent() -> None:
    assert retry_after_seconds(fakes.rate_limit()) is None
    assert retry_after_seconds(fakes.api_timeout()) is None  # no response at all
    assert retry_after_seconds(ValueError("x")) is None


def test_retry_after_on_httpx_status_error() -> None:
    req = httpx.Request("GET", fakes.URL)
    resp = httpx.Response(503, request=req, headers={"Retry-After": "4"})
    exc = httpx.HTTPStatusError("x", request=req, response=resp)
    assert retry_after_seconds(exc) == 4.0
    assert response(429).headers.get("retry-after") is None and request().method == "POST"


def test_redact_known_secrets_and_credential_shapes() -> None:
    text = (
        f"Incorrect API key provided: {fakes.CANARY}."
        " headers={'Authorization': 'Bearer abc.def-123456'}"
        ' url=https://h/v1?api_key=hunter2hunter2&x=1 {"token": "tok_998877"} max_tokens=100'
    )

    redacted = redact(text, [fakes.CANARY, ""])

    assert fakes.CANARY not in redacted
    for leaked in ("abc.def-123456", "hunter2hunter2", "tok_998877"):
        assert leaked not in redacted
    assert "Bearer ***" in redacted and "api_key=***" in redacted and '"token": "***"' in redacted
    assert "max_tokens=100" in redacted


def test_redact_sk_key_without_being_told() -> None:
    assert redact("key sk-proj-abcdefghijklmnop1234 rejected") == "key *** rejected"


def test_redact_longest_secret_first() -> None:
    assert redact("abcdef12345678", ["abcdef", "abcdef12345678"]) == "***"


def test_env_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_PROVIDER_API_KEY", "env-secret-value-42")
    monkeypatch.setenv("HF_TOKEN", "short")
    monkeypatch.setenv("MY_HARMLESS_SETTING", "not-a-secret-value")

    found = env_secrets()

    assert "env-secret-value-42" in found
    assert "short" not in found and "not-a-secret-value" not in found


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("api_key", True),
        ("openai_api_key", True),
        ("apiKey", True),
        ("x-api-key", True),
        ("Authorization", True),
        ("X-Auth-Token", True),
        ("access_token", True),
        ("client_secret", True),
        ("password", True),
        ("basic_auth", True),
        ("max_tokens", False),
        ("input_tokens", False),
        ("token_limit", False),
        ("model", False),
        ("temperature", False),
        ("base_url", False),
        ("author", False),
    ],
)
def test_is_secret_name(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret
