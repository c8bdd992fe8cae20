"""ModelConfig and RetryPolicy: Karenina's fields and defaults (4.4, 4.5), identities, secrets."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from pytest_karenina.config.model import (
    INTERFACES,
    REVEAL_SECRETS,
    AgentMiddlewareConfig,
    ModelConfig,
    RetryPolicy,
    TimeoutEscalationConfig,
)
from tests.config.helpers import CANARY, config, model

MODEL_DEFAULTS: dict[str, Any] = {
    "id": "x",
    "model_provider": None,
    "model_name": "y",
    "temperature": 0.1,
    "max_tokens": 16384,
    "interface": "langchain",
    "system_prompt": None,
    "max_retries": 2,
    "mcp_urls_dict": None,
    "mcp_tool_filter": None,
    "mcp_tool_description_overrides": None,
    "mcp_http_timeout": None,
    "mcp_sse_read_timeout": None,
    "endpoint_base_url": None,
    "endpoint_api_key": None,
    "anthropic_base_url": None,
    "anthropic_api_key": None,
    "agent_runtime": None,
    "extra_kwargs": None,
    "manual_traces": None,
    "agent_middleware": None,
    "max_context_tokens": None,
    "agent_timeout": None,
    "request_timeout": None,
    "retry_policy": None,
    # pytest-karenina's own request limits:
    "max_concurrent_requests": None,
    "requests_per_minute": None,
}


def test_every_field_of_spec_4_4_with_its_default() -> None:
    built = ModelConfig(id="x", model_name="y")
    assert set(ModelConfig.model_fields) == set(MODEL_DEFAULTS)
    assert {name: getattr(built, name) for name in MODEL_DEFAULTS} == MODEL_DEFAULTS


def test_interfaces_are_karenina_s() -> None:
    assert set(INTERFACES) == {
        "langchain",
        "openrouter",
        "openai_endpoint",
        "claude_tool",
        "claude_agent_sdk",
        "langchain_deep_agents",
        "manual",
    }
    with pytest.raises(ValidationError, match="interface"):
        ModelConfig(id="x", model_name="y", interface="langchian")


@pytest.mark.parametrize("missing", ["id", "model_name"])
def test_non_manual_models_need_id_and_name(missing: str) -> None:
    data = {"id": "x", "model_name": "y", missing: None}
    with pytest.raises(ValidationError, match=f"{missing} is required for interface 'langchain'"):
        ModelConfig(**data)


def test_manual_interface_defaults_id_and_name() -> None:
    manual = ModelConfig(interface="manual")
    assert (manual.id, manual.model_name) == ("manual", "manual")
    named = ModelConfig(interface="manual", id="recorded", model_name="gpt-4o")
    assert (named.id, named.model_name) == ("recorded", "gpt-4o")


def test_manual_interface_refuses_mcp() -> None:
    with pytest.raises(ValidationError, match="not allowed with interface 'manual'"):
        ModelConfig(interface="manual", mcp_urls_dict={"files": "http://x"})


def test_manual_traces_are_never_dumped() -> None:
    manual = ModelConfig(interface="manual", manual_traces={"q1": "Paris"})
    assert manual.manual_traces == {"q1": "Paris"}
    assert "manual_traces" not in manual.model_dump()


def test_extra_keys_are_rejected_by_name() -> None:
    with pytest.raises(ValidationError) as caught:
        ModelConfig.model_validate({"id": "x", "model_name": "y", "temprature": 0.5})
    assert caught.value.errors()[0]["loc"] == ("temprature",)
    assert caught.value.errors()[0]["type"] == "extra_forbidden"


def test_identity_of_answering_model_lists_sorted_tools() -> None:
    agent = ModelConfig(
        id="claude-agent",
        model_name="claude-sonnet-4-5",
        mcp_urls_dict={"search": "http://s", "files": "http://f"},
    )
    answering = agent.identity("answering")
    assert answering.tools == ["files", "search"]
    assert answering.config_id == "claude-agent"
    assert answering.display_string == "langchain:claude-sonnet-4-5 (claude-agent) +[files, search]"
    assert agent.identity("parsing").tools == []


def test_identity_drops_config_id_equal_to_model_name() -> None:
    plain = ModelConfig(id="gpt-4o", model_name="gpt-4o")
    assert plain.identity("parsing").canonical_key == "langchain:gpt-4o:"


def test_answer_cache_key_uses_the_id() -> None:
    answering = ModelConfig(id="haiku", model_name="claude-haiku-4-5")
    assert answering.answer_cache_key("urn:q:1") == "urn:q:1_haiku"
    assert answering.answer_cache_key("urn:q:1", replicate=2) == "urn:q:1_haiku_rep2"


def test_request_timeout_must_be_positive() -> None:
    with pytest.raises(ValidationError, match="request_timeout"):
        ModelConfig(id="x", model_name="y", request_timeout=0)


class TestSecrets:
    def keyed(self) -> ModelConfig:
        return ModelConfig(
            id="local",
            model_name="qwen",
            interface="openai_endpoint",
            endpoint_base_url="http://localhost:8000/v1",
            endpoint_api_key=CANARY,
            anthropic_api_key=CANARY,
        )

    def test_keys_never_show_in_repr_str_or_json(self) -> None:
        keyed = self.keyed()
        run = config(answering_models=[keyed])
        texts = [
            repr(keyed),
            str(keyed),
            keyed.model_dump_json(),
            json.dumps(keyed.model_dump(mode="json")),
            repr(run),
            str(run),
            run.model_dump_json(),
            json.dumps(run.model_dump(mode="json")),
        ]
        for text in texts:
            assert CANARY not in text
        assert keyed.model_dump(mode="json")["endpoint_api_key"] == "**********"

    def test_adapters_read_the_key(self) -> None:
        keyed = self.keyed()
        assert keyed.endpoint_api_key is not None
        assert keyed.endpoint_api_key.get_secret_value() == CANARY

    def test_a_dump_can_ask_for_the_keys(self) -> None:
        run = config(answering_models=[self.keyed()])
        revealed = run.model_dump(mode="json", context={REVEAL_SECRETS: True})
        assert revealed["answering_models"][0]["endpoint_api_key"] == CANARY
        assert revealed["answering_models"][0]["anthropic_api_key"] == CANARY
        assert CANARY in run.model_dump_json(context={REVEAL_SECRETS: True})

    def test_the_mask_karenina_saves_means_no_key(self) -> None:
        loaded = ModelConfig.model_validate_json(
            json.dumps({"id": "a", "model_name": "b", "endpoint_api_key": "**********"})
        )
        assert loaded.endpoint_api_key is None

    def test_extra_kwargs_stay_out_of_repr(self) -> None:
        extra = ModelConfig(id="a", model_name="b", extra_kwargs={"api_key": CANARY})
        assert CANARY not in repr(extra)
        assert extra.extra_kwargs == {"api_key": CANARY}


class TestRetryPolicy:
    def test_karenina_defaults(self) -> None:
        policy = RetryPolicy()
        budgets = {
            name: (cfg.max_attempts, cfg.backoff_min, cfg.backoff_max, cfg.backoff_multiplier)
            for name, cfg in policy
            if name != "timeout_escalation"
        }
        assert budgets == {
            "connection": (3, 1.0, 10.0, 2.0),
            "timeout": (3, 5.0, 30.0, 2.0),
            "rate_limit": (5, 5.0, 30.0, 2.0),
            "server_error": (2, 2.0, 15.0, 2.0),
        }
        assert policy.timeout_escalation is None
        assert policy.budget("permanent").max_attempts == 0
        assert policy.derive_sdk_max_retries() == 5

    def test_partial_policy_keeps_other_defaults(self) -> None:
        policy = RetryPolicy.model_validate({"rate_limit": {"max_attempts": 8}})
        assert policy.rate_limit.max_attempts == 8
        assert policy.rate_limit.backoff_min == 1.0
        assert policy.connection.max_attempts == 3

    @pytest.mark.parametrize(
        ("settings", "message"),
        [
            ({"strategy": "additive"}, "increment > 0"),
            ({"strategy": "multiplicative", "multiplier": 1.0}, "multiplier > 1.0"),
            ({"strategy": "linear"}, "needs max_timeout"),
        ],
    )
    def test_timeout_escalation_needs_its_parameter(
        self, settings: dict[str, Any], message: str
    ) -> None:
        with pytest.raises(ValidationError, match=message):
            TimeoutEscalationConfig(**settings)

    def test_timeout_escalation_accepted(self) -> None:
        policy = RetryPolicy.model_validate(
            {"timeout_escalation": {"strategy": "additive", "increment": 15, "max_timeout": 180}}
        )
        assert policy.timeout_escalation is not None
        assert policy.timeout_escalation.increment == 15.0

    def test_unknown_keys_rejected(self) -> None:
        with pytest.raises(ValidationError, match="retries"):
            RetryPolicy.model_validate({"connection": {"retries": 1}})


def test_agent_settings_are_carried_unchanged() -> None:
    middleware = AgentMiddlewareConfig.model_validate(
        {"limits": {"model_call_limit": 10}, "summarization": {"keep_messages": 5}, "new": 1}
    )
    assert middleware.limits.model_call_limit == 10
    assert middleware.limits.tool_call_limit == 50
    assert middleware.model_dump()["summarization"] == {"keep_messages": 5}
    assert middleware.model_dump()["new"] == 1


def test_model_entries_as_karenina_writes_them_load() -> None:
    entry = model(temperature=0.0, interface="langchain", system_prompt=None, max_retries=2)
    assert ModelConfig.model_validate_json(json.dumps(entry)).temperature == 0.0
