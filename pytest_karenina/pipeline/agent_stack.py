"""Building a model's agent port: the runtime for its interface, under the model's transport
(concurrency cap, pacing and retries shared with its chat calls) and the run's replay store.

``langchain_deep_agents`` models get a ``deepagents`` runtime (file tools rooted at a run's
workspace), ``claude_agent_sdk`` models the Claude Code CLI (``claude-agent-sdk``, the
``claude`` extra); every other interface runs LangChain's ``create_agent`` over its chat model
with the model's MCP tools. Under strict replay no runtime is built at all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pytest_karenina.llm.adapters.identity import config_identity
from pytest_karenina.llm.agent_ports import AgentPort
from pytest_karenina.llm.agents.registry import (
    agent_identity,
    agent_tier,
    missing_agents_extra,
    uses_agent,
)
from pytest_karenina.llm.limits import ConcurrencyLimiter, RateLimiter
from pytest_karenina.llm.transport import model_limiter_key
from pytest_karenina.pipeline.retries import record_retry

if TYPE_CHECKING:
    from pytest_karenina.config.model import ModelConfig
    from pytest_karenina.config.verification import VerificationConfig
    from pytest_karenina.llm.replay import ReplayStore

AgentFactory = Callable[["ModelConfig"], AgentPort]
"""Builds the live agent runtime of a model (a hook for custom agents and tests)."""


class AgentsUnavailable(RuntimeError):
    """An extra the run's agents need (``agents``, ``claude``) is not installed; the message
    says how to install it."""


def agents_unavailable(config: VerificationConfig) -> str | None:
    """Why the run's agents cannot run here (the ``agents`` extra is missing, or the
    ``claude`` extra for ``claude_agent_sdk`` models), or None when no model of ``config``
    is an agent or the extras are installed."""
    models = [*config.answering_models, *config.parsing_models]
    agents = [m for m in config.answering_models if uses_agent(m)]
    agents += [m for m in models if agent_tier(m.interface) == "deep_agent"]
    if any(m.interface == "claude_agent_sdk" for m in agents):
        from pytest_karenina.llm.agents.claude_code_setup import missing_claude_extra

        missing = missing_claude_extra()
        if missing is not None:
            return missing
    wanted = any(m.interface != "claude_agent_sdk" for m in agents)
    return missing_agents_extra() if wanted else None


def default_agent(
    model: ModelConfig, config: VerificationConfig, secrets: Sequence[str]
) -> AgentPort:
    """The built-in runtime for ``model``: the Claude Code CLI for ``claude_agent_sdk``,
    deepagents for the other deep-agent interface, for ``openai_endpoint`` and ``openrouter``
    a tool loop speaking the wire protocol (:mod:`..llm.agents.endpoint_loop`), else a tool
    loop on LangChain's agent runtime; its transport scrubs ``secrets`` from every model reply
    and tool result of a run (the CLI runs its loop itself: its results are scrubbed at the
    port)."""
    if model.interface == "claude_agent_sdk":
        return _claude_agent(model, config)
    missing = missing_agents_extra()
    if missing is not None:
        raise AgentsUnavailable(missing)
    from pytest_karenina.llm.agents.transport_middleware import TransportMiddleware

    transport = TransportMiddleware(
        key=model_limiter_key(config_identity(model)),
        policy=model.retry_policy or config.retry_policy,
        limiter=ConcurrencyLimiter(model.max_concurrent_requests or config.max_concurrent_requests),
        rate_limiter=RateLimiter(model.requests_per_minute or config.requests_per_minute),
        secrets=tuple(secrets),
        error_patterns=tuple(config.custom_error_patterns),
        on_retry=record_retry,
    )
    if agent_tier(model.interface) == "deep_agent":
        from pytest_karenina.llm.agents.deep_agent import DeepAgent

        return DeepAgent(model, transport=transport)
    if model.interface in ("openai_endpoint", "openrouter"):
        from pytest_karenina.llm.agents.endpoint_loop import EndpointToolLoop

        return EndpointToolLoop(model, transport=transport)
    from pytest_karenina.llm.agents.tool_loop import ToolLoopAgent

    return ToolLoopAgent(model, transport=transport)


def _claude_agent(model: ModelConfig, config: VerificationConfig) -> AgentPort:
    from pytest_karenina.llm.agents.claude_code import ClaudeCodeAgent
    from pytest_karenina.llm.agents.claude_code_setup import missing_claude_extra

    missing = missing_claude_extra()
    if missing is not None:
        raise AgentsUnavailable(missing)
    return ClaudeCodeAgent(
        model,
        limiter=ConcurrencyLimiter(model.max_concurrent_requests or config.max_concurrent_requests),
        rate_limiter=RateLimiter(model.requests_per_minute or config.requests_per_minute),
    )


def build_agent(
    model: ModelConfig,
    live: Callable[[], AgentPort],
    replay: ReplayStore | None,
    secrets: Sequence[str] = (),
) -> AgentPort:
    """``model``'s agent port: the ``live`` runtime, behind the replay store when there is
    one (strict replay builds no runtime). Every result and error of the live runtime, and
    of the port, is scrubbed of ``secrets`` and secret-named environment values, so nothing
    recorded, reported or exported holds one."""
    from pytest_karenina.llm.agents.scrub import ScrubbingAgent

    if replay is None:
        return ScrubbingAgent(live(), secrets)
    from pytest_karenina.llm.agents.replay import ReplayingAgent

    inner = None if replay.mode == "strict" else ScrubbingAgent(live(), secrets)
    return ScrubbingAgent(ReplayingAgent(inner, replay, agent_identity(model)), secrets)
