"""The ``claude_tool`` chat adapter over the real ``anthropic`` SDK to the scripted Anthropic
server: plain answers, structured judge replies, transport, keys and bad input."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from pytest_karenina.config.model import ModelConfig, RetryPolicy
from pytest_karenina.llm.ports import ChatMessage, LLMCallError, ModelRequest
from pytest_karenina.llm.service import LLMService
from pytest_karenina.llm.transport import RetryEvent, RetryingModel, TransportError
from tests.support.anthropic_server import AnthropicFault, AnthropicServer

pytest.importorskip("anthropic", reason="claude_tool needs pip install 'pytest-karenina[claude]'")

from pytest_karenina.llm.adapters.claude_tool import ClaudeToolModel

KEY = "fake-claude-key-31d8"
QUESTION = (ChatMessage("system", "Answer briefly."), ChatMessage("user", "Capital of France?"))


class Verdict(BaseModel):
    correct: bool
    reason: str


class Scores(BaseModel):
    scores: dict[str, int]


def claude(server: AnthropicServer, **fields: Any) -> ModelConfig:
    settings: dict[str, Any] = {
        "id": "claude",
        "interface": "claude_tool",
        "model_name": "claude-test",
        "anthropic_base_url": server.url,
        "anthropic_api_key": KEY,
    }
    return ModelConfig(**(settings | fields))


def transport(model: ModelConfig, events: list[RetryEvent] | None = None) -> RetryingModel:
    policy = RetryPolicy.model_validate(
        {
            name: {"max_attempts": 2, "backoff_min": 0, "backoff_max": 5}
            for name in ("rate_limit", "server_error", "connection", "timeout")
        }
    )
    on_retry = events.append if events is not None else None
    return RetryingModel(ClaudeToolModel(model), policy, on_retry=on_retry, sleep=lambda _: None)


def test_a_plain_answer_is_one_streamed_call(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add_rule("Paris.", contains="capital of France", usage={"output_tokens": 7})

    reply = ClaudeToolModel(claude(anthropic_server)).invoke(
        ModelRequest(QUESTION, "answer_generation")
    )

    assert (reply.text, reply.model) == ("Paris.", "claude-test")
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (5, 7)
    (request,) = anthropic_server.messages_requests
    assert request.stream and not request.structured
    assert request.body["system"] == "Answer briefly."
    assert request.body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Capital of France?"}]}
    ]
    assert (request.body["max_tokens"], request.body["temperature"]) == (16384, 0.1)
    assert request.headers["authorization"] == "Bearer <redacted>"
    assert request.headers["anthropic-version"]


def test_a_judge_reply_uses_structured_outputs(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add_rule({"correct": True, "reason": "Paris"}, structured=True)

    reply = LLMService(ClaudeToolModel(claude(anthropic_server))).parse(
        [ChatMessage("user", "Judge it.")], Verdict, call_kind="parsing"
    )

    assert reply.value == Verdict(correct=True, reason="Paris")
    body = anthropic_server.messages_requests[0].body
    schema = body["output_config"]["format"]["schema"]
    assert schema["additionalProperties"] is False and set(schema["properties"]) == {
        "correct",
        "reason",
    }
    assert "tools" not in body


def test_a_schema_outside_structured_outputs_is_a_forced_tool(
    anthropic_server: AnthropicServer,
) -> None:
    """A mapping field has no structured-outputs form (its values would be forbidden)."""
    anthropic_server.add_rule({"scores": {"a": 2}}, structured=True)

    reply = LLMService(ClaudeToolModel(claude(anthropic_server))).parse(
        [ChatMessage("user", "Score it.")], Scores, call_kind="parsing"
    )

    assert reply.value == Scores(scores={"a": 2})
    body = anthropic_server.messages_requests[0].body
    assert body["tool_choice"] == {"type": "tool", "name": "reply_as_Scores"}
    assert body["tools"][0]["input_schema"]["properties"]["scores"]["additionalProperties"]
    assert "output_config" not in body


def test_a_model_refusing_output_config_is_asked_with_a_forced_tool(
    anthropic_server: AnthropicServer,
) -> None:
    refused = "output_config.format: not supported by this model"
    anthropic_server.add_rule(
        AnthropicFault.http_error(400, refused), when=lambda body: "output_config" in body
    )
    anthropic_server.add_rule({"correct": False, "reason": "no"}, structured=True)
    service = LLMService(ClaudeToolModel(claude(anthropic_server)))

    first = service.parse([ChatMessage("user", "Judge one.")], Verdict, call_kind="parsing")
    second = service.parse([ChatMessage("user", "Judge two.")], Verdict, call_kind="parsing")

    assert first.value == second.value == Verdict(correct=False, reason="no")
    sent = [("output_config" in r.body, "tools" in r.body) for r in anthropic_server.requests]
    assert sent == [(True, False), (False, True), (False, True)]


def test_a_refused_temperature_is_dropped_from_then_on(
    anthropic_server: AnthropicServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Claude models after Opus 4.6 answer 400 to a temperature; Karenina's default is 0.1."""
    refused = "temperature is deprecated for this model"
    anthropic_server.add_rule(
        AnthropicFault.http_error(400, refused), when=lambda body: "temperature" in body
    )
    anthropic_server.set_default("Paris.")
    model = ClaudeToolModel(claude(anthropic_server))

    replies = [model.invoke(ModelRequest(QUESTION, "answer_generation")) for _ in range(2)]

    assert [r.text for r in replies] == ["Paris.", "Paris."]
    assert ["temperature" in r.body for r in anthropic_server.requests] == [True, False, False]
    assert "refuses temperature" in caplog.text


def test_429_and_529_are_retried_after_their_retry_after(
    anthropic_server: AnthropicServer,
) -> None:
    anthropic_server.script(AnthropicFault.rate_limit(3), AnthropicFault.overloaded(4))
    anthropic_server.add_rule("Paris.")
    events: list[RetryEvent] = []

    reply = transport(claude(anthropic_server), events).invoke(
        ModelRequest(QUESTION, "answer_generation")
    )

    assert reply.text == "Paris."
    assert [(e.error_class, e.wait_seconds) for e in events] == [
        ("rate_limit", 3.0),
        ("rate_limit", 4.0),
    ]


def test_529s_exhausting_the_retries_name_the_model_and_what_went_wrong(
    anthropic_server: AnthropicServer,
) -> None:
    anthropic_server.add_rule(AnthropicFault.overloaded(0))

    with pytest.raises(TransportError) as caught:
        transport(claude(anthropic_server)).invoke(ModelRequest(QUESTION, "answer_generation"))

    message = str(caught.value)
    assert caught.value.error_class == "rate_limit" and caught.value.attempts == 3
    assert "claude_tool model 'claude-test'" in message
    assert "HTTP 529 overloaded_error: Overloaded" in message
    assert len(anthropic_server.messages_requests) == 3


@pytest.mark.parametrize("reset", [False, True], ids=["fin", "rst"])
def test_a_cut_stream_is_a_connection_error_retried(
    anthropic_server: AnthropicServer, reset: bool
) -> None:
    """The SDK accepts a stream that stops early; the adapter does not judge half a reply."""
    anthropic_server.script(AnthropicFault.stream_cut(4, reset=reset, text="Par is the"))
    anthropic_server.add_rule("Paris.")
    events: list[RetryEvent] = []

    reply = transport(claude(anthropic_server), events).invoke(
        ModelRequest(QUESTION, "answer_generation")
    )

    assert reply.text == "Paris."
    assert [e.error_class for e in events] == ["connection"]


def test_a_stream_cut_every_time_fails_naming_the_model(
    anthropic_server: AnthropicServer,
) -> None:
    anthropic_server.add_rule(AnthropicFault.stream_cut(4))

    with pytest.raises(TransportError) as caught:
        transport(claude(anthropic_server)).invoke(ModelRequest(QUESTION, "answer_generation"))

    assert caught.value.error_class == "connection"
    assert "claude_tool model 'claude-test'" in str(caught.value)
    assert "the reply stream ended before message_stop" in str(caught.value)


def test_an_error_event_mid_stream_is_classified_by_its_type(
    anthropic_server: AnthropicServer,
) -> None:
    anthropic_server.script(AnthropicFault.stream_error(3, error_type="overloaded_error"))
    anthropic_server.add_rule("Paris.")
    events: list[RetryEvent] = []

    reply = transport(claude(anthropic_server), events).invoke(
        ModelRequest(QUESTION, "answer_generation")
    )

    assert reply.text == "Paris."
    assert [e.error_class for e in events] == ["rate_limit"]


def test_a_rejected_key_is_an_auth_error_not_retried() -> None:
    with AnthropicServer(api_key="the-right-key") as server:
        server.set_default("Paris.")
        with pytest.raises(TransportError) as caught:
            transport(claude(server)).invoke(ModelRequest(QUESTION, "answer_generation"))

    assert caught.value.error_class == "auth" and caught.value.attempts == 1
    assert KEY not in str(caught.value)


def test_a_missing_key_fails_the_call_naming_the_model_and_the_variable(
    anthropic_server: AnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    model = claude(anthropic_server, anthropic_api_key=None)

    with pytest.raises(LLMCallError) as caught:
        transport(model).invoke(ModelRequest(QUESTION, "answer_generation"))

    assert "claude_tool model 'claude' has no API key" in str(caught.value)
    assert "ANTHROPIC_API_KEY" in str(caught.value)
    assert anthropic_server.requests == []


def test_key_and_server_come_from_the_environment(
    anthropic_server: AnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic_server.url)
    anthropic_server.add_rule("Paris.")
    with AnthropicServer(api_key=KEY) as checking:
        checking.add_rule("Paris, said the checking server.")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", checking.url)
        model = ModelConfig(id="c", interface="claude_tool", model_name="claude-test")

        reply = ClaudeToolModel(model).invoke(ModelRequest(QUESTION, "answer_generation"))

    assert reply.text == "Paris, said the checking server."


def test_extra_kwargs_become_headers_and_body_fields(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add_rule("Paris.")
    extra = {"default_headers": {"X-Team": "evals"}, "top_k": 5, "max_retries": 9}

    ClaudeToolModel(claude(anthropic_server, extra_kwargs=extra)).invoke(
        ModelRequest(QUESTION, "answer_generation")
    )

    (request,) = anthropic_server.messages_requests
    assert request.headers["x-team"] == "evals"
    assert request.body["top_k"] == 5 and "max_retries" not in request.body


def test_the_request_timeout_bounds_the_whole_stream(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add_rule("Paris.", latency=30)

    with pytest.raises(TimeoutError):
        ClaudeToolModel(claude(anthropic_server)).invoke(
            ModelRequest(QUESTION, "answer_generation", timeout=0.5)
        )


def test_the_concurrency_cap_holds_for_claude_calls(anthropic_server: AnthropicServer) -> None:
    import threading

    from pytest_karenina.llm.limits import ConcurrencyLimiter

    lock = threading.Lock()
    in_flight = [0, 0]  # now, most at once
    release = threading.Event()

    def answer(body: dict[str, Any]) -> str:
        with lock:
            in_flight[0] += 1
            in_flight[1] = max(in_flight[1], in_flight[0])
        release.wait(0.05)  # long enough for the other threads to try to get in
        with lock:
            in_flight[0] -= 1
        return "Paris."

    anthropic_server.set_default(answer)
    capped = RetryingModel(ClaudeToolModel(claude(anthropic_server)), limiter=ConcurrencyLimiter(1))
    threads = [
        threading.Thread(target=capped.invoke, args=(ModelRequest(QUESTION, "answer"),))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(anthropic_server.messages_requests) == 4
    assert in_flight[1] == 1
