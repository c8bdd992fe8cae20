"""The Messages API shapes of ``claude_tool`` (pure functions), its message conversion for the
tool loop, and the checks that need no server: keys, the extra, secrets."""

from __future__ import annotations

import pytest

from pytest_karenina.config.model import ModelConfig
from pytest_karenina.llm import providers
from pytest_karenina.llm.adapters.anthropic_wire import (
    EMPTY_TURN,
    StructuredForms,
    conversation,
    reply_text,
    request_options,
    structured_tool_name,
    usage_of,
)
from pytest_karenina.llm.ports import ChatMessage
from pytest_karenina.llm.provider_keys import configured_key, key_variables, models_without_keys
from pytest_karenina.pipeline.llm_stack import model_secrets

pytest.importorskip("anthropic", reason="claude_tool needs pip install 'pytest-karenina[claude]'")


def claude(**fields: object) -> ModelConfig:
    return ModelConfig(**({"id": "c", "interface": "claude_tool", "model_name": "m"} | fields))


def test_system_turns_are_joined_and_one_roles_turns_merged() -> None:
    system, turns = conversation([
        ChatMessage("system", "Be brief."), ChatMessage("system", "Be right."),
        ChatMessage("user", "Q?"), ChatMessage("assistant", ""), ChatMessage("user", "Fix it."),
        ChatMessage("user", "Now."),
    ])  # fmt: skip

    assert system == "Be brief.\n\nBe right."
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert turns[1]["content"] == [{"type": "text", "text": EMPTY_TURN}]
    assert [b["text"] for b in turns[2]["content"]] == ["Fix it.", "Now."]


def test_extra_kwargs_split_into_body_and_headers() -> None:
    body, headers = request_options(0.2, 100, {
        "default_headers": {"X-A": "1"}, "top_k": 3, "api_key": "k", "auth_token": "t",
        "extra_body": {"metadata": {"user_id": "u"}},
    })  # fmt: skip

    assert body == {"temperature": 0.2, "max_tokens": 100, "top_k": 3,
                    "metadata": {"user_id": "u"}}  # fmt: skip
    assert headers == {"X-A": "1"}


def test_schemas_are_asked_for_natively_or_through_a_forced_tool() -> None:
    forms = StructuredForms()
    plain = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    mapping = {"type": "object", "properties": {"m": {"type": "object",
               "additionalProperties": {"type": "integer"}}}}  # fmt: skip

    assert set(forms.params("Plain", plain)) == {"output_config"}
    assert forms.params("Map", mapping)["tool_choice"] == {"type": "tool", "name": "reply_as_Map"}
    forms.output_config_refused = True
    assert set(forms.params("Plain", plain)) == {"tools", "tool_choice"}


def test_tool_names_and_replies_of_a_forced_tool() -> None:
    name = structured_tool_name("Answer v2 (final)")
    content = [
        {"type": "text", "text": "Here:"},
        {"type": "tool_use", "name": name, "input": {"value": [1, 2]}},
    ]

    assert name == "reply_as_Answer_v2__final_"
    assert reply_text(content, name) == "[1, 2]"
    assert reply_text(content) == "Here:"


def test_usage_counts_cached_prompt_tokens() -> None:
    usage = usage_of({"input_tokens": 10, "cache_read_input_tokens": 90,
                      "cache_creation_input_tokens": 5, "output_tokens": 7})  # fmt: skip

    assert (usage.input_tokens, usage.output_tokens) == (105, 7)
    assert usage_of(None).input_tokens is None


def test_the_key_comes_from_the_model_then_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "from-env")
    monkeypatch.setenv("OPENAI_API_KEY", "not-this-one")

    assert configured_key(claude()) == "from-env"
    assert configured_key(claude(anthropic_api_key="own")) == "own"
    assert key_variables(claude()) == ("ANTHROPIC_API_KEY",)
    assert key_variables(claude(anthropic_api_key="own")) == ()
    assert models_without_keys([claude()], environ={}) == [("c", "ANTHROPIC_API_KEY")]


def test_the_environment_key_is_a_secret_of_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """A short key escapes the scrub of secret-looking environment values (8 characters and
    up): only the model's own secrets keep it out of replies and recordings."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k-12")

    assert "k-12" in model_secrets(claude())


def test_a_missing_sdk_is_named_with_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(providers, "_installed", lambda module: module != "anthropic")

    assert providers.provider_problem(claude()) == (
        "interface 'claude_tool' needs the anthropic package (pip install "
        "'pytest-karenina[claude]')"
    )


def test_the_tool_loops_conversation_in_anthropic_blocks() -> None:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    from pytest_karenina.llm.agents.claude_chat import to_anthropic

    thinking = {"type": "thinking", "thinking": "Look it up.", "signature": "sig"}
    system, turns = to_anthropic([
        SystemMessage("Be brief."), HumanMessage("Capital of France and Italy?"),
        AIMessage(content=[thinking], tool_calls=[
            {"name": "lookup", "args": {"c": "France"}, "id": "t1"},
            {"name": "lookup", "args": {"c": "Italy"}, "id": "t2"},
        ]),
        ToolMessage("Paris", tool_call_id="t1"),
        ToolMessage("no such country", tool_call_id="t2", status="error"),
    ])  # fmt: skip

    assert system == "Be brief."
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert turns[1]["content"] == [
        thinking,
        {"type": "tool_use", "id": "t1", "name": "lookup", "input": {"c": "France"}},
        {"type": "tool_use", "id": "t2", "name": "lookup", "input": {"c": "Italy"}},
    ]
    assert turns[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "Paris", "is_error": False},
        {"type": "tool_result", "tool_use_id": "t2", "content": "no such country",
         "is_error": True},
    ]  # fmt: skip
