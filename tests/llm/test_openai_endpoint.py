"""The ``openai_endpoint`` adapter over real HTTP: the wire request, replies, every error
class through the transport, keep-alive, proxies, and keys kept out of every message."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from pytest_karenina.config.model import ModelConfig
from pytest_karenina.llm.adapters.openai_endpoint import OpenAIEndpointModel
from pytest_karenina.llm.ports import ModelRequest
from pytest_karenina.llm.replay import replay_key
from pytest_karenina.llm.transport import RetryEvent, RetryingModel, TransportError
from tests.llm import fakes
from tests.llm.fakes import FakeClock, req
from tests.support.http_proxy import ForwardProxy
from tests.support.openai_server import Fault, OpenAIServer


class Verdict(BaseModel):
    city: str | None = None
    population: int


class Table(BaseModel):
    counts: dict[str, int]


def endpoint(server: OpenAIServer, **fields: Any) -> OpenAIEndpointModel:
    options: dict[str, Any] = {
        "id": "m", "model_name": "test-model", "interface": "openai_endpoint",
        "endpoint_base_url": server.base_url, "endpoint_api_key": "test-key",
        "temperature": 0.0, "max_tokens": 256, "request_timeout": 30.0, **fields,
    }  # fmt: skip
    return OpenAIEndpointModel(ModelConfig(**options))


def retrying(model: OpenAIEndpointModel, **options: Any) -> tuple[RetryingModel, FakeClock]:
    clock = FakeClock()
    return RetryingModel(model, sleep=clock.sleep, clock=clock, **options), clock


@pytest.fixture
def no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    yield


def test_a_plain_call_is_the_chat_completions_request(openai_server: OpenAIServer) -> None:
    openai_server.add_rule("Four.", contains="2+2")

    reply = endpoint(openai_server).invoke(req("What is 2+2?"))

    assert (reply.text, reply.model) == ("Four.", "test-model")
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (3, 1)
    [seen] = openai_server.chat_requests
    assert seen.path == "/v1/chat/completions"
    assert seen.body == {
        "model": "test-model",
        "messages": [{"role": "user", "content": "What is 2+2?"}],
        "temperature": 0.0,
        "max_tokens": 256,
    }
    assert seen.headers["authorization"] == "Bearer <redacted>"
    assert seen.headers["content-type"] == "application/json"


def test_without_a_key_no_authorization_is_sent(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    openai_server.set_default("ok")

    endpoint(openai_server, endpoint_api_key=None).invoke(req())

    assert "authorization" not in openai_server.chat_requests[0].headers


def test_extra_kwargs_are_read_as_chat_openai_reads_them(openai_server: OpenAIServer) -> None:
    openai_server.set_default("ok")
    extra = {
        "top_p": 0.5, "seed": 7, "model_kwargs": {"stop": ["END"]},
        "extra_body": {"chat_template_kwargs": {"thinking": False}},
        "default_headers": {"X-Team": "evals"}, "timeout": 5, "max_retries": 3,
    }  # fmt: skip

    endpoint(openai_server, extra_kwargs=extra).invoke(req())

    [seen] = openai_server.chat_requests
    assert seen.body["top_p"] == 0.5 and seen.body["seed"] == 7
    assert seen.body["stop"] == ["END"]
    assert seen.body["chat_template_kwargs"] == {"thinking": False}
    assert not {"timeout", "max_retries", "model_kwargs", "extra_body"} & seen.body.keys()
    assert seen.headers["x-team"] == "evals"


def test_a_schema_strict_mode_can_express_is_sent_strict(openai_server: OpenAIServer) -> None:
    openai_server.set_default({"city": "Paris", "population": 2})
    schema = Verdict.model_json_schema()

    reply = endpoint(openai_server).invoke(req(json_schema=schema, schema_name="Verdict"))

    assert Verdict.model_validate_json(reply.text) == Verdict(city="Paris", population=2)
    sent = openai_server.chat_requests[0].body["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["name"] == "Verdict"
    assert sent["json_schema"]["strict"] is True
    assert sent["json_schema"]["schema"]["required"] == ["city", "population"]
    assert sent["json_schema"]["schema"]["additionalProperties"] is False
    assert schema == Verdict.model_json_schema()  # the request's schema is left alone


def test_a_mapping_field_falls_back_to_a_non_strict_schema(openai_server: OpenAIServer) -> None:
    openai_server.set_default({"counts": {"a": 1}})
    schema = Table.model_json_schema()

    endpoint(openai_server).invoke(req(json_schema=schema, schema_name="Table"))

    sent = openai_server.chat_requests[0].body["response_format"]["json_schema"]
    assert sent["strict"] is False and sent["schema"] == schema


def test_a_tool_call_reply_gives_its_arguments(openai_server: OpenAIServer) -> None:
    openai_server.set_default({"population": 3})
    request = ModelRequest(req().messages, "parsing")
    reply = endpoint(openai_server, extra_kwargs={"tools": [_tool()]}).invoke(request)

    assert reply.text == '{"population": 3}'


def test_connections_are_kept_alive_across_calls_and_threads() -> None:
    with OpenAIServer(default="ok", keep_alive=True) as server:
        model = endpoint(server)
        for _ in range(5):
            model.invoke(req())
        assert server.connections == 1


def test_rate_limit_and_server_errors_are_retried_with_retry_after(
    openai_server: OpenAIServer,
) -> None:
    openai_server.script(Fault.rate_limit(retry_after=7), Fault.server_error(503), "Four.")
    events: list[RetryEvent] = []
    model, clock = retrying(endpoint(openai_server), on_retry=events.append)

    assert model.invoke(req()).text == "Four."
    assert [event.error_class for event in events] == ["rate_limit", "server_error"]
    assert clock.sleeps[0] == 7.0


@pytest.mark.parametrize(
    ("fault", "error_class"),
    [
        (Fault.http_error(401, f"Incorrect API key provided: {fakes.CANARY}"), "auth"),
        (Fault.http_error(403, "forbidden"), "auth"),
        (Fault.http_error(400, "bad request"), "client_error"),
        (Fault.http_error(404, "no such model"), "client_error"),
    ],
)
def test_client_errors_fail_at_once_without_the_key(
    openai_server: OpenAIServer, fault: Fault, error_class: str
) -> None:
    openai_server.add_rule(fault)
    model, _ = retrying(endpoint(openai_server, endpoint_api_key=fakes.CANARY))

    with pytest.raises(TransportError) as caught:
        model.invoke(req())

    assert caught.value.error_class == error_class and caught.value.attempts == 1
    assert fakes.CANARY not in str(caught.value)
    assert f"HTTP {fault.status}" in str(caught.value)


def test_a_redirect_is_not_followed_and_says_where_to(openai_server: OpenAIServer) -> None:
    openai_server.add_rule(Fault.http_error(307, "moved"))
    model, _ = retrying(endpoint(openai_server))

    with pytest.raises(TransportError) as caught:
        model.invoke(req())

    assert caught.value.error_class == "permanent" and caught.value.attempts == 1
    assert "HTTP 307: redirected to" in str(caught.value)


@pytest.mark.parametrize(
    ("fault", "error_class"),
    [
        (Fault.connection_reset(), "connection"),
        (Fault.malformed_body(), "server_error"),
        (Fault.missing_field("choices"), "server_error"),
        (Fault.server_error(502), "server_error"),
    ],
)
def test_broken_replies_are_retried_as_transient(
    openai_server: OpenAIServer, fault: Fault, error_class: str
) -> None:
    openai_server.script(fault, "ok")
    events: list[RetryEvent] = []
    model, _ = retrying(endpoint(openai_server), on_retry=events.append)

    assert model.invoke(req()).text == "ok"
    assert [event.error_class for event in events] == [error_class]


def test_a_slow_reply_times_out_per_attempt(openai_server: OpenAIServer) -> None:
    openai_server.script(Fault.timeout(seconds=30), "On time.")
    events: list[RetryEvent] = []
    model, _ = retrying(endpoint(openai_server), timeout=0.3, on_retry=events.append)

    assert model.invoke(req()).text == "On time."
    assert [event.error_class for event in events] == ["timeout"]
    assert "0.3s" in events[0].message


def test_an_unreachable_endpoint_is_a_connection_error() -> None:
    with OpenAIServer() as server:
        pass  # stopped: its port refuses connections
    model, _ = retrying(endpoint(server))

    with pytest.raises(TransportError) as caught:
        model.invoke(req())

    assert caught.value.error_class == "connection"
    assert caught.value.attempts == 4  # Karenina's default budget: three retries
    assert f"POST {server.base_url}/chat/completions: connection failed" in str(caught.value)


def test_credentials_in_the_base_url_become_basic_auth_and_stay_out_of_errors(
    openai_server: OpenAIServer,
) -> None:
    url = openai_server.base_url.replace("http://", "http://evals:hunter2secret@")
    openai_server.script(Fault.http_error(400, "nope"), "ok")
    model = endpoint(openai_server, endpoint_base_url=url, endpoint_api_key=None)
    wrapped, _ = retrying(model)

    with pytest.raises(TransportError) as caught:
        wrapped.invoke(req())
    assert "hunter2secret" not in str(caught.value)
    assert model.invoke(req()).text == "ok"
    assert openai_server.chat_requests[1].headers["authorization"] == "Basic <redacted>"


def test_requests_go_through_the_proxy_the_environment_names(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, no_proxy_env: None
) -> None:
    openai_server.set_default("via proxy")
    with ForwardProxy() as proxy:
        authority = proxy.url.replace("http://", "http://puser:ppass@")
        monkeypatch.setenv("HTTP_PROXY", authority)
        assert endpoint(openai_server).invoke(req()).text == "via proxy"
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        assert endpoint(openai_server).invoke(req()).text == "via proxy"

    assert proxy.seen == [f"{openai_server.base_url}/chat/completions"]
    assert proxy.proxy_authorization == ["Basic cHVzZXI6cHBhc3M="]
    assert len(openai_server.chat_requests) == 2


def test_the_replay_identity_is_the_one_recordings_were_made_with(
    openai_server: OpenAIServer,
) -> None:
    model = endpoint(openai_server)

    # Recordings made before this adapter (through ChatOpenAI) keyed on exactly these fields.
    assert model.replay_identity == {
        "adapter": "openai_endpoint", "provider": None, "model": "test-model",
        "temperature": 0.0, "max_tokens": 256, "base_url": openai_server.base_url,
    }  # fmt: skip
    assert replay_key(model.replay_identity, req()) == replay_key(
        {"adapter": "openai_endpoint", "model": "test-model", "temperature": 0,
         "max_tokens": 256, "base_url": openai_server.base_url},
        req(),
    )  # fmt: skip


def _tool() -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": "record", "parameters": {"type": "object", "properties": {}}},
    }
