"""``tool_loop`` agents: LangChain's ``create_agent`` over the model, with its MCP tools.

The run is streamed on the shared agent loop (MCP tools are async only), keeping the latest
state, so a run stopped by a limit still has its trace:

* model calls are capped by ``agent_middleware.limits.model_call_limit`` (25), or the run's
  ``max_turns``: the middleware raises when the cap is hit, so no artificial "limit
  exceeded" message ever becomes the answer. The graph's own recursion limit is set above
  what that many model calls can take (:func:`recursion_limit`), so the user's limit is
  the one that binds; were it ever reached, it would count the same;
* tool calls by ``tool_call_limit`` (50): further calls are refused to the model, which can
  still answer;
* the whole run by ``agent_timeout`` (180 s), or the run's ``timeout``.

Every model call goes through :class:`.transport_middleware.TransportMiddleware` (the
model's concurrency cap, pacing and retry policy).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pytest_karenina.llm.adapters.langchain_model import to_langchain
from pytest_karenina.llm.agent_ports import (
    AgentError,
    AgentResult,
    AgentRunConfig,
    model_limits,
)
from pytest_karenina.llm.agents.chat_model import agent_chat_model
from pytest_karenina.llm.agents.event_loop import SHARED_LOOP, AgentEventLoop
from pytest_karenina.llm.agents.mcp_tools import MCPTools
from pytest_karenina.llm.agents.trace_convert import (
    conversation_usage,
    final_answer,
    trace_messages,
)
from pytest_karenina.llm.ports import ChatMessage, LLMCallError

GRAPH_CACHE = 64
"""Compiled agent graphs kept per agent (one per system prompt and run settings)."""

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.tools import BaseTool

    from pytest_karenina.config.model import ModelConfig
    from pytest_karenina.llm.agents.transport_middleware import TransportMiddleware


def recursion_limit(graph: Any, model_calls: int) -> int:
    """A graph recursion limit that ``model_calls`` model calls can never reach.

    Each model call is one pass of the agent loop, which visits every node of the graph at
    most once (the middleware's before/after hooks, the model, the tools; parallel tool
    calls share one step), so a pass takes at most as many steps as the graph has nodes.
    One pass more, and a margin, leave the model call limit as the limit that binds.
    """
    return (model_calls + 1) * len(graph.nodes) + 10


class ToolLoopAgent:
    """An :class:`~...agent_ports.AgentPort` on LangChain's agent runtime."""

    def __init__(
        self,
        model: ModelConfig,
        *,
        transport: TransportMiddleware | None = None,
        loop: AgentEventLoop = SHARED_LOOP,
        chat_model: BaseChatModel | None = None,
    ) -> None:
        self.model = model
        self.transport = transport
        self.loop = loop
        self._chat_model = chat_model
        self._tools = MCPTools(model) if model.mcp_urls_dict else None
        self._graphs: dict[tuple[Any, ...], tuple[list[BaseTool], Any]] = {}

    def close(self) -> None:
        """Close the MCP sessions (they reopen if the agent runs again)."""
        if self._tools is not None:
            self.loop.run(self._tools.aclose())

    def chat_model(self) -> BaseChatModel:
        if self._chat_model is None:
            self._chat_model = agent_chat_model(self.model)
        return self._chat_model

    def run(self, messages: Sequence[ChatMessage], config: AgentRunConfig) -> AgentResult:
        return self.loop.run(self.arun(messages, config))

    async def tools(self, config: AgentRunConfig) -> list[BaseTool]:
        """The run's tools: the model's MCP tools (subclasses add others)."""
        return await self._tools.get() if self._tools is not None else []

    def middleware(self, config: AgentRunConfig) -> list[Any]:
        from langchain.agents.middleware import ModelCallLimitMiddleware, ToolCallLimitMiddleware

        calls, tools, _ = model_limits(self.model)
        found: list[Any] = [
            ModelCallLimitMiddleware(run_limit=config.max_turns or calls, exit_behavior="error"),
            ToolCallLimitMiddleware(run_limit=tools),
        ]
        return [*found, self.transport] if self.transport is not None else found

    def build(self, system: str | None, tools: list[BaseTool], config: AgentRunConfig) -> Any:
        """The compiled agent graph for one run."""
        from langchain.agents import create_agent

        return create_agent(
            self.chat_model(), tools, system_prompt=system, middleware=self.middleware(config)
        )

    def _graph(self, system: str | None, tools: list[BaseTool], config: AgentRunConfig) -> Any:
        """The compiled graph for these settings, built once (a graph serves any number of
        runs; building one costs milliseconds of CPU)."""
        key = (system, config.max_turns, config.workspace, config.read_only)
        found = self._graphs.get(key)
        if found is not None and found[0] is tools:
            return found[1]
        graph = self.build(system, tools, config)
        if len(self._graphs) < GRAPH_CACHE:
            self._graphs[key] = (tools, graph)
        return graph

    async def arun(self, messages: Sequence[ChatMessage], config: AgentRunConfig) -> AgentResult:
        from langchain.agents.middleware.model_call_limit import ModelCallLimitExceededError
        from langgraph.errors import GraphRecursionError

        system = "\n\n".join(m.content for m in messages if m.role == "system") or None
        turns = [m for m in messages if m.role != "system"]
        try:
            agent = self._graph(system, await self.tools(config), config)
        except LLMCallError:
            raise
        except Exception as exc:
            raise AgentError(config.call_kind, f"{type(exc).__name__}: {exc}") from None
        calls, _, seconds = model_limits(self.model)
        limit = config.max_turns or calls
        state: dict[str, Any] = {"messages": to_langchain(turns)}
        limit_reached = timed_out = False
        try:
            async with asyncio.timeout(config.timeout or seconds):
                async for latest in agent.astream(
                    {"messages": to_langchain(turns)},
                    stream_mode="values",
                    config={"recursion_limit": recursion_limit(agent, limit)},
                ):
                    state = latest
        except (ModelCallLimitExceededError, GraphRecursionError):
            limit_reached = True
        except TimeoutError:
            timed_out = True
        except LLMCallError:
            raise  # a model call that failed for good, with its error class
        except Exception as exc:
            reason = f"{type(exc).__name__}: {exc}"
            raise AgentError(config.call_kind, reason, partial=self._result(state)) from None
        return self._result(state, limit_reached=limit_reached, timeout_reached=timed_out)

    def _result(
        self, state: dict[str, Any], *, limit_reached: bool = False, timeout_reached: bool = False
    ) -> AgentResult:
        records = [m.model_dump() for m in state.get("messages", [])]
        trace = trace_messages(records)
        return AgentResult(
            final_response=final_answer(trace),
            trace_messages=trace,
            usage=conversation_usage(records),
            turns=sum(1 for m in trace if m["role"] == "assistant"),
            limit_reached=limit_reached,
            timeout_reached=timeout_reached,
            model=self.model.model_name,
        )
