"""The agent tiers of seed 004 (section 1), and which models answer as agents."""

from __future__ import annotations

from pytest_karenina.config.model import ModelConfig
from pytest_karenina.llm.agents.registry import ADAPTER_SPECS, agent_tier, uses_agent


def test_the_seeds_table() -> None:
    assert {name: spec.agent_tier for name, spec in ADAPTER_SPECS.items()} == {
        "claude_agent_sdk": "deep_agent", "langchain_deep_agents": "deep_agent",
        "langchain": "tool_loop", "claude_tool": "tool_loop", "manual": "tool_loop",
        "openai_endpoint": "tool_loop", "openrouter": "tool_loop",
    }  # fmt: skip
    assert agent_tier("taskeval") is None


def test_mcp_servers_or_a_deep_agent_interface_make_an_agent() -> None:
    plain = ModelConfig(id="a", model_name="m", model_provider="openai")
    assert not uses_agent(plain)
    assert uses_agent(plain.model_copy(update={"mcp_urls_dict": {"s": "http://h/mcp"}}))
    assert uses_agent(plain.model_copy(update={"interface": "langchain_deep_agents"}))
    assert not uses_agent(ModelConfig(interface="manual"))
