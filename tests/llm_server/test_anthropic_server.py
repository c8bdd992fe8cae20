"""The scripted Anthropic Messages API server, through the real ``anthropic`` SDK."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx
import httpx2  # the transport of anthropic 2.x
import pytest
from pydantic import BaseModel

from tests.support.anthropic_server import AnthropicFault, AnthropicServer, ToolUse, Turn

KEY = "fake-anthropic-key-7c1e"
MODEL = "claude-test"
VERDICT_TOOL = {
    "name": "verdict",
    "description": "the verdict",
    "input_schema": {"type": "object", "properties": {"correct": {"type": "boolean"}}},
}


class Verdict(BaseModel):
    correct: bool
    reason: str


def client(server: AnthropicServer, **options: Any) -> anthropic.Anthropic:
    settings: dict[str, Any] = {"base_url": server.url, "api_key": KEY, "max_retries": 0}
    return anthropic.Anthropic(**(settings | options))


def ask(text: str, **params: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 100, "messages": [{"role": "user", "content": text}]} | (
        params
    )


def test_plain_answer_with_usage_and_recorded_request(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add_rule("Paris is the capital.", contains=["be brief", "capital of France"])

    message = client(anthropic_server).messages.create(
        **ask("What is the capital of France?", system="Be brief.")
    )

    assert [b.type for b in message.content] == ["text"]
    assert message.content[0].text == "Paris is the capital."  # type: ignore[union-attr]
    assert message.stop_reason == "end_turn"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (8, 4)
    (request,) = anthropic_server.messages_requests
    assert request.model == MODEL and not request.stream and not request.structured
    assert request.headers["anthropic-version"]
    assert request.headers["authorization"] == "Bearer <redacted>"
    assert KEY not in repr(anthropic_server.requests)


def test_streamed_text_accumulates_with_usage(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add_rule("Paris is the capital.", usage={"output_tokens": 11})

    with client(anthropic_server).messages.stream(**ask("capital?")) as stream:
        kinds = [event.type for event in stream]
        message = stream.get_final_message()

    assert message.content[0].text == "Paris is the capital."  # type: ignore[union-attr]
    assert message.stop_reason == "end_turn"
    assert message.usage.output_tokens == 11
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    assert {"content_block_start", "content_block_delta", "message_delta"} <= set(kinds)
    assert anthropic_server.messages_requests[0].stream


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_forced_tool_gets_the_reply_as_tool_input(
    anthropic_server: AnthropicServer, stream: bool
) -> None:
    anthropic_server.add_rule(Verdict(correct=True, reason="matches"), structured=True)
    params = ask("judge", tools=[VERDICT_TOOL], tool_choice={"type": "tool", "name": "verdict"})
    api = client(anthropic_server).messages

    if stream:
        with api.stream(**params) as events:
            message = events.get_final_message()
    else:
        message = api.create(**params)

    (block,) = message.content
    assert block.type == "tool_use" and block.name == "verdict"
    assert block.input == {"correct": True, "reason": "matches"}
    assert message.stop_reason == "tool_use"


def test_output_config_format_gets_json_text(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add_rule({"correct": False, "reason": "no"}, structured=True)

    parsed = client(anthropic_server).messages.parse(**ask("judge"), output_format=Verdict)

    assert parsed.parsed_output == Verdict(correct=False, reason="no")
    assert anthropic_server.messages_requests[0].body["output_config"]["format"]["type"] == (
        "json_schema"
    )


def test_tool_loop_turns_and_tool_results(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add_rule(Turn("Let me add.", ToolUse("add", {"a": 2, "b": 3})), times=1)
    anthropic_server.add_rule("The sum is 5.", last_contains="5")
    api = client(anthropic_server).messages
    tools = [{"name": "add", "input_schema": {"type": "object"}}]

    first = api.create(**ask("add 2 and 3", tools=tools))
    call = first.content[1]
    assert first.stop_reason == "tool_use" and call.type == "tool_use"
    history = [
        {"role": "user", "content": "add 2 and 3"},
        {"role": "assistant", "content": [b.model_dump() for b in first.content]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "5"}],
        },
    ]
    second = api.create(model=MODEL, max_tokens=100, tools=tools, messages=history)

    assert second.content[0].text == "The sum is 5."  # type: ignore[union-attr]
    assert anthropic_server.messages_requests[1].tool_results[0]["tool_use_id"] == call.id
    assert anthropic_server.unused_rules() == []


def test_rate_limit_and_overload_carry_retry_after(anthropic_server: AnthropicServer) -> None:
    anthropic_server.script(AnthropicFault.rate_limit(7), AnthropicFault.overloaded(3))
    api = client(anthropic_server).messages

    with pytest.raises(anthropic.RateLimitError) as limited:
        api.create(**ask("hi"))
    with pytest.raises(anthropic.OverloadedError) as overloaded:
        api.create(**ask("hi"))

    assert limited.value.response.headers["retry-after"] == "7"
    assert overloaded.value.status_code == 529
    assert overloaded.value.response.headers["retry-after"] == "3"
    assert overloaded.value.body["error"]["type"] == "overloaded_error"  # type: ignore[index]


def test_sdk_retries_honour_the_scripted_faults(anthropic_server: AnthropicServer) -> None:
    anthropic_server.script(AnthropicFault.overloaded(0.01), "fine")

    message = client(anthropic_server, max_retries=1).messages.create(**ask("hi"))

    assert message.content[0].text == "fine"  # type: ignore[union-attr]
    retries = [r.headers["x-stainless-retry-count"] for r in anthropic_server.messages_requests]
    assert retries == ["0", "1"]


def test_a_clean_stream_cut_leaves_no_stop_reason(anthropic_server: AnthropicServer) -> None:
    """What a client must check itself: the SDK accepts a stream that ends early."""
    anthropic_server.add_rule(AnthropicFault.stream_cut(4, text="a partial answer"))

    with client(anthropic_server).messages.stream(**ask("hi")) as stream:
        message = stream.get_final_message()

    assert message.stop_reason is None
    assert message.content[0].text != "a partial answer"  # type: ignore[union-attr]


def test_a_reset_stream_and_a_cut_body_raise(anthropic_server: AnthropicServer) -> None:
    anthropic_server.script(AnthropicFault.stream_cut(4, reset=True), AnthropicFault.stream_cut())
    api = client(anthropic_server).messages

    with pytest.raises(httpx2.TransportError), api.stream(**ask("hi")) as stream:
        stream.get_final_message()
    with pytest.raises(anthropic.APIConnectionError):
        api.create(**ask("hi"))


def test_an_error_event_mid_stream_raises(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add_rule(AnthropicFault.stream_error(3))

    with pytest.raises(anthropic.APIStatusError) as caught:
        with client(anthropic_server).messages.stream(**ask("hi")) as stream:
            stream.get_final_message()

    assert caught.value.body["error"]["type"] == "overloaded_error"  # type: ignore[index]


def test_credentials_and_version_are_required() -> None:
    with AnthropicServer(api_key=KEY) as server:
        server.set_default("ok")
        wrong = anthropic.Anthropic(base_url=server.url, api_key="other", max_retries=0)
        with pytest.raises(anthropic.AuthenticationError):
            wrong.messages.create(**ask("hi"))
        bare = httpx.post(f"{server.url}/v1/messages", json=ask("hi"))
        versionless = httpx.post(
            f"{server.url}/v1/messages", json=ask("hi"), headers={"x-api-key": KEY}
        )
        good = client(server).messages.create(**ask("hi"))

    assert bare.status_code == 401 and bare.json()["error"]["type"] == "authentication_error"
    assert versionless.status_code == 400 and "anthropic-version" in versionless.text
    assert good.content[0].text == "ok"  # type: ignore[union-attr]
    assert "other" not in repr(server.requests) and KEY not in repr(server.requests)


def test_beta_route_probe_and_unknown_routes(anthropic_server: AnthropicServer) -> None:
    anthropic_server.set_default("ok")

    beta = client(anthropic_server).beta.messages.create(**ask("hi"))
    cli_style = httpx.post(
        f"{anthropic_server.url}/v1/messages?beta=true",
        json=ask("hi", stream=True),
        headers={"x-api-key": KEY, "anthropic-version": "2023-06-01"},
    )
    hello = httpx.head(f"{anthropic_server.url}/api/hello")
    missing = httpx.post(f"{anthropic_server.url}/v1/complete", json={})

    assert beta.content[0].text == "ok"  # type: ignore[union-attr]
    assert "event: message_stop" in cli_style.text
    assert anthropic_server.messages_requests[1].path == "/v1/messages?beta=true"
    assert anthropic_server.messages_requests[1].headers["x-api-key"] == "<redacted>"
    assert hello.status_code == 200
    assert missing.status_code == 404 and missing.json()["type"] == "error"


def test_threads_are_refused(anthropic_server: AnthropicServer) -> None:
    """The SDK's tool_runner threads its conversation on the server by default."""
    anthropic_server.set_default("ok")

    @anthropic.beta_tool
    def add(a: int, b: int) -> str:
        """Add two numbers."""
        return str(a + b)

    runner = client(anthropic_server).beta.messages.tool_runner(
        model=MODEL, max_tokens=100, tools=[add], messages=[{"role": "user", "content": "hi"}]
    )
    with pytest.raises(anthropic.BadRequestError, match="thread"):
        list(runner)


def test_unmatched_request_fails_loudly_and_reset_forgets(
    anthropic_server: AnthropicServer,
) -> None:
    anthropic_server.add_rule("never", contains="something else")

    with pytest.raises(anthropic.BadRequestError, match="no rule matched"):
        client(anthropic_server).messages.create(**ask("hi"))
    anthropic_server.reset()

    assert anthropic_server.requests == [] and anthropic_server.rules == []
