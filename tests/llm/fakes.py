"""Fakes for the transport and replay tests: provider exceptions, scripted models, clocks."""

from __future__ import annotations

import importlib
import random
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import openai

from pytest_karenina.llm.ports import ChatMessage, ModelReply, ModelRequest

# openai builds its exceptions on whichever httpx flavour it ships with.
try:
    http: Any = importlib.import_module("httpx2")
except ImportError:  # pragma: no cover - older openai releases use httpx
    http = importlib.import_module("httpx")

URL = "http://127.0.0.1:9/v1/chat/completions"
CANARY = "sk-canary-0123456789abcdefXYZ"


def request() -> Any:
    return http.Request("POST", URL)


def response(status: int, headers: Mapping[str, str] | None = None) -> Any:
    return http.Response(status, request=request(), headers=dict(headers or {}))


def status_error(
    cls: type[openai.APIStatusError], status: int, message: str = "boom", **headers: str
) -> openai.APIStatusError:
    """An openai status error with a real (fake) response, as the client would raise it."""
    return cls(
        message,
        response=response(status, {k.replace("_", "-"): v for k, v in headers.items()}),
        body=None,
    )


def rate_limit(retry_after: str | None = None) -> openai.RateLimitError:
    headers = {"retry-after": retry_after} if retry_after is not None else {}
    return openai.RateLimitError("Rate limit reached", response=response(429, headers), body=None)


def server_error(status: int = 500) -> openai.InternalServerError:
    return openai.InternalServerError(f"Error code: {status}", response=response(status), body=None)


def api_timeout() -> openai.APITimeoutError:
    return openai.APITimeoutError(request=request())


def connection_error() -> openai.APIConnectionError:
    return openai.APIConnectionError(request=request())


def req(
    content: str = "What is 2+2?", *, call_kind: str = "answer_generation", **kw: Any
) -> ModelRequest:
    return ModelRequest((ChatMessage("user", content),), call_kind, **kw)


class ScriptedModel:
    """A RawModel answering from a script: exceptions are raised, strings become replies.

    Once the script is used up, the last item repeats.
    """

    def __init__(
        self,
        *script: BaseException | str,
        identity: dict[str, Any] | None = None,
        on_call: Callable[[], None] | None = None,
    ) -> None:
        self.script = list(script)
        self.calls: list[ModelRequest] = []
        self.identity = identity or {"adapter": "fake", "model": "m1", "temperature": 0.0}
        self.on_call = on_call
        self._lock = threading.Lock()

    @property
    def replay_identity(self) -> dict[str, Any]:
        return dict(self.identity)

    def invoke(self, request: ModelRequest) -> ModelReply:
        with self._lock:
            index = len(self.calls)
            self.calls.append(request)
        if self.on_call is not None:
            self.on_call()
        item = self.script[min(index, len(self.script) - 1)]
        if isinstance(item, BaseException):
            raise item
        return ModelReply(item, model="m1")


class FakeClock:
    """A monotonic clock that only moves when ``sleep`` (or ``advance``) is called."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def advance(self, seconds: float) -> None:
        self.now += seconds


class BoundsRng(random.Random):
    """Records the bounds of every ``uniform`` draw and answers with a real seeded draw."""

    def __init__(self) -> None:
        super().__init__(1234)
        self.bounds: list[tuple[float, float]] = []

    def uniform(self, a: float, b: float) -> float:
        self.bounds.append((a, b))
        return super().uniform(a, b)


def join_threads(prefix: str, others: Iterable[threading.Thread] = ()) -> None:
    """Join helper threads left by a test (deadlock guard timeouts, not speed assertions)."""
    for thread in [*threading.enumerate(), *others]:
        if thread.name.startswith(prefix) and thread is not threading.current_thread():
            thread.join(timeout=30)
            assert not thread.is_alive(), f"{thread.name} did not finish"
