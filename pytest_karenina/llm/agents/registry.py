"""Which interfaces are agents by nature (seed 004, section 1).

``deep_agent`` runtimes are agents with their own tools (a coding agent, ``deepagents``); a
``tool_loop`` adapter answers in one call unless the model is given tools (MCP servers), in
which case the adapter runs the loop. GenerateAnswer takes the agent path when the answering
model has MCP servers or a ``deep_agent`` interface.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from pytest_karenina.config.model import ModelConfig

AgentTier = Literal["deep_agent", "tool_loop"]
AGENTS_EXTRA = "pip install 'pytest-karenina[agents]'"


@dataclass(frozen=True)
class AdapterSpec:
    interface: str
    agent_tier: AgentTier


ADAPTER_SPECS: dict[str, AdapterSpec] = {
    spec.interface: spec
    for spec in (
        AdapterSpec("claude_agent_sdk", "deep_agent"),
        AdapterSpec("langchain_deep_agents", "deep_agent"),
        AdapterSpec("langchain", "tool_loop"),
        AdapterSpec("claude_tool", "tool_loop"),
        AdapterSpec("manual", "tool_loop"),
        AdapterSpec("openai_endpoint", "tool_loop"),
        AdapterSpec("openrouter", "tool_loop"),
    )
}


def agent_tier(interface: str) -> AgentTier | None:
    """The interface's tier, or None for an interface this table does not know."""
    spec = ADAPTER_SPECS.get(interface)
    return spec.agent_tier if spec is not None else None


def uses_agent(model: ModelConfig) -> bool:
    """Whether ``model`` answers through the agent port (MCP tools, or a deep agent)."""
    return bool(model.mcp_urls_dict) or agent_tier(model.interface) == "deep_agent"


def missing_agents_extra() -> str | None:
    """Why agents cannot run here (the extra's packages are missing), or None."""
    from importlib.util import find_spec

    missing = [
        name
        for name, module in (
            ("langchain-mcp-adapters", "langchain_mcp_adapters"),
            ("mcp", "mcp"),
            ("deepagents", "deepagents"),
        )
        if find_spec(module) is None
    ]
    if not missing:
        return None
    return f"agents need {', '.join(missing)}: {AGENTS_EXTRA}"


def agent_identity(model: ModelConfig) -> dict[str, object]:
    """What keys a model's recorded agent runs: its identity, tier, MCP servers and tool
    settings, and its call limits (never the run's workspace path)."""
    from pytest_karenina.llm.adapters.identity import config_identity
    from pytest_karenina.llm.agent_ports import model_limits

    calls, tools, _ = model_limits(model)
    return {
        **config_identity(model),
        "agent": agent_tier(model.interface) or "tool_loop",
        "mcp_servers": sorted(model.mcp_urls_dict or {}),
        "mcp_tool_filter": model.mcp_tool_filter,
        "mcp_tool_description_overrides": model.mcp_tool_description_overrides,
        "model_call_limit": calls,
        "tool_call_limit": tools,
    }
