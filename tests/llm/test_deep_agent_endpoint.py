"""A ``langchain_deep_agents`` model goes where its ``endpoint_base_url`` points, with its
``endpoint_api_key``: its agent runs and its plain calls, over real HTTP to local servers.

``OPENAI_BASE_URL`` points the provider's default endpoint at a decoy server, and
``OPENAI_API_KEY`` holds a canary: neither may be used."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pytest_karenina.config.model import ModelConfig
from pytest_karenina.llm.adapters.langchain_model import LangChainModel, build_chat_model
from pytest_karenina.llm.agent_ports import AgentError, AgentRunConfig
from pytest_karenina.llm.ports import ChatMessage, ModelRequest
from tests.support.agents_extra import needs_agents_extra
from tests.support.openai_server import OpenAIServer

CONFIGURED_KEY = "sk-configured-endpoint-key"
CANARY_KEY = "sk-canary-from-the-environment"
QUESTION = (ChatMessage("system", "Answer briefly."), ChatMessage("user", "Capital of France?"))


class KeyRecordingServer(OpenAIServer):
    """The scripted server, also keeping the bearer token of each request (the request log
    redacts credentials)."""

    def __init__(self) -> None:
        super().__init__()
        self.keys: list[str] = []

    def _record(self, handler: Any, body: Any, rule: Any = None, fault: Any = None) -> int:
        scheme, _, token = (handler.headers.get("Authorization") or "").partition(" ")
        self.keys.append(token if scheme == "Bearer" else "")
        return super()._record(handler, body, rule, fault)


@pytest.fixture
def endpoint() -> Iterator[KeyRecordingServer]:
    with KeyRecordingServer() as server:
        yield server
    assert not server.errors


@pytest.fixture
def decoy(monkeypatch: pytest.MonkeyPatch) -> Iterator[KeyRecordingServer]:
    """The provider's default endpoint, as the environment names it."""
    with KeyRecordingServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", CANARY_KEY)
        yield server


def deep_model(endpoint: OpenAIServer, **fields: Any) -> ModelConfig:
    options: dict[str, Any] = {
        "id": "judge", "model_name": "test-model", "model_provider": "openai",
        "interface": "langchain_deep_agents", "endpoint_base_url": endpoint.base_url,
        "endpoint_api_key": CONFIGURED_KEY, **fields,
    }  # fmt: skip
    return ModelConfig(**options)


@needs_agents_extra
def test_a_deep_agent_calls_its_endpoint_with_its_key(
    endpoint: KeyRecordingServer, decoy: KeyRecordingServer
) -> None:
    from pytest_karenina.llm.agents.deep_agent import DeepAgent

    endpoint.add_rule("Paris.")
    agent = DeepAgent(deep_model(endpoint))
    try:
        result = agent.run(QUESTION, AgentRunConfig("agentic_parsing_investigation"))
    finally:
        agent.close()

    assert result.final_response == "Paris."
    assert endpoint.chat_requests and set(endpoint.keys) == {CONFIGURED_KEY}
    assert decoy.requests == [] and CANARY_KEY not in endpoint.keys


def test_plain_calls_of_a_deep_agent_model_go_to_its_endpoint(
    endpoint: KeyRecordingServer, decoy: KeyRecordingServer
) -> None:
    endpoint.add_rule({"answer": "Paris"}, structured=True)
    endpoint.add_rule("Paris.")
    model = LangChainModel(deep_model(endpoint))

    plain = model.invoke(ModelRequest(QUESTION, "parsing"))
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}}
    structured = model.invoke(ModelRequest(QUESTION, "parsing", json_schema=schema))

    assert (plain.text, structured.text) == ("Paris.", '{"answer": "Paris"}')
    assert endpoint.keys == [CONFIGURED_KEY, CONFIGURED_KEY]
    assert decoy.requests == []


@needs_agents_extra
def test_an_endpoint_without_its_key_is_refused_by_name(
    endpoint: KeyRecordingServer, decoy: KeyRecordingServer
) -> None:
    from pytest_karenina.llm.agents.deep_agent import DeepAgent

    model = deep_model(endpoint, endpoint_api_key=None)
    with pytest.raises(ValueError, match=r"'judge'.*endpoint_base_url.*needs endpoint_api_key"):
        LangChainModel(model).invoke(ModelRequest(QUESTION, "parsing"))
    agent = DeepAgent(model)
    try:
        with pytest.raises(AgentError, match="needs endpoint_api_key"):
            agent.run(QUESTION, AgentRunConfig("agentic_parsing_investigation"))
    finally:
        agent.close()
    assert endpoint.requests == [] and decoy.requests == []


def test_anthropic_models_take_their_dedicated_server_fields() -> None:
    model = ModelConfig(
        id="claude", model_name="claude-test", model_provider="anthropic",
        anthropic_base_url="http://127.0.0.1:9/anthropic", anthropic_api_key="sk-ant-configured",
    )  # fmt: skip
    chat = build_chat_model(model)
    assert getattr(chat, "anthropic_api_url", None) == "http://127.0.0.1:9/anthropic"
    assert chat.anthropic_api_key.get_secret_value() == "sk-ant-configured"  # type: ignore[attr-defined]
