"""Stage 2, GenerateAnswer: ask the answering model the question.

A model with MCP servers or a deep-agent interface answers through its agent port (seed 004,
section 1): the whole conversation is kept (``trace_messages``, rendered as the raw
response), with ``agent_metrics``, whether the run hit its call limit
(``recursion_limit_reached``, which stage 3 turns into a failure) and the MCP servers used.
A run stopped by its time limit keeps its partial trace (``response_timeout_partial``): with
``allow_partial_trace_scoring`` (the default) that trace is judged like any answer, with a
warning; without it, or when the agent never replied, the item errors (category
``timeout``). Other models answer in one call.

A failing call errors the item; its exception's type, message and traceback (secrets
redacted) go to ``metadata.failure.details`` (the :data:`ERROR_DETAILS` artifact).

With ``agentic_parsing``, or agentic rubric traits that read it, the stage first resolves the
answer's workspace (seed 004, section 2; :mod:`..workspace`), tells an answering agent where
it is (a plain model, which could not use it, is not told), and roots the agent's file tools
there.
"""

from __future__ import annotations

import traceback
from typing import Any

from pytest_karenina.llm.agent_ports import AgentError, AgentResult, AgentRunConfig
from pytest_karenina.llm.errors import env_secrets, redact
from pytest_karenina.llm.ports import ChatMessage, LLMCallError
from pytest_karenina.pipeline.artifacts import ArtifactKeys
from pytest_karenina.pipeline.context import VerificationContext
from pytest_karenina.pipeline.llm_stack import model_secrets
from pytest_karenina.pipeline.retries import TIME_BUDGET_SPENT, note_llm_failure
from pytest_karenina.pipeline.stage import BaseVerificationStage
from pytest_karenina.pipeline.stages.context_queries import (
    AI_HEADER,
    config_value,
    prompt_instructions,
)
from pytest_karenina.pipeline.workspace import WorkspaceSlot, prompt_path
from pytest_karenina.prompts import generation_messages
from pytest_karenina.results.agent_metrics import agent_metrics
from pytest_karenina.results.trace import render_trace

CACHED_ANSWER = "cached_answer"
"""Artifact the runner sets to reuse an answer generated for another judge."""
GENERATED_ANSWER = "generated_answer"
"""Artifact this stage sets with what it generated, for the runner to share."""
CONVERSATION_HISTORY = "conversation_history"
"""Artifact: a scenario turn's earlier messages (``ChatMessage`` s), sent before the question."""
ERROR_DETAILS = "error_details"
"""Artifact: ``{exception_type, exception_message, traceback}`` of the exception that failed
the answering call, secrets redacted; FinalizeResult adds it to ``metadata.failure.details``."""
PARTIAL_WARNING = (
    "the answering agent did not finish within its time limit ({calls} model calls made): "
    "judged on its partial trace (allow_partial_trace_scoring)"
)

ANSWER_ARTIFACTS = (
    ArtifactKeys.RAW_LLM_RESPONSE,
    ArtifactKeys.TRACE_MESSAGES,
    ArtifactKeys.CONVERSATION_CONTEXT,
    ArtifactKeys.RECURSION_LIMIT_REACHED,
    ArtifactKeys.RESPONSE_TIMEOUT_PARTIAL,
    ArtifactKeys.AGENT_METRICS,
    ArtifactKeys.ANSWERING_MCP_SERVERS,
)
USAGE_KEY = "answer_generation"
WORKSPACE_SLOT = "workspace_slot"
"""Artifact: the answer group's :class:`~..workspace.WorkspaceSlot` (agentic parsing)."""
WORKSPACE_NOTE = (
    "\n\nWorkspace directory: {path}\n"
    "The files of this task are in that directory; put any files you produce there as well."
)


class GenerateAnswerStage(BaseVerificationStage):
    """Calls the answering model (or reuses the answer cached for this question,
    answering model and replicate) and records the trace."""

    @property
    def name(self) -> str:
        return "GenerateAnswer"

    @property
    def produces(self) -> list[str]:
        return [ArtifactKeys.RAW_LLM_RESPONSE, ArtifactKeys.TRACE_MESSAGES]

    def execute(self, context: VerificationContext) -> None:
        slot = context.get_artifact(WORKSPACE_SLOT)
        if isinstance(slot, WorkspaceSlot):
            workspace = slot.get(context)  # RuntimeError (no root, missing source): item errors
            context.workspace_path = workspace.path
            context.workspace_is_copy = workspace.is_copy
            context.set_artifact(ArtifactKeys.WORKSPACE_PATH, workspace.path)
        cached = context.get_artifact(CACHED_ANSWER)
        if isinstance(cached, dict):
            for key in ANSWER_ARTIFACTS:
                if key in cached:
                    context.set_artifact_and_result(key, cached[key])
            usage = cached.get("usage")
            if usage is not None:
                context.usage_tracker().record(USAGE_KEY, usage, cached.get("model"))
            if cached.get(ArtifactKeys.RESPONSE_TIMEOUT_PARTIAL):
                self._timed_out(context, cached.get(ArtifactKeys.AGENT_METRICS) or {})
            return
        model = context.answering_model
        messages = generation_messages(
            context.question_text,
            system_prompt=model.system_prompt,
            few_shot_examples=context.few_shot_examples,
            instructions=prompt_instructions(context, "generation"),
            history=context.get_artifact(CONVERSATION_HISTORY) or (),
        )
        # Only an agent can use the workspace; a plain model's prompt would just change with
        # the copy's name on every run (and so the key of its recorded reply).
        if context.workspace_path is not None and context.answering_agent is not None:
            note = WORKSPACE_NOTE.format(path=prompt_path(context.workspace_path, model.interface))
            last = messages[-1]
            messages[-1] = ChatMessage(last.role, last.content + note)
        if context.answering_agent is not None:
            self._as_agent(context, messages)
            return
        if context.answering_llm is None:
            raise RuntimeError("no answering model is configured for this run")
        try:
            reply = context.answering_llm.chat(messages, call_kind=USAGE_KEY)
        except Exception as exc:
            self._failed(context, exc)
            return
        label = model.identity("answering").display_string
        context.usage_tracker().record(USAGE_KEY, reply.usage, label)
        recorded = reply.trace_messages  # a manual model's recorded conversation
        raw = reply.text if model.interface == "manual" else f"{AI_HEADER}\n{reply.text}"
        trace = recorded or [{"role": "assistant", "content": reply.text, "block_index": 0}]
        metrics = agent_metrics(trace) if recorded else {"iterations": 1, "limit_reached": False}
        self._store(context, messages, raw, trace, metrics, usage=reply.usage, label=label)

    def _as_agent(self, context: VerificationContext, messages: list[ChatMessage]) -> None:
        model = context.answering_model
        agent = context.answering_agent
        assert agent is not None
        label = model.identity("answering").display_string
        config = AgentRunConfig(
            USAGE_KEY, question_id=context.question_id, workspace=context.workspace_path
        )
        try:
            result = agent.run(messages, config)
        except AgentError as exc:
            if exc.partial is not None:
                self._store_run(context, messages, exc.partial, label)
            self._failed(context, exc)
            return
        except Exception as exc:
            self._failed(context, exc)
            return
        self._store_run(context, messages, result, label)
        if result.timeout_reached:
            self._timed_out(context, context.get_artifact(ArtifactKeys.AGENT_METRICS) or {})

    def _timed_out(self, context: VerificationContext, metrics: dict[str, Any]) -> None:
        calls = metrics.get("iterations", 0)
        trace = context.get_artifact(ArtifactKeys.TRACE_MESSAGES) or []
        replied = any(isinstance(m, dict) and m.get("role") == "assistant" for m in trace)
        scoring = bool(config_value(context, "allow_partial_trace_scoring", True))
        if scoring and replied:
            context.warnings.append(PARTIAL_WARNING.format(calls=calls))
            return
        why = "no reply to judge" if scoring else "not judged: allow_partial_trace_scoring is off"
        context.set_artifact(TIME_BUDGET_SPENT, True)  # failure category: timeout
        context.mark_error(
            "Adapter call failed: the answering agent did not finish within its time limit "
            f"({calls} model calls made; the partial trace is kept, {why})",
            self.name,
        )

    def _store_run(
        self,
        context: VerificationContext,
        messages: list[ChatMessage],
        result: AgentResult,
        label: str,
    ) -> None:
        context.usage_tracker().record(USAGE_KEY, result.usage, label)
        trace = result.trace_messages
        metrics = agent_metrics(trace, limit_reached=result.limit_reached)
        self._store(
            context, messages, render_trace(trace), trace, metrics, usage=result.usage,
            label=label, limit_reached=result.limit_reached, timed_out=result.timeout_reached,
        )  # fmt: skip

    def _store(
        self,
        context: VerificationContext,
        messages: list[ChatMessage],
        raw: str,
        trace: list[dict[str, Any]],
        metrics: dict[str, Any],
        *,
        usage: Any,
        label: str,
        limit_reached: bool = False,
        timed_out: bool = False,
    ) -> None:
        servers = context.answering_model.mcp_urls_dict
        values: dict[str, Any] = {
            ArtifactKeys.RAW_LLM_RESPONSE: raw,
            ArtifactKeys.TRACE_MESSAGES: trace,
            ArtifactKeys.CONVERSATION_CONTEXT: [
                {"role": m.role, "content": m.content, "block_index": i}
                for i, m in enumerate(messages)
            ],
            ArtifactKeys.RECURSION_LIMIT_REACHED: limit_reached,
            ArtifactKeys.RESPONSE_TIMEOUT_PARTIAL: timed_out,
            ArtifactKeys.AGENT_METRICS: metrics,
            ArtifactKeys.ANSWERING_MCP_SERVERS: sorted(servers) if servers else None,
        }
        for key, value in values.items():
            context.set_artifact_and_result(key, value)
        context.set_artifact(GENERATED_ANSWER, {**values, "usage": usage, "model": label})

    def _failed(self, context: VerificationContext, exc: Exception) -> None:
        note_llm_failure(context, exc)
        if not context.has_artifact(ArtifactKeys.RAW_LLM_RESPONSE):
            context.set_artifact_and_result(ArtifactKeys.RAW_LLM_RESPONSE, "")
        reason = exc.reason if isinstance(exc, LLMCallError) else f"{type(exc).__name__}: {exc}"
        secrets = [*model_secrets(context.answering_model), *env_secrets()]
        if context.error is None:
            context.set_artifact(ERROR_DETAILS, exception_details(exc, secrets))
        context.mark_error(f"Adapter call failed: {redact(reason, secrets)}", self.name)


def exception_details(exc: BaseException, secrets: list[str]) -> dict[str, str]:
    """The type, message and formatted traceback of ``exc`` (its cause chain included),
    every ``secrets`` value and credential-looking span replaced by ``***``."""
    return {
        "exception_type": type(exc).__name__,
        "exception_message": redact(str(exc), secrets),
        "traceback": redact("".join(traceback.format_exception(exc)), secrets),
    }
