"""Keeping secrets out of agent runs, as :class:`~...transport.RetryingModel` keeps them out
of plain replies.

Two layers. Inside a live run, :class:`~.transport_middleware.TransportMiddleware` scrubs each
model reply (its text, thinking and tool-call arguments) before the agent acts on it, and
each tool result before the model reads it (:func:`scrubbed_message`): a key the model repeats
never reaches a tool, and a key a tool returns never reaches the model or the trace. At the
port, :class:`ScrubbingAgent` scrubs every result and error an agent port returns, whatever
produced it (a live run, a replay entry recorded before, a custom agent).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from pytest_karenina.llm.agent_ports import AgentError, AgentPort, AgentResult, AgentRunConfig
from pytest_karenina.llm.errors import Scrubber
from pytest_karenina.llm.ports import ChatMessage, LLMCallError

_MESSAGE_FIELDS = (
    "content",
    "tool_calls",
    "invalid_tool_calls",
    "additional_kwargs",
    "response_metadata",
    "artifact",
)
"""The fields of a LangChain message that can carry model or tool text."""


def scrubbed_message(message: Any, scrubber: Scrubber) -> Any:
    """A copy of LangChain ``message`` with every secret in its text, tool calls and
    metadata replaced by ``***`` (``message`` itself when it holds none)."""
    update: dict[str, Any] = {}
    for name in _MESSAGE_FIELDS:
        value = getattr(message, name, None)
        if value is None:
            continue
        clean = scrubber.value(value)
        if clean != value:
            update[name] = clean
    return message.model_copy(update=update) if update else message


def scrubbed_output(output: Any, scrubber: Scrubber) -> Any:
    """A model call's or tool call's output (a message, a ``ModelResponse``, an
    ``ExtendedModelResponse``, a ``Command`` adding messages) with its messages scrubbed."""
    if not scrubber.values:
        return output
    if hasattr(output, "model_copy") and hasattr(output, "content"):
        return scrubbed_message(output, scrubber)
    if hasattr(output, "model_response"):  # ExtendedModelResponse
        inner = scrubbed_output(output.model_response, scrubber)
        return dataclasses.replace(output, model_response=inner)
    if hasattr(output, "result") and isinstance(output.result, list):  # ModelResponse
        messages = [scrubbed_output(m, scrubber) for m in output.result]
        return dataclasses.replace(output, result=messages)
    update = getattr(output, "update", None)  # Command
    if isinstance(update, dict) and isinstance(update.get("messages"), list):
        messages = [scrubbed_output(m, scrubber) for m in update["messages"]]
        return dataclasses.replace(output, update={**update, "messages": messages})
    return output


def scrubbed_result(result: AgentResult, scrubber: Scrubber) -> AgentResult:
    """``result`` with every secret in its answer and trace replaced by ``***``."""
    if not scrubber.values:
        return result
    return dataclasses.replace(
        result,
        final_response=scrubber.text(result.final_response),
        trace_messages=scrubber.value(result.trace_messages),
    )


def scrub_error(exc: LLMCallError, scrubber: Scrubber) -> None:
    """Scrub ``exc`` in place (its reason, message, raw text and partial trace), keeping its
    class and every other attribute (error class, attempts, retry counts)."""
    exc.reason = scrubber.text(exc.reason)
    exc.args = tuple(scrubber.value(list(exc.args)))
    if exc.raw_text is not None:
        exc.raw_text = scrubber.text(exc.raw_text)
    if isinstance(exc, AgentError) and exc.partial is not None:
        exc.partial = scrubbed_result(exc.partial, scrubber)


class ScrubbingAgent:
    """An :class:`~...agent_ports.AgentPort` whose results and errors hold no secret: the
    given ``secrets`` and the secret-named environment values (as when it was built)."""

    def __init__(self, inner: AgentPort, secrets: Sequence[str] = ()) -> None:
        self.inner = inner
        self.scrubber = Scrubber(secrets)

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()

    def run(self, messages: Sequence[ChatMessage], config: AgentRunConfig) -> AgentResult:
        try:
            result = self.inner.run(messages, config)
        except LLMCallError as exc:
            scrub_error(exc, self.scrubber)
            raise
        return scrubbed_result(result, self.scrubber)
