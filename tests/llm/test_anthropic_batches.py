"""Anthropic's Message Batches (issue 31): the provider against the scripted server's batch
endpoints, over real HTTP. Batched replies equal live ones, partial errors, expiry and
cancellation error only their requests with the API's reason, keys that do not fit a
``custom_id`` come back as they were sent, and the API key stays in its header."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from pydantic import BaseModel

from pytest_karenina.config.model import ModelConfig
from pytest_karenina.llm.batch.anthropic_batches import (
    AnthropicBatchProvider,
    custom_id,
    request_key,
)
from pytest_karenina.llm.batch.anthropic_codecs import ClaudeToolCodec, LangChainAnthropicCodec
from pytest_karenina.llm.batch.anthropic_parts import claude_tool_parts, langchain_anthropic_parts
from pytest_karenina.llm.batch.protocol import BatchReply, BatchRequest
from pytest_karenina.llm.ports import ChatMessage, ModelRequest
from pytest_karenina.llm.replay import replay_key
from tests.support.anthropic_server import AnthropicFault, AnthropicServer

pytest.importorskip("anthropic", reason="claude_tool needs pip install 'pytest-karenina[claude]'")

from pytest_karenina.llm.adapters.claude_tool import ClaudeAPIError, ClaudeToolModel

KEY = "fake-claude-key-77b1"
SYSTEM = ChatMessage("system", "Answer briefly.")


class Verdict(BaseModel):
    correct: bool
    reason: str


def claude(server: AnthropicServer, **fields: Any) -> ModelConfig:
    settings: dict[str, Any] = {
        "id": "claude", "interface": "claude_tool", "model_name": "claude-test",
        "anthropic_base_url": server.url, "anthropic_api_key": KEY,
    }  # fmt: skip
    return ModelConfig(**(settings | fields))


def ask(text: str, schema: type[BaseModel] | None = None) -> ModelRequest:
    kind = "parsing" if schema is not None else "answer_generation"
    return ModelRequest(
        (SYSTEM, ChatMessage("user", text)), kind,
        json_schema=schema.model_json_schema() if schema is not None else None,
        schema_name=schema.__name__ if schema is not None else None,
    )  # fmt: skip


def run_batch(
    provider: AnthropicBatchProvider, requests: list[BatchRequest]
) -> tuple[list[str], dict[str, BatchReply]]:
    """Submit, poll until the batch ends (the server ends it after its configured polls),
    download; the states seen on the way and the replies by key."""
    batch_id = provider.submit(requests)
    states = []
    for _ in range(20):
        status = provider.poll(batch_id)
        states.append(status.state)
        if status.finished:
            break
    return states, {reply.key: reply for reply in provider.results(batch_id)}


def test_batched_replies_are_the_replies_of_live_calls(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add_rule("Paris.", contains="capital of France", structured=False)
    anthropic_server.add_rule(Verdict(correct=True, reason="Paris it is"), structured=True)
    config = claude(anthropic_server)
    parts = claude_tool_parts(config)
    assert parts is not None
    provider, codec = parts
    assert isinstance(provider, AnthropicBatchProvider)
    live = ClaudeToolModel(config)
    calls = [ask("Capital of France?"), ask("Judge: the answer was Paris.", Verdict)]
    keys = [replay_key(live.replay_identity, request) for request in calls]
    bodies = [codec.encode(request) for request in calls]
    assert all(body is not None and "stream" not in body for body in bodies)

    states, replies = run_batch(
        provider, [BatchRequest(key, body) for key, body in zip(keys, bodies, strict=True) if body]
    )

    assert states == ["in_progress", "ended"]
    batched = [codec.decode(replies[key].body or {}) for key in keys]
    direct = [live.invoke(request) for request in calls]
    assert batched == direct  # text, usage and model: one replay entry fits both
    assert batched[1].text == '{"correct": true, "reason": "Paris it is"}'
    (item_one, item_two) = [params for _, _, params in anthropic_server.batches.items]
    assert item_one["system"] == "Answer briefly." and "output_config" in item_two
    assert len(anthropic_server.messages_requests) == 2  # the live calls only


def test_a_partial_error_errors_only_its_request_with_the_api_reason(
    anthropic_server: AnthropicServer,
) -> None:
    anthropic_server.add_rule(
        AnthropicFault.http_error(400, "prompt is too long: 250000 tokens > 200000 maximum"),
        contains="very long",
    )
    anthropic_server.add_rule("fine")
    provider, codec = claude_tool_parts(claude(anthropic_server)) or (None, None)
    assert provider is not None and codec is not None
    requests = [
        BatchRequest(f"k{n}", codec.encode(ask(text)) or {})
        for n, text in enumerate(["short", "a very long prompt", "short too"])
    ]

    _, replies = run_batch(provider, requests)  # type: ignore[arg-type]

    assert replies["k1"].body is None
    assert replies["k1"].error == (
        "invalid_request_error: prompt is too long: 250000 tokens > 200000 maximum"
    )
    assert [codec.decode(replies[k].body or {}).text for k in ("k0", "k2")] == ["fine", "fine"]
    status = provider.poll(anthropic_server.batches.items[0][0])
    assert (status.done, status.failed, status.total) == (2, 1, 3)


def test_expired_requests_error_with_the_reason(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add_rule("fine")
    anthropic_server.batches.configure(
        expire=lambda params: "late" in str(params["messages"][-1]["content"])
    )
    provider = AnthropicBatchProvider(anthropic_server.url, KEY)
    codec = ClaudeToolCodec("claude-test", {"max_tokens": 64})
    requests = [BatchRequest(k, codec.encode(ask(k)) or {}) for k in ("early", "late")]

    _, replies = run_batch(provider, requests)

    assert replies["early"].error is None
    assert replies["late"].body is None
    assert replies["late"].error is not None and replies["late"].error.startswith("expired")


def test_a_cancelled_batch_errors_every_request_it_had_not_run(
    anthropic_server: AnthropicServer,
) -> None:
    anthropic_server.add_rule("fine")
    held = threading.Event()  # never set: the batch stays in progress until cancelled
    anthropic_server.batches.configure(hold=held)
    provider = AnthropicBatchProvider(anthropic_server.url, KEY)
    codec = ClaudeToolCodec("claude-test", {"max_tokens": 64})
    batch_id = provider.submit([BatchRequest(k, codec.encode(ask(k)) or {}) for k in "ab"])
    assert provider.poll(batch_id).state == "in_progress"

    provider.cancel(batch_id)

    status = provider.poll(batch_id)
    assert status.finished and (status.done, status.failed) == (0, 2)
    replies = provider.results(batch_id)
    assert sorted(r.key for r in replies) == ["a", "b"]
    assert all(r.body is None and (r.error or "").startswith("canceled") for r in replies)
    assert anthropic_server.batches.cancelled == [batch_id]


@pytest.mark.parametrize(
    "key",
    [
        "0" * 64,  # a replay key: sent as it is
        "q1:answer_generation",  # a character Anthropic refuses
        "b64-looks-encoded",  # fits, but starts like an encoded id
        "ключ",  # not ASCII
        "x" * 65,  # too long for an encoding
        "é" * 40,
    ],
)
def test_request_keys_map_to_custom_ids_and_back(
    anthropic_server: AnthropicServer, key: str
) -> None:
    sent = custom_id(key)
    assert 1 <= len(sent) <= 64 and all((c.isalnum() and c.isascii()) or c in "_-" for c in sent)
    if len(key.encode()) <= 45:
        assert request_key(sent) == key  # no memory needed: another process maps it back
    anthropic_server.add_rule("fine")
    provider = AnthropicBatchProvider(anthropic_server.url, KEY)
    body = ClaudeToolCodec("claude-test", {"max_tokens": 64}).encode(ask("hi")) or {}

    _, replies = run_batch(provider, [BatchRequest(key, body), BatchRequest("plain", body)])

    assert sorted(replies) == sorted([key, "plain"])
    assert anthropic_server.batches.items[0][1] == sent
    assert sent == key if key == "0" * 64 else sent != key


def test_the_api_key_travels_in_its_header_only(anthropic_server: AnthropicServer) -> None:
    anthropic_server.api_key = KEY
    provider = AnthropicBatchProvider(anthropic_server.url + "/", KEY)
    body = ClaudeToolCodec("claude-test", {"max_tokens": 64}).encode(ask("hi")) or {}
    anthropic_server.add_rule("fine")
    run_batch(provider, [BatchRequest("k", body)])
    for request in anthropic_server.requests:
        assert KEY not in request.path
        assert request.headers["x-api-key"] != KEY  # recorded redacted: it was there
        assert request.headers["anthropic-version"] == "2023-06-01"

    wrong = AnthropicBatchProvider(anthropic_server.url, "another-key-5c2e")
    with pytest.raises(ClaudeAPIError) as caught:
        wrong.submit([BatchRequest("k", body)])
    assert caught.value.status_code == 401
    assert "another-key-5c2e" not in str(caught.value)
    assert "authentication_error: invalid x-api-key" in str(caught.value)


def test_a_refused_batch_names_the_request_and_field(anthropic_server: AnthropicServer) -> None:
    provider = AnthropicBatchProvider(anthropic_server.url, KEY)
    with pytest.raises(ClaudeAPIError, match=r"requests\.0: params: max_tokens required"):
        provider.submit([BatchRequest("k", {"model": "claude-test", "messages": []})])


def test_langchain_anthropic_bodies_ask_as_with_structured_output_does(
    anthropic_server: AnthropicServer,
) -> None:
    anthropic_server.add_rule(Verdict(correct=False, reason="not Rome"), structured=True)
    config = ModelConfig(
        id="lc", interface="langchain", model_provider="anthropic", model_name="claude-test",
        anthropic_base_url=anthropic_server.url, anthropic_api_key=KEY, max_tokens=300,
        extra_kwargs={"top_k": 5, "stop": ["END"]},
    )  # fmt: skip
    parts = langchain_anthropic_parts(config)
    assert parts is not None
    provider, codec = parts
    body = codec.encode(ask("Judge: Rome?", Verdict))
    assert body is not None
    assert body["tool_choice"] == {"type": "tool", "name": "Verdict"}
    assert body["tools"][0]["name"] == "Verdict"
    assert (body["top_k"], body["stop_sequences"], body["max_tokens"]) == (5, ["END"], 300)
    _, replies = run_batch(provider, [BatchRequest("k", body)])  # type: ignore[arg-type]
    reply = codec.decode(replies["k"].body or {})
    assert reply.text == '{"correct": false, "reason": "not Rome"}'
    assert reply.model == "claude-test" and reply.usage.output_tokens is not None

    unknown = LangChainAnthropicCodec("claude-test", 0.1, 100, {"betas": ["x"]})
    assert unknown.encode(ask("hi")) is None  # its wire form is not known: run live


def test_models_without_a_key_or_of_other_interfaces_are_not_batched_here(
    anthropic_server: AnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert claude_tool_parts(claude(anthropic_server, anthropic_api_key=None)) is None
    openai = ModelConfig(id="o", interface="openai_endpoint", model_name="m",
                         endpoint_base_url="http://127.0.0.1:1/v1")  # fmt: skip
    assert claude_tool_parts(openai) is None and langchain_anthropic_parts(openai) is None
    one = claude_tool_parts(claude(anthropic_server))
    two = claude_tool_parts(claude(anthropic_server, id="claude-2", model_name="claude-other"))
    assert one is not None and two is not None and one[0] is two[0]  # one lane, shared batches


def test_langchain_anthropic_batched_replies_are_the_live_adapters(
    anthropic_server: AnthropicServer,
) -> None:
    pytest.importorskip("langchain_anthropic")
    from pytest_karenina.llm.adapters.langchain_model import LangChainModel

    anthropic_server.add_rule("Rome.", structured=False)
    anthropic_server.add_rule(Verdict(correct=True, reason="Rome"), structured=True)
    config = ModelConfig(
        id="lc", interface="langchain", model_provider="anthropic", model_name="claude-test",
        anthropic_base_url=anthropic_server.url, anthropic_api_key=KEY,
    )  # fmt: skip
    parts = langchain_anthropic_parts(config)
    assert parts is not None
    provider, codec = parts
    calls = [ask("Capital of Italy?"), ask("Judge: Rome?", Verdict)]
    bodies = [codec.encode(request) or {} for request in calls]
    _, replies = run_batch(provider, [BatchRequest(str(n), b) for n, b in enumerate(bodies)])

    batched = [codec.decode(replies[str(n)].body or {}) for n in range(2)]
    direct = [LangChainModel(config).invoke(request) for request in calls]
    assert batched == direct
    live_bodies = [r.body for r in anthropic_server.messages_requests]
    assert [b["tools"] for b in live_bodies[1:]] == [bodies[1]["tools"]]  # the same tool
    assert live_bodies[1]["tool_choice"] == bodies[1]["tool_choice"]


def test_an_unreachable_server_is_a_connection_error_without_the_key() -> None:
    """What the collector retries while it polls (a server restarting mid-wait)."""
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    provider = AnthropicBatchProvider(f"http://127.0.0.1:{port}", KEY)
    with pytest.raises(ConnectionError, match=r"GET http://127\.0\.0\.1:\d+/v1/messages/batches/b"):
        provider.poll("b")
    with pytest.raises(ConnectionError) as caught:
        provider.submit([BatchRequest("k", {"model": "m", "max_tokens": 1, "messages": []})])
    assert KEY not in str(caught.value)
