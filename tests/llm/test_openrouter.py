"""``openrouter``: the OpenAI wire client at OpenRouter's URL with ``OPENROUTER_API_KEY``, as
Karenina routes it; tested against the scripted OpenAI server by overriding the URL."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from pydantic import BaseModel

from pytest_karenina.config.model import ModelConfig
from pytest_karenina.llm.adapters.openai_endpoint import OpenAIEndpointModel
from pytest_karenina.llm.agent_ports import AgentRunConfig
from pytest_karenina.llm.ports import ChatMessage, LLMCallError, ModelRequest
from pytest_karenina.llm.provider_keys import MissingKeyError, key_variables
from pytest_karenina.llm.service import LLMService
from pytest_karenina.llm.transport import RetryingModel
from pytest_karenina.pipeline.llm_stack import default_adapter, model_secrets
from tests.support.agents_extra import needs_agents_extra
from tests.support.openai_server import OpenAIServer

if TYPE_CHECKING:
    from tests.support.mcp_server import MCPServer

ROUTER_KEY = "or-key-6a2f"
QUESTION = (ChatMessage("system", "Answer briefly."), ChatMessage("user", "Capital of France?"))


class Verdict(BaseModel):
    correct: bool


def router(**fields: Any) -> ModelConfig:
    return ModelConfig(
        **({"id": "router", "interface": "openrouter", "model_name": "openai/gpt-4.1"} | fields)
    )


@pytest.fixture
def router_key(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENROUTER_API_KEY", ROUTER_KEY)
    yield


def test_openrouter_goes_to_openrouters_url() -> None:
    adapter = default_adapter(router(endpoint_api_key="k"))

    assert isinstance(adapter, OpenAIEndpointModel)
    assert adapter._url == "https://openrouter.ai/api/v1/chat/completions"
    assert adapter.replay_identity["adapter"] == "openrouter"


def test_answers_and_judge_replies_at_an_overridden_url(
    openai_server: OpenAIServer, router_key: None
) -> None:
    openai_server.add_rule("Paris.", structured=False)
    openai_server.add_rule({"correct": True}, structured=True)
    model = default_adapter(router(endpoint_base_url=openai_server.base_url))

    answer = model.invoke(ModelRequest(QUESTION, "answer_generation"))
    judged = LLMService(model).parse([ChatMessage("user", "Judge.")], Verdict, call_kind="p")

    assert answer.text == "Paris." and judged.value == Verdict(correct=True)
    first, second = openai_server.chat_requests
    assert first.model == "openai/gpt-4.1"
    assert first.headers["authorization"] == "Bearer <redacted>"
    assert second.body["response_format"]["type"] == "json_schema"
    assert {"http-referer", "x-title"}.isdisjoint(first.headers)  # Karenina sends none


def test_openrouters_optional_headers_go_through_default_headers(
    openai_server: OpenAIServer, router_key: None
) -> None:
    openai_server.add_rule("Paris.")
    headers = {"HTTP-Referer": "https://example.org", "X-Title": "evals"}
    model = router(endpoint_base_url=openai_server.base_url, extra_kwargs={
        "default_headers": headers})  # fmt: skip

    default_adapter(model).invoke(ModelRequest(QUESTION, "answer_generation"))

    (request,) = openai_server.chat_requests
    assert (request.headers["http-referer"], request.headers["x-title"]) == (
        "https://example.org",
        "evals",
    )


def test_the_openai_key_is_never_sent_to_openrouter(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-not-for-openrouter")
    model = RetryingModel(default_adapter(router(endpoint_base_url=openai_server.base_url)))

    with pytest.raises(LLMCallError) as caught:
        model.invoke(ModelRequest(QUESTION, "answer_generation"))

    assert "openrouter model 'router' has no API key: set OPENROUTER_API_KEY" in str(caught.value)
    assert "permanent error, not retried" in str(caught.value)
    assert openai_server.requests == []


def test_the_models_own_key_comes_before_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", ROUTER_KEY)
    model = router(endpoint_api_key="own-key-4411")

    assert key_variables(model) == ()
    assert key_variables(router()) == ("OPENROUTER_API_KEY",)
    assert "own-key-4411" in model_secrets(model) and ROUTER_KEY not in model_secrets(model)
    assert ROUTER_KEY in model_secrets(router())


def test_a_missing_key_is_its_own_error_class() -> None:
    from pytest_karenina.llm.adapters.openai_endpoint import endpoint_key

    with pytest.raises(MissingKeyError, match="endpoint_api_key"):
        endpoint_key(router())


@needs_agents_extra
def test_the_tool_loop_runs_at_the_same_url_with_the_same_key(
    openai_server: OpenAIServer, mcp_server: MCPServer, router_key: None
) -> None:
    from pytest_karenina.llm.agents.tool_loop import ToolLoopAgent

    openai_server.add_rule("The sum is 5.", role="tool")
    openai_server.add_rule({"a": 2, "b": 3}, tool="add")
    model = router(endpoint_base_url=openai_server.base_url, mcp_urls_dict={"m": mcp_server.url})
    agent = ToolLoopAgent(model)
    try:
        result = agent.run(list(QUESTION), AgentRunConfig("answer_generation"))
    finally:
        agent.close()

    assert result.final_response == "The sum is 5."
    assert mcp_server.tool_calls("add") == [{"a": 2, "b": 3}]
    assert all(r.headers["authorization"] == "Bearer <redacted>" for r in openai_server.requests)
