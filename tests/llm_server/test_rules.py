"""Rule matching, scripting, latency, recording and lifecycle of the scripted server."""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import openai
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from tests.llm_server.clients import Verdict, chat
from tests.support.openai_server import Fault, OpenAIServer, Rule


def test_first_matching_rule_wins(openai_server: OpenAIServer) -> None:
    openai_server.add_rule("specific", contains=["capital", "France"])
    openai_server.add_rule("general", contains="capital")
    llm = chat(openai_server)

    assert llm.invoke("The CAPITAL of france?").content == "specific"  # case-insensitive
    assert llm.invoke("The capital of Spain?").content == "general"


def test_model_role_and_last_message_predicates(openai_server: OpenAIServer) -> None:
    openai_server.add_rule("from big", model="big-model")
    openai_server.add_rule("after tool", role="tool")
    openai_server.add_rule("last says go", last_contains="go")
    openai_server.add_rule("fallback")
    history = [
        HumanMessage("go fetch"),
        AIMessage("", tool_calls=[{"name": "fetch", "args": {}, "id": "c1"}]),
        ToolMessage("fetched", tool_call_id="c1"),
    ]

    assert chat(openai_server, model="big-model").invoke("x").content == "from big"
    assert chat(openai_server).invoke(history).content == "after tool"
    assert chat(openai_server).invoke([SystemMessage("go"), HumanMessage("stop")]).content == (
        "fallback"
    )
    assert chat(openai_server).invoke([SystemMessage("stop"), HumanMessage("go")]).content == (
        "last says go"
    )


def test_list_content_parts_are_matched(openai_server: OpenAIServer) -> None:
    openai_server.add_rule("seen", contains="describe the image")
    message = HumanMessage(content=[{"type": "text", "text": "Describe the image"}])

    assert chat(openai_server).invoke([message]).content == "seen"


def test_times_consumes_rule_then_falls_through(openai_server: OpenAIServer) -> None:
    once = openai_server.add_rule("first", times=1)
    twice = openai_server.add_rule("second", times=2)
    openai_server.add_rule("forever")
    llm = chat(openai_server)

    replies = [llm.invoke("q").content for _ in range(5)]

    assert replies == ["first", "second", "second", "forever", "forever"]
    assert (once.uses, twice.uses) == (1, 2)
    assert once.exhausted and twice.exhausted
    assert openai_server.unused_rules() == []


def test_script_answers_in_order_then_the_default(openai_server: OpenAIServer) -> None:
    openai_server.script(Fault.server_error(), "success", contains="flaky")
    llm = chat(openai_server)

    with pytest.raises(openai.InternalServerError):
        llm.invoke("flaky call")
    assert llm.invoke("flaky call").content == "success"
    with pytest.raises(openai.BadRequestError, match="no rule matched request #2"):
        llm.invoke("flaky call")


def test_unused_rules_lists_rules_with_times_left(openai_server: OpenAIServer) -> None:
    first, second = openai_server.script("a", "b")
    openai_server.add_rule("c")

    chat(openai_server).invoke("q")

    assert openai_server.unused_rules() == [second]
    assert first.uses == 1


def test_unmatched_request_is_a_loud_bad_request(openai_server: OpenAIServer) -> None:
    openai_server.add_rule("never", contains="something else")

    with pytest.raises(openai.BadRequestError) as caught:
        chat(openai_server).invoke("What is the capital of Peru?")

    assert caught.value.status_code == 400
    assert caught.value.code == "no_rule_matched"
    assert "capital of Peru" in caught.value.message
    assert openai_server.requests[0].rule is None


def test_configurable_default_reply(openai_server: OpenAIServer) -> None:
    openai_server.set_default("default answer")
    assert chat(openai_server).invoke("anything").content == "default answer"

    with OpenAIServer(default=Fault.rate_limit()) as server, pytest.raises(openai.RateLimitError):
        chat(server).invoke("anything")


def test_tool_choice_auto_gets_text_or_a_named_tool_call(openai_server: OpenAIServer) -> None:
    def lookup(city: str) -> str:
        """Look a city up."""
        return city

    def weather(city: str) -> str:
        """Weather for a city."""
        return city

    openai_server.add_rule({"city": "Rome"}, contains="weather", tool="weather")
    openai_server.add_rule("plain words", contains="chat")
    llm = chat(openai_server).bind_tools([lookup, weather])

    called = llm.invoke("weather please")
    talked = llm.invoke("just chat")

    assert called.tool_calls[0]["name"] == "weather"
    assert called.tool_calls[0]["args"] == {"city": "Rome"}
    assert called.response_metadata["finish_reason"] == "tool_calls"
    assert talked.content == "plain words" and talked.tool_calls == []


def test_per_rule_latency_is_at_least_the_configured_delay(openai_server: OpenAIServer) -> None:
    openai_server.add_rule("slow", latency=0.2)
    llm = chat(openai_server)

    started = time.perf_counter()
    llm.invoke("q")
    elapsed = time.perf_counter() - started

    assert elapsed >= 0.2


def test_global_latency_applies_unless_a_rule_overrides_it() -> None:
    with OpenAIServer(latency=0.2) as server:
        server.add_rule("fast", contains="fast", latency=0.0)
        server.add_rule("slow")
        llm = chat(server)

        started = time.perf_counter()
        llm.invoke("slow please")
        assert time.perf_counter() - started >= 0.2
        assert llm.invoke("fast please").content == "fast"


def test_request_log_redacts_the_api_key(openai_server: OpenAIServer) -> None:
    secret = "sk-test-5e3f9a-DO-NOT-LOG"
    openai_server.add_rule(VERDICT_REPLY, structured=True)
    openai_server.add_rule("ok")
    llm = chat(openai_server, api_key=secret)
    llm.invoke("hi")
    llm.with_structured_output(Verdict).invoke("judge")
    with openai.OpenAI(base_url=openai_server.base_url, api_key=secret) as client:
        client.models.list()

    requests = openai_server.requests
    assert len(requests) == 3
    assert all(r.headers["authorization"] == "Bearer <redacted>" for r in requests)
    assert secret not in repr(requests)
    assert secret not in json.dumps([r.__dict__ for r in requests], default=str)


VERDICT_REPLY = {"correct": True, "score": 5, "reason": "ok"}


def test_parallel_requests_from_eight_threads(openai_server: OpenAIServer) -> None:
    # Every reply waits until all eight requests are in flight together.
    barrier = threading.Barrier(8, timeout=20)

    def echo(body: dict[str, Any]) -> str:
        barrier.wait()
        return f"answer to {body['messages'][-1]['content']}"

    openai_server.add_rule(echo)
    llm = chat(openai_server, timeout=30.0)

    with ThreadPoolExecutor(max_workers=8) as pool:
        replies = list(pool.map(lambda i: llm.invoke(f"question {i}").content, range(8)))

    assert replies == [f"answer to question {i}" for i in range(8)]
    questions = sorted(r.text for r in openai_server.requests)
    assert questions == sorted(f"question {i}" for i in range(8))
    assert sorted(r.index for r in openai_server.requests) == list(range(8))


def test_reset_forgets_rules_requests_and_settings(openai_server: OpenAIServer) -> None:
    openai_server.add_rule("before")
    openai_server.set_default("default")
    openai_server.set_faults(1.0, Fault.server_error())
    with pytest.raises(openai.InternalServerError):
        chat(openai_server).invoke("q")

    openai_server.reset()

    assert openai_server.rules == [] and openai_server.requests == []
    with pytest.raises(openai.BadRequestError):
        chat(openai_server).invoke("q")


def test_session_fixture_serves_requests(openai_server_session: OpenAIServer) -> None:
    openai_server_session.reset()
    openai_server_session.add_rule("shared")

    assert chat(openai_server_session).invoke("q").content == "shared"
    assert len(openai_server_session.requests) == 1
    openai_server_session.reset()


def test_context_manager_stops_serving() -> None:
    with OpenAIServer(default="up") as server:
        assert chat(server).invoke("q").content == "up"

    with pytest.raises(openai.APIConnectionError):
        chat(server).invoke("q")
    with pytest.raises(RuntimeError):
        server.start()


def test_raising_reply_callable_is_recorded_as_a_server_error() -> None:
    def broken(body: dict[str, Any]) -> str:
        raise KeyError("oops")

    with OpenAIServer() as server:
        server.add_rule(broken, contains="reply")
        server.add_rule("unreachable", when=lambda body: body["no such key"])
        with pytest.raises(openai.InternalServerError, match="reply callable raised"):
            chat(server).invoke("reply")
        with pytest.raises(openai.InternalServerError, match="predicate raised"):
            chat(server).invoke("other")

    assert len(server.errors) == 2
    assert "KeyError: 'oops'" in server.errors[0]


def test_unknown_paths_and_bodies_are_rejected(openai_server: OpenAIServer) -> None:
    with openai.OpenAI(base_url=openai_server.base_url, api_key="k", max_retries=0) as client:
        with pytest.raises(openai.NotFoundError):
            client.embeddings.create(input="x", model="test-model")
        with pytest.raises(openai.BadRequestError, match="not a chat-completions"):
            client.post("/chat/completions", body={"no": "messages"}, cast_to=object)

    assert [r.path for r in openai_server.requests] == ["/v1/embeddings", "/v1/chat/completions"]


@pytest.mark.parametrize(
    "options",
    [
        {"times": 0},
        {"latency": -1},
        {"faults": [Fault.server_error()]},
        {"fault_rate": 0.5},
    ],
)
def test_invalid_rules_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Rule("x", **options)


def test_a_class_is_not_a_reply() -> None:
    with pytest.raises(TypeError):
        Rule(Verdict)


@pytest.mark.parametrize(("keep_alive", "expected"), [(False, 4), (True, 1)])
def test_keep_alive_reuses_one_connection(keep_alive: bool, expected: int) -> None:
    with OpenAIServer(default="ok", keep_alive=keep_alive) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        try:
            replies = [
                client.chat.completions.create(model="test-model", messages=[
                    {"role": "user", "content": f"call {n}"}
                ]).choices[0].message.content
                for n in range(4)
            ]  # fmt: skip
        finally:
            client.close()
        assert replies == ["ok"] * 4
        assert server.connections == expected
