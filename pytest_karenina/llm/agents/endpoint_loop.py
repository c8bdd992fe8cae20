"""``openai_endpoint`` and ``openrouter`` tool loops that speak the wire protocol themselves.

The same run as :class:`~.tool_loop.ToolLoopAgent` (LangChain's ``create_agent``), without
LangGraph, the openai SDK and httpx, which cost most of an agent run's CPU: the loop is a
plain coroutine, and each model call is one chat-completions POST over the ``urllib3`` pool
of the plain ``openai_endpoint`` adapter, made in a thread of the agent loop.

What the run does and records is LangChain's, piece by piece (``tests/llm/
test_endpoint_loop.py`` runs both loops on the same scripted conversations and compares
every request and result):

* the request body is ``ChatOpenAI``'s for the history and the bound tools (its own
  ``_get_request_payload``, with ``extra_body`` merged in as the openai SDK merges it), with
  the headers and time limits the SDK would send;
* the reply becomes ``ChatOpenAI``'s ``AIMessage`` (its own ``_create_chat_result``);
* tool calls run through the MCP tools' own LangChain tools (``tool.ainvoke``: the same
  ``ToolMessage``, errors and artifact), several at once, their results added together;
  a call of an unknown tool gets LangGraph's ``ToolNode`` error result;
* the limits are those of ``ModelCallLimitMiddleware`` (raising at the cap) and
  ``ToolCallLimitMiddleware`` (refused calls get its error result, before the results of
  the calls made, and the model is asked again), and the transport middleware wraps each
  model call (concurrency cap, pacing, retries, scrubbing) and each tool call (scrubbing);
* a run stopped by its time limit keeps the messages of the steps it finished.

A model whose requests LangChain would send elsewhere (the Responses API, streaming,
``response_format``) runs on :class:`~.tool_loop.ToolLoopAgent` as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import orjson

from pytest_karenina.llm.adapters.langchain_model import to_langchain
from pytest_karenina.llm.agent_ports import AgentError, AgentResult, AgentRunConfig, model_limits
from pytest_karenina.llm.agents.endpoint_wire import Target, post
from pytest_karenina.llm.agents.tool_loop import ToolLoopAgent
from pytest_karenina.llm.ports import ChatMessage, LLMCallError

if TYPE_CHECKING:
    from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
    from langchain_core.tools import BaseTool

UNKNOWN_TOOL = "Error: {requested_tool} is not a valid tool, try one of [{available_tools}]."
"""LangGraph ``ToolNode``'s result for a call of a tool it does not have."""
REFUSED = "Tool call limit exceeded. Do not make additional tool calls."
"""``ToolCallLimitMiddleware``'s result for a call it refused (no tool name set)."""


class ModelCallLimitReached(Exception):
    """The run's model call limit is reached before the next call."""


class _Spec:
    """What every model call of one agent and tool list shares: the request body but its
    messages (``ChatOpenAI``'s for the bound tools), and the tools by name."""

    def __init__(self, model: Any, tools: list[BaseTool]) -> None:
        self.model = model
        self.tools = tools
        self.by_name = {tool.name: tool for tool in tools}
        bound = model.bind_tools(tools, tool_choice=None) if tools else model.bind()
        self.fixed = self.body([], **bound.kwargs)
        self.fixed.pop("messages", None)

    def body(self, messages: list[BaseMessage], **bound: Any) -> dict[str, Any]:
        """``ChatOpenAI``'s request body for ``messages`` (``extra_body`` merged in, as the
        openai SDK sends it)."""
        payload: dict[str, Any] = self.model._get_request_payload(messages, stop=None, **bound)
        extra = payload.pop("extra_body", None) or {}
        return {**payload, **extra}

    def message(self, message: BaseMessage) -> dict[str, Any]:
        """One message as ``ChatOpenAI`` sends it: each is converted on its own, so a
        conversation's messages are converted once, not at every call."""
        text = _text_blocks(message)
        if text is not None:  # what ChatOpenAI sends for it, without its per-block checks
            return {"content": text, "role": "tool", "tool_call_id": message.tool_call_id}  # type: ignore[attr-defined]
        converted: dict[str, Any] = self.body([message])["messages"][0]
        return converted


def _text_blocks(message: BaseMessage) -> list[dict[str, str]] | None:
    """A tool result made of text blocks only (an MCP tool's usual result), as
    ``ChatOpenAI`` sends it (the blocks' ids dropped); None for any other message."""
    content = message.content
    if message.type != "tool" or not isinstance(content, list) or not content:
        return None
    blocks: list[dict[str, str]] = []
    for block in content:
        if not isinstance(block, dict) or block.get("type") != "text" or not block.keys() <= _TEXT:
            return None
        if not isinstance(block.get("text"), str):
            return None
        blocks.append({"type": "text", "text": block["text"]})
    return blocks


_TEXT = frozenset({"type", "text", "id"})


class EndpointToolLoop(ToolLoopAgent):
    """A :class:`~.tool_loop.ToolLoopAgent` whose loop and model calls are its own (see the
    module docstring); same port, results and limits."""

    _wire: bool | None = None
    _spec: _Spec | None = None
    _target: Target | None = None

    async def arun(self, messages: Sequence[ChatMessage], config: AgentRunConfig) -> AgentResult:
        system = "\n\n".join(m.content for m in messages if m.role == "system") or None
        try:  # in LangChain's order: the tools, then the chat model
            tools = await self.tools(config)
            spec = self._tool_spec(tools) if self._speaks_wire() else None
        except LLMCallError:
            raise
        except Exception as exc:
            raise AgentError(config.call_kind, f"{type(exc).__name__}: {exc}") from None
        if spec is None:
            return await super().arun(messages, config)
        calls, _, seconds = model_limits(self.model)
        history: list[BaseMessage] = to_langchain([m for m in messages if m.role != "system"])
        limit_reached = timed_out = False
        try:
            async with asyncio.timeout(config.timeout or seconds):
                await self._loop(system, history, spec, config.max_turns or calls)
        except ModelCallLimitReached:
            limit_reached = True
        except TimeoutError:
            timed_out = True
        except LLMCallError:
            raise
        except Exception as exc:
            reason = f"{type(exc).__name__}: {exc}"
            partial = self._result({"messages": history})
            raise AgentError(config.call_kind, reason, partial=partial) from None
        return self._result(
            {"messages": history}, limit_reached=limit_reached, timeout_reached=timed_out
        )

    def _speaks_wire(self) -> bool:
        """Whether this model's requests are plain chat completions (decided once)."""
        if self._wire is None:
            from langchain_core.messages import HumanMessage

            from pytest_karenina.llm.agents.chat_model import lean_chat_openai

            model: Any = self.chat_model()
            given = type(model) is not lean_chat_openai()  # a model given to the agent
            if given:
                self._wire = False
                return False
            payload = model._get_request_payload([HumanMessage("")])
            self._wire = not (
                model.streaming or "response_format" in payload or model._use_responses_api(payload)
            )
        return self._wire

    def _tool_spec(self, tools: list[BaseTool]) -> _Spec:
        spec = self._spec
        if spec is None or spec.tools is not tools:
            spec = self._spec = _Spec(self.chat_model(), tools)
        return spec

    async def _loop(
        self, system: str | None, history: list[BaseMessage], spec: _Spec, limit: int
    ) -> None:
        """The agent loop, adding each finished step's messages to ``history``."""
        from langchain_core.messages import SystemMessage, ToolMessage

        _, tool_limit, _ = model_limits(self.model)
        prompt = [SystemMessage(system)] if system is not None else []
        sent = [spec.message(m) for m in [*prompt, *history]]
        made = tools_used = 0
        while True:
            if made >= limit:
                raise ModelCallLimitReached
            sent += [spec.message(m) for m in history[len(sent) - len(prompt) :]]
            reply = await self._model_call(sent, spec)
            made += 1
            history.append(reply)
            if not reply.tool_calls:
                return
            answered: set[Any] = set()
            for call in reply.tool_calls:
                if tool_limit is not None and tools_used + 1 > tool_limit:
                    history.append(ToolMessage(
                        REFUSED, tool_call_id=call["id"], name=call.get("name"), status="error"
                    ))  # fmt: skip
                    answered.add(call["id"])
                else:
                    tools_used += 1
            pending = [dict(c) for c in reply.tool_calls if c["id"] not in answered]
            if not pending:
                continue
            history.extend(await self._tool_calls(pending, spec))
            executed = [spec.by_name[c["name"]] for c in pending if c["name"] in spec.by_name]
            if executed and all(tool.return_direct for tool in executed):
                return

    async def _model_call(self, messages: list[dict[str, Any]], spec: _Spec) -> AIMessage:
        model: Any = spec.model

        async def call(_request: Any) -> AIMessage:
            body = orjson.dumps({**spec.fixed, "messages": messages})
            if self._target is None:  # made on the loop's thread: one pool per agent
                self._target = Target(self.model)
            target = self._target
            completion = await asyncio.get_running_loop().run_in_executor(None, post, target, body)
            message: AIMessage = model._create_chat_result(completion).generations[0].message
            return message

        if self.transport is None:
            return await call(None)
        reply: AIMessage = await self.transport.awrap_model_call(None, call)
        return reply

    async def _tool_calls(self, calls: list[dict[str, Any]], spec: _Spec) -> list[ToolMessage]:
        """The calls' results in order, run at once; the first failure fails them all."""
        tasks = [asyncio.ensure_future(self._tool_call(call, spec)) for call in calls]
        try:
            return list(await asyncio.gather(*tasks))
        except BaseException:
            for task in tasks:
                task.cancel()
            raise

    async def _tool_call(self, call: dict[str, Any], spec: _Spec) -> ToolMessage:
        from langchain_core.messages import ToolMessage

        tool = spec.by_name.get(call["name"])
        if tool is None:
            text = UNKNOWN_TOOL.format(
                requested_tool=call["name"], available_tools=", ".join(spec.by_name)
            )
            return ToolMessage(text, name=call["name"], tool_call_id=call["id"], status="error")

        async def run(_request: Any) -> ToolMessage:
            if _plain_mcp_tool(tool):
                return await _call_mcp_tool(tool, call)
            result: ToolMessage = await tool.ainvoke({**call, "type": "tool_call"})
            return result

        if self.transport is None:
            return await run(None)
        done: ToolMessage = await self.transport.awrap_tool_call(None, run)
        return done


def _plain_mcp_tool(tool: BaseTool) -> bool:
    """Whether ``tool`` is a ``langchain-mcp-adapters`` tool with nothing of LangChain's own
    around it (no callbacks, no argument model): :func:`_call_mcp_tool` can run it."""
    from langchain_core.tools import StructuredTool

    return (
        isinstance(tool, StructuredTool)
        and tool.coroutine is not None
        and tool.response_format == "content_and_artifact"
        and isinstance(tool.args_schema, dict)
        and not tool.callbacks
        and not tool.verbose
    )


async def _call_mcp_tool(tool: Any, call: dict[str, Any]) -> ToolMessage:
    """``tool.ainvoke(call)`` for a plain MCP tool without LangChain's callback machinery
    (per call it costs more than the rest of the call): the tool's coroutine, then the same
    ``ToolMessage`` its ``arun`` makes (an ``isError`` result through the tool's
    ``handle_tool_error``, any other failure raised)."""
    from langchain_core.tools import ToolException
    from langchain_core.tools.base import _format_output, _handle_tool_error

    try:
        content, artifact = await tool.coroutine(**call["args"])
        status = "success"
    except ToolException as exc:
        if not tool.handle_tool_error:
            raise
        content = _handle_tool_error(exc, flag=tool.handle_tool_error)
        artifact, status = None, "error"
    message: Any = _format_output(content, artifact, call["id"], tool.name, status)
    return cast("ToolMessage", message)
