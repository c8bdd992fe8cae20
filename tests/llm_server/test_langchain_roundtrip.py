"""langchain-openai 1.x against the scripted server over real HTTP: replies and request shapes."""

from __future__ import annotations

import asyncio
from typing import Any

import openai
from langchain_core.messages import HumanMessage, SystemMessage

from tests.llm_server.clients import API_KEY, Verdict, chat
from tests.support.openai_server import OpenAIServer

VERDICT = {"correct": True, "score": 9, "reason": "matches"}


def test_plain_invoke_returns_scripted_text_and_usage(openai_server: OpenAIServer) -> None:
    openai_server.add_rule("Paris, of course", contains="capital of France")

    reply = chat(openai_server).invoke(
        [SystemMessage("be brief"), HumanMessage("What is the capital of France?")]
    )

    assert reply.content == "Paris, of course"
    # One token per word: "be brief" + "What is the capital of France?" = 2 + 6.
    assert reply.usage_metadata is not None
    assert reply.usage_metadata["input_tokens"] == 8
    assert reply.usage_metadata["output_tokens"] == 3
    assert reply.usage_metadata["total_tokens"] == 11
    assert reply.response_metadata["finish_reason"] == "stop"
    assert reply.response_metadata["model_name"] == "test-model"
    assert reply.response_metadata["id"] == "chatcmpl-test-0"
    (request,) = openai_server.requests
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.body == {
        "model": "test-model",
        "stream": False,
        "messages": [
            {"content": "be brief", "role": "system"},
            {"content": "What is the capital of France?", "role": "user"},
        ],
    }
    assert request.rule == "Rule(contains='capital of France')"


def test_rule_usage_override(openai_server: OpenAIServer) -> None:
    openai_server.add_rule("ok", usage={"prompt_tokens": 100, "completion_tokens": 7})

    usage = chat(openai_server).invoke("hi").usage_metadata

    assert usage is not None
    assert (usage["input_tokens"], usage["output_tokens"], usage["total_tokens"]) == (100, 7, 107)


def test_structured_output_default_method_is_json_schema(openai_server: OpenAIServer) -> None:
    openai_server.add_rule(VERDICT, structured=True)

    result = chat(openai_server).with_structured_output(Verdict).invoke("judge this")

    assert result == Verdict(correct=True, score=9, reason="matches")
    (request,) = openai_server.requests
    body = request.body
    assert "tools" not in body and "tool_choice" not in body
    assert body["stream"] is False
    assert body["response_format"]["type"] == "json_schema"
    json_schema = body["response_format"]["json_schema"]
    assert (json_schema["name"], json_schema["strict"]) == ("Verdict", True)
    assert json_schema["schema"]["additionalProperties"] is False
    assert json_schema["schema"]["required"] == ["correct", "score", "reason"]
    assert request.headers["x-stainless-helper-method"] == "chat.completions.parse"


def test_structured_output_function_calling(openai_server: OpenAIServer) -> None:
    openai_server.add_rule(Verdict(correct=False, score=2, reason="wrong"), structured=True)

    llm = chat(openai_server).with_structured_output(Verdict, method="function_calling")
    result = llm.invoke("judge this")

    assert result == Verdict(correct=False, score=2, reason="wrong")
    body = openai_server.requests[0].body
    assert "response_format" not in body
    assert body["tool_choice"] == {"type": "function", "function": {"name": "Verdict"}}
    assert body["parallel_tool_calls"] is False
    (tool,) = body["tools"]
    assert tool["type"] == "function"
    assert tool["function"]["name"] == "Verdict"
    assert tool["function"]["description"] == "A judge's verdict on an answer."
    assert "strict" not in tool["function"]
    assert set(tool["function"]["parameters"]["properties"]) == {"correct", "score", "reason"}


def test_structured_output_with_dict_schema_and_json_mode(openai_server: OpenAIServer) -> None:
    openai_server.add_rule(VERDICT, structured=True)
    schema = Verdict.model_json_schema()

    as_dict = chat(openai_server).with_structured_output(schema).invoke("judge")
    json_mode = chat(openai_server).with_structured_output(Verdict, method="json_mode")

    assert as_dict == VERDICT
    assert json_mode.invoke("judge, reply in JSON") == Verdict(**VERDICT)
    first, second = (r.body["response_format"] for r in openai_server.requests)
    assert first["json_schema"]["strict"] is False  # a dict schema is sent non-strict
    assert second == {"type": "json_object"}


def test_structured_flag_separates_judge_from_answering_call(openai_server: OpenAIServer) -> None:
    # The judge prompt repeats the question, so only `structured` tells the calls apart.
    openai_server.add_rule(VERDICT, contains="capital of France", structured=True)
    openai_server.add_rule("Paris", contains="capital of France", structured=False)
    llm = chat(openai_server)

    answer = llm.invoke("What is the capital of France?")
    verdict = llm.with_structured_output(Verdict).invoke(
        f"Question: What is the capital of France? Answer: {answer.content}. Grade it."
    )

    assert answer.content == "Paris"
    assert verdict == Verdict(**VERDICT)
    assert [r.structured for r in openai_server.requests] == [False, True]


def test_callable_reply_and_predicate_see_the_request_body(openai_server: OpenAIServer) -> None:
    def echo(body: dict[str, Any]) -> str:
        return f"{body['model']} heard: {body['messages'][-1]['content']}"

    openai_server.add_rule(echo, when=lambda body: body.get("temperature") == 0.5)

    reply = chat(openai_server, model="other-model", temperature=0.5).invoke("ping")

    assert reply.content == "other-model heard: ping"


def test_stream_returns_chunks_and_usage(openai_server: OpenAIServer) -> None:
    openai_server.add_rule("streamed reply here")

    chunks = list(chat(openai_server).stream("go", stream_usage=True))

    assert "".join(str(c.content) for c in chunks) == "streamed reply here"
    (usage,) = [c.usage_metadata for c in chunks if c.usage_metadata]
    assert (usage["input_tokens"], usage["output_tokens"], usage["total_tokens"]) == (1, 3, 4)
    body = openai_server.requests[0].body
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}


def test_plain_invoke_does_not_stream_unless_asked(openai_server: OpenAIServer) -> None:
    openai_server.add_rule("fine")

    assert chat(openai_server).invoke("a").content == "fine"
    assert chat(openai_server, streaming=True).invoke("b").content == "fine"

    first, second = (r.body for r in openai_server.requests)
    assert first["stream"] is False
    assert second["stream"] is True
    assert "stream_options" not in second  # custom base_url: stream_usage is off by default


def test_streamed_function_call_returns_object(openai_server: OpenAIServer) -> None:
    openai_server.add_rule(VERDICT)
    llm = chat(openai_server).with_structured_output(Verdict, method="function_calling")

    assert list(llm.stream("judge")) == [Verdict(**VERDICT)]


def test_async_invoke(openai_server: OpenAIServer) -> None:
    openai_server.add_rule("async ok")

    reply = asyncio.run(chat(openai_server).ainvoke("hi"))

    assert reply.content == "async ok"
    assert openai_server.requests[0].headers["x-stainless-async"].startswith("async")


def test_models_endpoint(openai_server: OpenAIServer) -> None:
    with openai.OpenAI(base_url=openai_server.base_url, api_key=API_KEY) as client:
        models = [m.id for m in client.models.list()]

    assert models == ["test-model"]
    assert [(r.method, r.path) for r in openai_server.requests] == [("GET", "/v1/models")]
    assert openai_server.chat_requests == []
