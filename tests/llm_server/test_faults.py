"""Injected faults surface through langchain-openai 1.x as the real client exceptions."""

from __future__ import annotations

import json
import threading

import openai
import pydantic
import pytest

from tests.llm_server.clients import Verdict, chat
from tests.support.openai_server import Fault, OpenAIServer

VERDICT = {"correct": True, "score": 9, "reason": "matches"}


def test_rate_limit_is_a_rate_limit_error_with_retry_after(openai_server: OpenAIServer) -> None:
    openai_server.add_rule(Fault.rate_limit(retry_after=7))

    with pytest.raises(openai.RateLimitError) as caught:
        chat(openai_server).invoke("hi")

    assert caught.value.status_code == 429
    assert caught.value.response.headers["retry-after"] == "7"
    assert caught.value.message == "Error code: 429 - injected rate limit"


@pytest.mark.parametrize("status", [500, 503])
def test_server_errors_are_internal_server_errors(openai_server: OpenAIServer, status: int) -> None:
    openai_server.add_rule(Fault.server_error(status))

    with pytest.raises(openai.InternalServerError) as caught:
        chat(openai_server).invoke("hi")

    assert caught.value.status_code == status


def test_timeout_is_an_api_timeout_error(openai_server: OpenAIServer) -> None:
    openai_server.add_rule(Fault.timeout(seconds=600))

    with pytest.raises(openai.APITimeoutError):
        chat(openai_server, timeout=0.3).invoke("hi")

    assert len(openai_server.requests) == 1


def test_stop_wakes_a_request_held_by_a_timeout_fault() -> None:
    server = OpenAIServer(default=Fault.timeout(seconds=600)).start()
    with pytest.raises(openai.APITimeoutError):
        chat(server, timeout=0.2).invoke("hi")

    stopper = threading.Thread(target=server.stop)
    stopper.start()
    stopper.join(timeout=30)  # a deadlock guard, not a speed assertion

    assert not stopper.is_alive(), "stop() is still waiting on the held handler thread"


def test_connection_reset_is_a_connection_error(openai_server: OpenAIServer) -> None:
    openai_server.add_rule(Fault.connection_reset())

    with pytest.raises(openai.APIConnectionError) as caught:
        chat(openai_server).invoke("hi")

    assert not isinstance(caught.value, openai.APITimeoutError)


def test_malformed_body_raises_json_decode_error(openai_server: OpenAIServer) -> None:
    # The openai SDK does not wrap this one: a 200 whose JSON is broken escapes as-is.
    openai_server.add_rule(Fault.malformed_body())

    with pytest.raises(json.JSONDecodeError):
        chat(openai_server).invoke("hi")


def test_malformed_content_is_text_for_plain_calls(openai_server: OpenAIServer) -> None:
    openai_server.add_rule(Fault.malformed_content('{"correct": tru'))

    assert chat(openai_server).invoke("hi").content == '{"correct": tru'


def test_malformed_content_fails_json_schema_parsing(openai_server: OpenAIServer) -> None:
    openai_server.add_rule(Fault.malformed_content())

    with pytest.raises(pydantic.ValidationError, match="Invalid JSON"):
        chat(openai_server).with_structured_output(Verdict).invoke("judge")


def test_malformed_tool_arguments_yield_none_or_a_parsing_error(
    openai_server: OpenAIServer,
) -> None:
    # function_calling drops unparsable tool calls into `invalid_tool_calls`: no exception.
    openai_server.add_rule(Fault.malformed_content())
    llm = chat(openai_server)

    plain = llm.with_structured_output(Verdict, method="function_calling")
    raw = llm.with_structured_output(Verdict, method="function_calling", include_raw=True)

    assert plain.invoke("judge") is None
    result = raw.invoke("judge")
    assert result["parsed"] is None
    assert result["raw"].invalid_tool_calls[0]["args"] == '{"verdict": tru'


def test_reply_missing_a_required_field(openai_server: OpenAIServer) -> None:
    openai_server.script(
        Fault.missing_field("choices"),
        Fault.missing_field("choices", text=json.dumps(VERDICT)),
        Fault.missing_field("choices.0.message"),
    )
    llm = chat(openai_server)

    with pytest.raises(TypeError, match="null value for 'choices'"):
        llm.invoke("hi")
    with pytest.raises(TypeError):
        llm.with_structured_output(Verdict).invoke("judge")
    with pytest.raises(AttributeError):
        llm.invoke("hi")


def test_reply_missing_an_optional_field(openai_server: OpenAIServer) -> None:
    openai_server.add_rule(Fault.missing_field("usage", text="fine"))

    reply = chat(openai_server).invoke("hi")

    assert reply.content == "fine"
    assert reply.usage_metadata is None


def test_judge_json_missing_a_schema_field_fails_validation(openai_server: OpenAIServer) -> None:
    openai_server.add_rule({"correct": True, "reason": "no score"})

    with pytest.raises(pydantic.ValidationError, match="score"):
        chat(openai_server).with_structured_output(Verdict).invoke("judge")


def test_empty_answer(openai_server: OpenAIServer) -> None:
    openai_server.add_rule(Fault.empty_answer())
    llm = chat(openai_server)

    assert llm.invoke("hi").content == ""
    assert llm.with_structured_output(Verdict, method="function_calling").invoke("j") is None
    with pytest.raises(ValueError, match="does not have a 'parsed' field"):
        llm.with_structured_output(Verdict).invoke("judge")


def test_rate_limit_then_success_with_client_retry(openai_server: OpenAIServer) -> None:
    openai_server.script(Fault.rate_limit(retry_after=0.01), VERDICT)

    result = chat(openai_server, max_retries=1).with_structured_output(Verdict).invoke("judge")

    assert result == Verdict(**VERDICT)
    requests = openai_server.requests
    assert [r.fault for r in requests] == ["http_error", None]
    assert [r.headers["x-stainless-retry-count"] for r in requests] == ["0", "1"]
    assert openai_server.unused_rules() == []


def test_server_error_then_success_with_client_retry(openai_server: OpenAIServer) -> None:
    openai_server.script(Fault.http_error(503, "overloaded", retry_after=0.01), "recovered")

    assert chat(openai_server, max_retries=1).invoke("hi").content == "recovered"
    assert len(openai_server.requests) == 2


def _outcomes(seed: int) -> list[str]:
    with OpenAIServer(default="ok") as server:
        server.set_faults(0.5, Fault.server_error(), Fault.rate_limit(), seed=seed)
        llm = chat(server)
        outcomes = []
        for _ in range(12):
            try:
                outcomes.append(str(llm.invoke("hi").content))
            except openai.APIStatusError as error:
                outcomes.append(str(error.status_code))
    return outcomes


def test_global_fault_rate_is_deterministic_for_a_seed() -> None:
    first, again, other = _outcomes(seed=3), _outcomes(seed=3), _outcomes(seed=4)

    assert first == again
    assert first != other
    assert {"ok", "500", "429"} <= set(first) | set(other)


def test_per_rule_fault_rate(openai_server: OpenAIServer) -> None:
    rule = openai_server.add_rule("ok", faults=[Fault.server_error()], fault_rate=0.5)
    llm = chat(openai_server)
    failures = 0
    for _ in range(20):
        try:
            llm.invoke("hi")
        except openai.InternalServerError:
            failures += 1

    assert 0 < failures < 20
    assert rule.uses == 20
    assert sum(r.fault == "http_error" for r in openai_server.requests) == failures


def test_faults_apply_to_streams(openai_server: OpenAIServer) -> None:
    openai_server.script(Fault.rate_limit(), Fault.connection_reset())
    llm = chat(openai_server)

    with pytest.raises(openai.RateLimitError):
        list(llm.stream("a"))
    with pytest.raises(openai.APIConnectionError):
        list(llm.stream("b"))
