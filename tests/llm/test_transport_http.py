"""RetryingModel and ReplayingModel over real HTTP: the openai client and the scripted server."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import openai
import pytest

from pytest_karenina.llm.ports import ModelReply, ModelRequest, Usage
from pytest_karenina.llm.replay import ReplayingModel, ReplayStore
from pytest_karenina.llm.transport import RetryEvent, RetryingModel, TransportError
from tests.llm import fakes
from tests.llm.fakes import FakeClock, req
from tests.support.openai_server import Fault, OpenAIServer


class OpenAIModel:
    """A minimal RawModel over the real openai client (SDK retries off, as our adapters do)."""

    def __init__(self, server: OpenAIServer, api_key: str = "test-key") -> None:
        self.client = openai.OpenAI(
            base_url=server.base_url, api_key=api_key, max_retries=0, timeout=10.0
        )

    @property
    def replay_identity(self) -> dict[str, Any]:
        return {"adapter": "openai", "model": "test-model", "temperature": 0.0}

    def invoke(self, request: ModelRequest) -> ModelReply:
        messages: list[Any] = [{"role": m.role, "content": m.content} for m in request.messages]
        completion = self.client.chat.completions.create(
            model="test-model",
            messages=messages,
            temperature=0.0,
        )
        usage = completion.usage
        return ModelReply(
            completion.choices[0].message.content or "",
            Usage(usage.prompt_tokens, usage.completion_tokens) if usage else Usage(),
            completion.model,
        )


def test_real_429_and_503_are_retried(openai_server: OpenAIServer) -> None:
    openai_server.script(Fault.rate_limit(retry_after=7), Fault.server_error(503), "Four.")
    clock, events = FakeClock(), list[RetryEvent]()
    model = RetryingModel(
        OpenAIModel(openai_server), sleep=clock.sleep, clock=clock, on_retry=events.append
    )
    try:
        reply = model.invoke(req())
    finally:
        model.inner.client.close()  # type: ignore[attr-defined]

    assert reply.text == "Four." and len(openai_server.chat_requests) == 3
    assert [e.error_class for e in events] == ["rate_limit", "server_error"]
    assert clock.sleeps[0] == 7.0 and 2.0 <= clock.sleeps[1] <= 4.0


def test_real_401_fails_at_once_without_the_key(openai_server: OpenAIServer) -> None:
    openai_server.add_rule(
        Fault.http_error(401, f"Incorrect API key provided: {fakes.CANARY}"), times=1
    )
    model = RetryingModel(OpenAIModel(openai_server, api_key=fakes.CANARY), sleep=FakeClock().sleep)
    try:
        with pytest.raises(TransportError) as caught:
            model.invoke(req())
    finally:
        model.inner.client.close()  # type: ignore[attr-defined]

    error = caught.value
    assert error.error_class == "auth" and error.attempts == 1
    assert fakes.CANARY not in str(error)
    assert len(openai_server.chat_requests) == 1


def test_replay_over_retries_records_once(openai_server: OpenAIServer, tmp_path: Path) -> None:
    openai_server.script(Fault.server_error(500), "Paris")
    path = tmp_path / "store.jsonl"
    inner = OpenAIModel(openai_server)
    live = ReplayingModel(
        RetryingModel(inner, sleep=FakeClock().sleep), ReplayStore(path, "replay")
    )
    try:
        assert live.invoke(req("Capital of France?")).text == "Paris"
        assert live.invoke(req("Capital of France?")).text == "Paris"  # a hit: no request
    finally:
        inner.client.close()

    offline = ReplayingModel(None, ReplayStore(path, "strict"), identity=inner.replay_identity)
    assert offline.invoke(req("Capital of France?")).usage.output_tokens == 1
    assert len(openai_server.chat_requests) == 2  # the 500 and the success


def test_langchain_openai_model_enforces_the_timeout_per_request(
    openai_server: OpenAIServer,
) -> None:
    from pytest_karenina.config.model import ModelConfig
    from pytest_karenina.llm.adapters.langchain_model import LangChainModel

    openai_server.script(Fault.timeout(seconds=30), "On time.")
    config = ModelConfig(
        id="m", model_name="test-model", model_provider="openai", interface="langchain",
        extra_kwargs={"base_url": openai_server.base_url, "api_key": "test-key"},
        request_timeout=60.0,
    )  # fmt: skip
    adapter = LangChainModel(config)
    clock, events = FakeClock(), list[RetryEvent]()
    model = RetryingModel(adapter, timeout=0.3, sleep=clock.sleep, on_retry=events.append)

    assert adapter.enforces_timeout
    assert model.invoke(req()).text == "On time."
    assert [e.error_class for e in events] == ["timeout"]
    assert "karenina-llm-call" not in {t.name for t in threading.enumerate()}
