"""The chat model a ``claude_tool`` agent runs on: Anthropic's Messages API through the
``anthropic`` SDK, as a LangChain chat model.

The tool loop is LangChain's ``create_agent`` (:mod:`.tool_loop`), as for every other tool
loop: the same call and tool limits, transport middleware, partial traces and trace shape.
This model only turns one conversation into one streamed ``messages`` call and back:
LangChain messages into Anthropic's (tool calls as ``tool_use`` blocks, tool results as
``tool_result`` blocks in a user turn, thinking blocks passed back as they came) and the
reply into an ``AIMessage`` with ``tool_calls`` and ``usage_metadata``. Nothing is kept on
the server between calls (no SDK ``tool_runner``, no threads).

A reply calling a tool the model was not given ends the run with :class:`UnknownToolError`
naming it (not retried): the model is not told and left to guess again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, PrivateAttr

from pytest_karenina.llm.adapters.anthropic_wire import EMPTY_TURN, usage_of
from pytest_karenina.llm.adapters.claude_tool import (
    ClaudeAPIError,
    ClaudeSettings,
    TemperatureGuard,
    cut_short,
    import_anthropic,
    sdk_errors,
)
from pytest_karenina.results.trace import content_text

_ROLES = {"human": "user", "ai": "assistant", "tool": "user"}
_KEPT_BLOCKS = ("thinking", "redacted_thinking")


class UnknownToolError(Exception):
    """The model called a tool it was not given (not retried)."""


def anthropic_tool(tool: Any) -> dict[str, Any]:
    """A LangChain tool (or tool schema) as an Anthropic tool definition."""
    if isinstance(tool, dict) and "input_schema" in tool:
        return tool
    function = convert_to_openai_tool(tool)["function"]
    return {
        "name": function["name"],
        "description": function.get("description") or "",
        "input_schema": function.get("parameters") or {"type": "object", "properties": {}},
    }


def _tool_choice(choice: Any) -> dict[str, Any] | None:
    if choice in (None, "auto"):
        return None
    if choice in ("any", "required", True):
        return {"type": "any"}
    if choice == "none":
        return {"type": "none"}
    if isinstance(choice, str):
        return {"type": "tool", "name": choice}
    return dict(choice)


def _blocks(message: BaseMessage) -> list[dict[str, Any]]:
    """One LangChain message as Anthropic content blocks."""
    if isinstance(message, ToolMessage):
        return [
            {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id,
                "content": content_text(message.content) or "(no output)",
                "is_error": message.status == "error",
            }
        ]
    content = message.content
    kept = [
        dict(part)
        for part in (content if isinstance(content, list) else [])
        if isinstance(part, dict) and part.get("type") in _KEPT_BLOCKS
    ]
    text = content_text(content)
    blocks = [*kept, *([{"type": "text", "text": text}] if text else [])]
    if isinstance(message, AIMessage):
        blocks += [
            {"type": "tool_use", "id": call["id"], "name": call["name"], "input": call["args"]}
            for call in message.tool_calls
        ]
        if not blocks:
            blocks = [{"type": "text", "text": EMPTY_TURN}]
    return blocks or [{"type": "text", "text": " "}]


def to_anthropic(messages: Sequence[BaseMessage]) -> tuple[str | None, list[dict[str, Any]]]:
    """The ``system`` text and ``messages`` of a conversation, consecutive turns of one role
    merged (a turn's tool results become one user message)."""
    system: list[str] = []
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.type == "system":
            system.append(content_text(message.content))
            continue
        role = _ROLES.get(message.type, "user")
        blocks = _blocks(message)
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return ("\n\n".join(system) or None), turns


def _field(block: Any, name: str) -> Any:
    return getattr(block, name, None)


def to_ai_message(message: Any) -> AIMessage:
    """The SDK's reply as an ``AIMessage``: text content (thinking blocks kept as content
    blocks), ``tool_calls``, ``usage_metadata``."""
    text = "".join(str(_field(b, "text") or "") for b in message.content if b.type == "text")
    thinking = [b.model_dump() for b in message.content if b.type in _KEPT_BLOCKS]
    calls = [
        {"name": b.name, "args": dict(b.input or {}), "id": b.id, "type": "tool_call"}
        for b in message.content
        if b.type == "tool_use"
    ]
    usage = usage_of(message.usage)
    tokens_in, tokens_out = usage.input_tokens or 0, usage.output_tokens or 0
    content: Any = [*thinking, {"type": "text", "text": text}] if thinking else text
    return AIMessage(
        content=content,
        tool_calls=calls,
        id=message.id,
        usage_metadata={
            "input_tokens": tokens_in,
            "output_tokens": tokens_out,
            "total_tokens": tokens_in + tokens_out,
        },
        response_metadata={"model_name": message.model, "stop_reason": message.stop_reason},
    )


class ClaudeToolChat(BaseChatModel):
    """A LangChain chat model over the Messages API (see the module docstring)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    settings: ClaudeSettings
    where: str
    """Names the model and its server in errors."""
    _sync_client: Any = PrivateAttr(default=None)
    _guard: TemperatureGuard = PrivateAttr()
    _async_clients: dict[int, Any] = PrivateAttr(default_factory=dict)

    def model_post_init(self, context: Any) -> None:
        super().model_post_init(context)
        self._guard = TemperatureGuard(self.where)

    @property
    def _llm_type(self) -> str:
        return "claude_tool"

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any) -> Any:
        choice = _tool_choice(tool_choice)
        if choice is not None:
            kwargs["tool_choice"] = choice
        return self.bind(tools=[anthropic_tool(t) for t in tools], **kwargs)

    def _params(
        self, messages: Sequence[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]
    ) -> dict[str, Any]:
        system, turns = to_anthropic(messages)
        params = self.settings.params(system, turns)
        for name in ("tools", "tool_choice"):
            if kwargs.get(name):
                params[name] = kwargs[name]
        if stop:
            params["stop_sequences"] = stop
        if self.settings.timeout is not None:
            params["timeout"] = self.settings.timeout
        return params

    def _result(self, message: Any, params: dict[str, Any]) -> ChatResult:
        problem = cut_short(message.stop_reason, self.where)
        if problem is not None:
            raise problem
        given = {tool["name"] for tool in params.get("tools") or []}
        for block in message.content:
            if block.type == "tool_use" and block.name not in given:
                offered = ", ".join(sorted(given)) or "none"
                raise UnknownToolError(
                    f"{self.where} called tool {block.name!r}, which it was not given "
                    f"(its tools: {offered})"
                )
        return ChatResult(generations=[ChatGeneration(message=to_ai_message(message))])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        params = self._params(messages, stop, kwargs)
        try:
            message = self._call_api(self._guard.applied(params))
        except ClaudeAPIError as exc:
            if not self._guard.refuses(exc, params):
                raise
            message = self._call_api(self._guard.applied(params))
        return self._result(message, params)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        params = self._params(messages, stop, kwargs)
        try:
            message = await self._acall_api(self._guard.applied(params))
        except ClaudeAPIError as exc:
            if not self._guard.refuses(exc, params):
                raise
            message = await self._acall_api(self._guard.applied(params))
        return self._result(message, params)

    def _call_api(self, params: dict[str, Any]) -> Any:
        if self._sync_client is None:
            self._sync_client = import_anthropic().Anthropic(**self.settings.client_options())
        with sdk_errors(self.where), self._sync_client.messages.stream(**params) as stream:
            stream.until_done()
            return stream.get_final_message()

    async def _acall_api(self, params: dict[str, Any]) -> Any:
        with sdk_errors(self.where):
            async with self._async_client().messages.stream(**params) as stream:
                await stream.until_done()
                return await stream.get_final_message()

    def _async_client(self) -> Any:
        """The async client of the running loop (a client's connections belong to one loop)."""
        loop = id(asyncio.get_running_loop())
        client = self._async_clients.get(loop)
        if client is None:
            options = self.settings.client_options()
            client = self._async_clients[loop] = import_anthropic().AsyncAnthropic(**options)
        return client


def claude_chat_model(model: Any) -> ClaudeToolChat:
    """The chat model of a ``claude_tool`` model (raises when its key or the SDK is missing)."""
    import_anthropic()
    settings = ClaudeSettings.of(model)
    return ClaudeToolChat(
        settings=settings,
        where=f"claude_tool model {model.model_name!r} at {settings.shown_url}",
    )
