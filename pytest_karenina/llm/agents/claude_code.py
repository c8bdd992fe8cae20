"""``claude_agent_sdk``: the Claude Code CLI as a deep agent, through ``claude-agent-sdk``.

Each run starts the CLI (the ``claude`` executable the package bundles, or the model's
``extra_kwargs.cli_path``) with the tools, permissions, directories and environment of
:mod:`.claude_code_setup`, sends it the conversation as one prompt (the system turns as its
system prompt), and reads its messages until its result. The CLI runs the agent loop and
calls the model itself (streaming, with its own retries); its messages become the run's
trace and usage (:mod:`.claude_code_trace`).

Limits, as for the other agents:

* model calls: ``max_turns`` of the run, else ``agent_middleware.limits.model_call_limit``
  (25), is the CLI's ``--max-turns``: the run ends with ``limit_reached`` when the model
  would need one more call;
* tool calls: past ``tool_call_limit`` (50) each call is refused to the model (a
  ``PreToolUse`` hook), which can still answer;
* time: past the run's ``timeout``, else ``agent_timeout`` (180 s), the CLI is interrupted
  (it then reports what the run did, usage included) and the run returns its partial trace
  with ``timeout_reached``; a CLI that does not stop within :data:`GRACE` seconds is killed.
  A CLI that has not started within the time limit is an error.

A run holds one of the model's concurrency slots while it lasts (its model calls are one at
a time) and takes one start of its pacing. A run that cannot be made (no key, no CLI, the
CLI failing or exiting, the API failing after the CLI's retries) raises :class:`AgentError`
naming the model, with the partial trace; only its question errors.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_karenina.llm.adapters.identity import config_identity
from pytest_karenina.llm.agent_ports import AgentError, AgentResult, AgentRunConfig, model_limits
from pytest_karenina.llm.agents.claude_code_setup import (
    ClaudeCodeSetupError,
    RunPlace,
    cli_path,
    process_environ,
    run_environment,
    tool_settings,
)
from pytest_karenina.llm.agents.claude_code_trace import (
    TOOL_LIMIT_REFUSAL,
    run_usage,
    trace_messages,
)
from pytest_karenina.llm.agents.event_loop import SHARED_LOOP, AgentEventLoop
from pytest_karenina.llm.agents.trace_convert import final_answer
from pytest_karenina.llm.limits import ConcurrencyLimiter, RateLimiter
from pytest_karenina.llm.ports import ChatMessage
from pytest_karenina.llm.transport import model_limiter_key

if TYPE_CHECKING:
    from pytest_karenina.config.model import ModelConfig

GRACE = 5.0
"""Seconds an interrupted CLI gets to report its result, and a stopped one to exit."""
POLL = 0.05
"""Seconds between looks for the CLI's process while it starts."""
STDERR_LINES = 20
"""Lines of the CLI's error output an error message quotes (the last ones)."""


def prompt_text(messages: Sequence[ChatMessage]) -> tuple[str | None, str]:
    """``(system prompt, prompt)``: the system turns, and the other turns as one prompt (an
    assistant turn, which a conversation replayed to the CLI may hold, marked as such)."""
    system = "\n\n".join(m.content for m in messages if m.role == "system") or None
    turns = [m for m in messages if m.role != "system"]
    if len(turns) == 1:
        return system, turns[0].content
    return system, "\n\n".join(
        m.content if m.role == "user" else f"[assistant]\n{m.content}" for m in turns
    )


@dataclass
class _RunState:
    """What a run saw: the CLI's messages, the calls the tool limit refused, its errors."""

    tool_limit: int
    messages: list[Any] = field(default_factory=list)
    refused: set[str] = field(default_factory=set)
    calls: int = 0
    stderr: deque[str] = field(default_factory=lambda: deque(maxlen=STDERR_LINES))
    process: Any = None
    """The CLI's process, once started (for its exit status)."""

    async def limit_tools(self, data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        self.calls += 1
        if self.calls <= self.tool_limit:
            return {}
        self.refused.add(str(tool_use_id or data.get("tool_use_id")))
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                       "permissionDecision": "deny",
                                       "permissionDecisionReason": TOOL_LIMIT_REFUSAL}}  # fmt: skip


class ClaudeCodeAgent:
    """An :class:`~...agent_ports.AgentPort` running the Claude Code CLI."""

    def __init__(
        self,
        model: ModelConfig,
        *,
        limiter: ConcurrencyLimiter | None = None,
        rate_limiter: RateLimiter | None = None,
        loop: AgentEventLoop = SHARED_LOOP,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.model = model
        self.limiter = limiter or ConcurrencyLimiter(model.max_concurrent_requests)
        self.rate_limiter = rate_limiter or RateLimiter(model.requests_per_minute)
        self.loop = loop
        self.environ = environ
        self.key = model_limiter_key(config_identity(model))

    @property
    def label(self) -> str:
        return f"claude_agent_sdk model {self.model.id!r}"

    def run(self, messages: Sequence[ChatMessage], config: AgentRunConfig) -> AgentResult:
        environ = self.environ if self.environ is not None else process_environ()
        calls, tools, seconds = model_limits(self.model)
        system, prompt = prompt_text(messages)
        place = RunPlace.make(config.workspace, environ)
        try:
            state = _RunState(tools)
            try:
                options = self._options(system, config, place, state, calls, environ)
            except ClaudeCodeSetupError as exc:
                raise AgentError(config.call_kind, f"{self.label}: {exc}") from None
            with self.limiter.acquire(self.key):
                self.rate_limiter.wait_turn(self.key)
                run = self._arun(prompt, options, state, config, config.timeout or seconds)
                return self.loop.run(run)
        finally:
            place.remove()

    def _options(
        self,
        system: str | None,
        config: AgentRunConfig,
        place: RunPlace,
        state: _RunState,
        calls: int,
        environ: Mapping[str, str],
    ) -> Any:
        sdk = importlib.import_module("claude_agent_sdk")
        return sdk.ClaudeAgentOptions(
            **tool_settings(self.model, config.read_only),
            system_prompt=system or "",
            model=self.model.model_name,
            cwd=str(place.cwd),
            max_turns=config.max_turns or calls,
            env=run_environment(self.model, place.config_dir, environ),
            extra_args={"no-session-persistence": None},
            cli_path=cli_path(self.model),
            hooks={"PreToolUse": [sdk.HookMatcher(hooks=[state.limit_tools])]},
            stderr=state.stderr.append,
        )

    async def _arun(
        self, prompt: str, options: Any, state: _RunState, config: AgentRunConfig, seconds: float
    ) -> AgentResult:
        sdk = importlib.import_module("claude_agent_sdk")
        client = sdk.ClaudeSDKClient(options)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        timed_out = False
        try:
            try:
                await self._connect(client, seconds, state)
                await client.query(prompt)
            except TimeoutError:
                raise self._error(config, state, f"the Claude Code CLI did not start within "
                                  f"{seconds:g} s; it was stopped") from None  # fmt: skip
            except Exception as exc:
                why = self._failure(exc, await _exit_status(state.process))
                raise self._error(config, state, why) from None
            drain = asyncio.ensure_future(self._drain(client, state))
            done, _ = await asyncio.wait([drain], timeout=max(0.0, deadline - loop.time()))
            if not done:
                timed_out = True
                await self._interrupt(client, drain)
            elif drain.exception() is not None:
                why = self._failure(drain.exception(), await _exit_status(state.process))
                raise self._error(config, state, why)
        finally:
            await self._disconnect(client)
        return self._result(config, state, timed_out)

    @staticmethod
    async def _connect(client: Any, seconds: float, state: _RunState) -> None:
        """Start the CLI, noting its process as soon as there is one (the SDK forgets it
        when the start fails); one that has not answered its start-up request within
        ``seconds`` is killed (cancelling the start would first give it the SDK's grace to
        exit)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        start = asyncio.ensure_future(client.connect())
        while not start.done() and loop.time() < deadline:
            await asyncio.wait([start], timeout=min(POLL, max(0.0, deadline - loop.time())))
            state.process = state.process or _process(client)
        if not start.done():
            _kill(client)
            done, _ = await asyncio.wait([start], timeout=GRACE)
            if not done:
                start.cancel()
            await asyncio.gather(start, return_exceptions=True)
            raise TimeoutError
        start.result()

    @staticmethod
    async def _drain(client: Any, state: _RunState) -> None:
        async for message in client.receive_response():
            state.messages.append(message)

    @staticmethod
    async def _interrupt(client: Any, drain: asyncio.Future[None]) -> None:
        """Ask the CLI to stop (it then reports its result); kill it if it does not."""
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.interrupt(), GRACE)
        done, _ = await asyncio.wait([drain], timeout=GRACE)
        if not done:
            _kill(client)
            drain.cancel()
        await asyncio.gather(drain, return_exceptions=True)

    @staticmethod
    async def _disconnect(client: Any) -> None:
        try:
            await asyncio.wait_for(client.disconnect(), 2 * GRACE)
        except Exception:
            _kill(client)

    def _result(self, config: AgentRunConfig, state: _RunState, timed_out: bool) -> AgentResult:
        ended = next((m for m in reversed(state.messages)
                      if type(m).__name__ == "ResultMessage"), None)  # fmt: skip
        subtype = str(getattr(ended, "subtype", "") or "")
        limit = subtype == "error_max_turns"
        if ended is not None and getattr(ended, "is_error", False) and not (limit or timed_out):
            raise self._error(config, state, _result_failure(ended), quote_stderr=False)
        trace = trace_messages(state.messages, frozenset(state.refused))
        text = getattr(ended, "result", None) if subtype == "success" else None
        return AgentResult(
            final_response=text if isinstance(text, str) and text else final_answer(trace),
            trace_messages=trace,
            usage=run_usage(state.messages),
            turns=sum(1 for m in trace if m["role"] == "assistant"),
            limit_reached=limit,
            timeout_reached=timed_out,
            model=self.model.model_name,
        )

    @staticmethod
    def _failure(exc: BaseException | None, status: int | None) -> str:
        kind = type(exc).__name__
        if kind == "CLINotFoundError":
            return f"the Claude Code CLI was not found ({str(exc).splitlines()[0]})"
        status = getattr(exc, "exit_code", None) or status
        if status:
            return f"the Claude Code CLI failed: it exited with status {status}"
        first = str(exc).split("\nError output:")[0].strip()
        return f"the Claude Code CLI failed: {kind}: {first}"

    def _error(
        self, config: AgentRunConfig, state: _RunState, what: str, *, quote_stderr: bool = True
    ) -> AgentError:
        lines = [line.strip() for line in state.stderr if line.strip()] if quote_stderr else []
        said = f" (its error output: {' | '.join(lines[-3:])})" if lines else ""
        trace = trace_messages(state.messages, frozenset(state.refused))
        partial = AgentResult(
            final_response=final_answer(trace), trace_messages=trace,
            usage=run_usage(state.messages), model=self.model.model_name,
        )  # fmt: skip
        return AgentError(config.call_kind, f"{self.label}: {what}{said}", partial=partial)


def _result_failure(result: Any) -> str:
    """What a failed run's result says: the API's error and status, or the CLI's errors."""
    status = getattr(result, "api_error_status", None)
    text = getattr(result, "result", None) or "; ".join(getattr(result, "errors", None) or [])
    text = str(text or getattr(result, "subtype", "") or "no result").strip()
    return f"the run failed: {text}" + (f" (HTTP {status})" if status else "")


def _process(client: Any) -> Any:
    """The CLI process the SDK's transport holds (None when there is none, or when the SDK
    keeps it elsewhere: the SDK does not expose it)."""
    return getattr(getattr(client, "_transport", None), "_process", None)


async def _exit_status(process: Any) -> int | None:
    """The CLI's exit status once it has exited (waiting a moment for it), else None."""
    if process is None:
        return None
    with contextlib.suppress(Exception):
        await asyncio.wait_for(process.wait(), 1.0)
    status = getattr(process, "returncode", None)
    return status if isinstance(status, int) else None


def _kill(client: Any) -> None:
    """Kill the CLI process, if the SDK's transport still holds a running one (best effort:
    the SDK does not expose its process)."""
    process = _process(client)
    if process is not None and getattr(process, "returncode", 0) is None:
        with contextlib.suppress(ProcessLookupError, OSError):
            process.kill()
