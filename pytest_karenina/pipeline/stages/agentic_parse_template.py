"""Stage 7b, AgenticParseTemplate: a judge agent investigates, then its report is parsed.

Chosen instead of ParseTemplate when ``agentic_parsing`` is on (seed 004, section 3). Step 1:
the parsing model, a deep agent, investigates with read-only file tools rooted at the
answer's workspace (none with ``agentic_judge_context="trace_only"``), within
``agentic_parsing_max_turns`` and ``agentic_parsing_timeout``; a run that hits either limit
errors the item. Step 2: its final report goes through the classic parsing call into the
same relaxed template class, rebuilt with the ground truth. When that call fails, a JSON
object in the report itself is tried (``agentic_extraction_recovery="local_json"``).

Regex-only and trace-only templates need no judge, as in ParseTemplate.
"""

from __future__ import annotations

from pathlib import Path

from pytest_karenina.llm.agent_ports import AgentResult, AgentRunConfig
from pytest_karenina.llm.json_extract import JsonExtractionError, extract_json
from pytest_karenina.llm.ports import LLMCallError
from pytest_karenina.pipeline.artifacts import ArtifactKeys
from pytest_karenina.pipeline.context import VerificationContext
from pytest_karenina.pipeline.stage import BaseVerificationStage
from pytest_karenina.pipeline.stages.context_queries import (
    abstained,
    answer_class,
    config_value,
    judge_label,
    prompt_instructions,
    recursion_limited,
)
from pytest_karenina.pipeline.stages.parse_template import hints_for, parse_failed, store_parsed
from pytest_karenina.pipeline.workspace import prompt_path, write_new_file
from pytest_karenina.prompts import parsing_messages
from pytest_karenina.prompts.agentic_parsing import (
    EXTRACTION_TASK,
    INVESTIGATION_TASK,
    investigation_messages,
    report_text,
)
from pytest_karenina.results.trace import render_trace
from pytest_karenina.templates import BaseAnswer, template_mode
from pytest_karenina.templates.extraction import relaxed_class, relaxed_schema
from pytest_karenina.templates.judge_schema import shared_judge_schema

TRACE_FILE = ".karenina_answering_trace.txt"
"""Where ``agentic_parsing_materialize_trace`` writes the answering trace in the workspace."""


class AgenticParseTemplateStage(BaseVerificationStage):
    """Investigation by a judge agent, then extraction into the template."""

    @property
    def name(self) -> str:
        return "AgenticParseTemplate"

    @property
    def requires(self) -> list[str]:
        return [ArtifactKeys.RAW_ANSWER, ArtifactKeys.ANSWER, ArtifactKeys.RAW_LLM_RESPONSE]

    @property
    def produces(self) -> list[str]:
        return [
            ArtifactKeys.PARSED_ANSWER, ArtifactKeys.PARSING_MODEL_STR,
            ArtifactKeys.INVESTIGATION_TRACE, ArtifactKeys.AGENTIC_PARSING_PERFORMED,
            ArtifactKeys.DEEP_JUDGMENT_PERFORMED,
        ]  # fmt: skip

    def should_run(self, context: VerificationContext) -> bool:
        if not super().should_run(context) or not context.agentic_parsing:
            return False
        insufficient = context.get_artifact(ArtifactKeys.SUFFICIENCY_DETECTED) is False
        trace_failed = context.get_artifact(ArtifactKeys.TRACE_VALIDATION_FAILED) is True
        return not (
            recursion_limited(context) or abstained(context) or insufficient or trace_failed
        )

    def execute(self, context: VerificationContext) -> None:
        context.set_artifact(ArtifactKeys.DEEP_JUDGMENT_PERFORMED, False)  # never deep judgment
        cls = answer_class(context)
        mode = template_mode(cls)
        if mode in ("regex_only", "trace_only"):
            context.set_artifact(ArtifactKeys.PARSED_ANSWER, cls.model_construct())
            context.set_artifact(ArtifactKeys.PARSING_MODEL_STR, f"{mode} (no LLM)")
            return
        if context.judge_agent is None or context.judge_llm is None:
            raise RuntimeError("agentic parsing needs a deep-agent parsing model")
        raw_class: type[BaseAnswer] = context.get_artifact(ArtifactKeys.RAW_ANSWER)
        run = self._investigate(context, raw_class)
        if run is None:
            return
        trace = render_trace(run.trace_messages)
        for key, value in ((ArtifactKeys.INVESTIGATION_TRACE, trace),
                           (ArtifactKeys.AGENTIC_PARSING_PERFORMED, True)):  # fmt: skip
            context.set_artifact_and_result(key, value)
        context.set_artifact(ArtifactKeys.TEMPLATE_EVALUATOR, None)
        self._extract(context, cls, raw_class, run, trace)

    def _investigate(
        self, context: VerificationContext, raw_class: type[BaseAnswer]
    ) -> AgentResult | None:
        mode = context.agentic_judge_context
        workspace = None if mode == "trace_only" else context.workspace_path
        trace = context.get_artifact(ArtifactKeys.RAW_LLM_RESPONSE) or ""
        try:
            trace_file = self._materialized(context, workspace, trace, mode)
        except (OSError, RuntimeError) as exc:
            context.mark_error(f"Agentic parsing failed: the answering trace could not be "
                               f"written to the workspace: {exc}", self.name)  # fmt: skip
            return None
        shown = prompt_path(workspace, context.parsing_model.interface) if workspace else None
        messages = investigation_messages(
            context.question_text, shared_judge_schema(raw_class),
            trace=None if mode == "workspace_only" else trace, workspace=shown,
            trace_file=trace_file, instructions=prompt_instructions(context, INVESTIGATION_TASK),
        )  # fmt: skip
        config = AgentRunConfig(
            INVESTIGATION_TASK, question_id=context.question_id, workspace=workspace,
            max_turns=context.agentic_parsing_max_turns,
            timeout=context.agentic_parsing_timeout or None,
            read_only=True,
        )  # fmt: skip
        agent = context.judge_agent
        assert agent is not None
        try:
            run = agent.run(messages, config)
        except LLMCallError as exc:
            parse_failed(context, exc, self.name)
            return None
        finally:
            if trace_file is not None and workspace is not None:
                self._forget(context, workspace / trace_file)
        context.usage_tracker().record(INVESTIGATION_TASK, run.usage, judge_label(context))
        if run.limit_reached or run.timeout_reached:
            what = "turn limit" if run.limit_reached else "time limit"
            context.set_artifact_and_result(ArtifactKeys.INVESTIGATION_TRACE,
                                            render_trace(run.trace_messages))  # fmt: skip
            context.mark_error(f"Agentic parsing failed: the investigation hit its {what}",
                               self.name)  # fmt: skip
            return None
        return run

    def _extract(
        self,
        context: VerificationContext,
        cls: type[BaseAnswer],
        raw_class: type[BaseAnswer],
        run: AgentResult,
        trace: str,
    ) -> None:
        judge = context.judge_llm
        assert judge is not None
        messages = parsing_messages(
            context.question_text, report_text(run.final_response, trace),
            shared_judge_schema(raw_class), extraction_hints=hints_for(context, raw_class),
            instructions=prompt_instructions(context, EXTRACTION_TASK),
        )  # fmt: skip
        relaxed = relaxed_class(raw_class)
        try:
            reply = judge.parse(
                messages, relaxed, call_kind=EXTRACTION_TASK, json_schema=relaxed_schema(raw_class)
            )
        except LLMCallError as exc:
            try:
                recovered = relaxed.model_validate(extract_json(run.final_response))
            except (JsonExtractionError, ValueError):
                parse_failed(context, exc, self.name)
                return
            context.set_artifact_and_result(ArtifactKeys.AGENTIC_EXTRACTION_RECOVERY, "local_json")
            context.set_artifact_and_result(ArtifactKeys.AGENTIC_EXTRACTION_ERROR, exc.reason)
            store_parsed(context, cls, recovered)
            return
        context.usage_tracker().record(EXTRACTION_TASK, reply.usage, judge_label(context))
        store_parsed(context, cls, reply.value)

    @staticmethod
    def _materialized(
        context: VerificationContext, workspace: Path | None, trace: str, mode: str
    ) -> str | None:
        """With ``agentic_parsing_materialize_trace``, the trace goes to a workspace file and
        the judge is told its name instead of reading it inline. The file is created anew,
        never written through a link the workspace holds under that name."""
        wanted = bool(config_value(context, "agentic_parsing_materialize_trace", False))
        if not wanted or workspace is None or mode == "workspace_only":
            return None
        write_new_file(workspace, TRACE_FILE, trace)
        return TRACE_FILE

    @staticmethod
    def _forget(context: VerificationContext, path: Path) -> None:
        if not config_value(context, "agentic_parsing_persist_trace", False):
            path.unlink(missing_ok=True)
