"""Stage 2, GenerateAnswer: ask the answering model the question."""

from __future__ import annotations

from typing import Any

from pytest_karenina.llm.ports import LLMCallError
from pytest_karenina.pipeline.artifacts import ArtifactKeys
from pytest_karenina.pipeline.context import VerificationContext
from pytest_karenina.pipeline.retries import note_llm_failure
from pytest_karenina.pipeline.stage import BaseVerificationStage
from pytest_karenina.pipeline.stages.context_queries import AI_HEADER, prompt_instructions
from pytest_karenina.prompts import generation_messages

CACHED_ANSWER = "cached_answer"
"""Artifact the runner sets to reuse an answer generated for another judge."""
GENERATED_ANSWER = "generated_answer"
"""Artifact this stage sets with what it generated, for the runner to share."""

ANSWER_ARTIFACTS = (
    ArtifactKeys.RAW_LLM_RESPONSE,
    ArtifactKeys.TRACE_MESSAGES,
    ArtifactKeys.CONVERSATION_CONTEXT,
    ArtifactKeys.RECURSION_LIMIT_REACHED,
    ArtifactKeys.AGENT_METRICS,
    ArtifactKeys.ANSWERING_MCP_SERVERS,
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
        cached = context.get_artifact(CACHED_ANSWER)
        if isinstance(cached, dict):
            for key in ANSWER_ARTIFACTS:
                context.set_artifact_and_result(key, cached.get(key))
            usage = cached.get("usage")
            if usage is not None:
                context.usage_tracker().record("answer_generation", usage, cached.get("model"))
            return
        if context.answering_llm is None:
            raise RuntimeError("no answering model is configured for this run")
        model = context.answering_model
        messages = generation_messages(
            context.question_text,
            system_prompt=model.system_prompt,
            few_shot_examples=context.few_shot_examples,
            instructions=prompt_instructions(context, "generation"),
        )
        try:
            reply = context.answering_llm.chat(messages, call_kind="answer_generation")
        except Exception as exc:
            note_llm_failure(context, exc)
            context.set_artifact_and_result(ArtifactKeys.RAW_LLM_RESPONSE, "")
            reason = exc.reason if isinstance(exc, LLMCallError) else f"{type(exc).__name__}: {exc}"
            context.mark_error(f"Adapter call failed: {reason}", self.name)
            return
        label = model.identity("answering").display_string
        context.usage_tracker().record("answer_generation", reply.usage, label)
        raw = reply.text if model.interface == "manual" else f"{AI_HEADER}\n{reply.text}"
        values: dict[str, Any] = {
            ArtifactKeys.RAW_LLM_RESPONSE: raw,
            ArtifactKeys.TRACE_MESSAGES: reply.trace_messages
            or [{"role": "assistant", "content": reply.text, "block_index": 0}],
            ArtifactKeys.CONVERSATION_CONTEXT: [
                {"role": m.role, "content": m.content, "block_index": i}
                for i, m in enumerate(messages)
            ],
            ArtifactKeys.RECURSION_LIMIT_REACHED: False,
            ArtifactKeys.AGENT_METRICS: {"iterations": 1, "limit_reached": False},
            ArtifactKeys.ANSWERING_MCP_SERVERS: None,
        }
        for key, value in values.items():
            context.set_artifact_and_result(key, value)
        context.set_artifact(GENERATED_ANSWER, {**values, "usage": reply.usage, "model": label})
