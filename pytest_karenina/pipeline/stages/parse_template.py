"""Stage 7, ParseTemplate: the judge fills in the template from the answer.

Besides the parsed answer it leaves the deep-judgment artifacts (seed 002) for later stages:
``deep_judgment_performed`` and, with deep judgment, the per-attribute excerpts and
reasoning and the rest of the ``deep_judgment`` section's values.
"""

from __future__ import annotations

from typing import Any

from pytest_karenina.llm.ports import LLMCallError
from pytest_karenina.pipeline.artifacts import ArtifactKeys
from pytest_karenina.pipeline.context import VerificationContext
from pytest_karenina.pipeline.deep_judgment.calls import ExcerptSettings
from pytest_karenina.pipeline.deep_judgment.search import resolve_search_tool
from pytest_karenina.pipeline.deep_judgment.template import (
    DEEP_JUDGMENT,
    NOT_PERFORMED,
    TemplateDeepJudgment,
    deep_judgment_artifacts,
    deep_parse,
)
from pytest_karenina.pipeline.retries import note_llm_failure
from pytest_karenina.pipeline.stage import BaseVerificationStage
from pytest_karenina.pipeline.stages.context_queries import (
    abstained,
    answer_class,
    config_value,
    evaluation_input,
    judge_label,
    prompt_instructions,
    recursion_limited,
    template_seconds,
)
from pytest_karenina.prompts import parsing_messages
from pytest_karenina.prompts.deep_judgment import (
    EXCERPT_TASK,
    HALLUCINATION_TASK,
    REASONING_ONLY_TASK,
    REASONING_TASK,
)
from pytest_karenina.templates import BaseAnswer, template_mode
from pytest_karenina.templates.extraction import relaxed_class, relaxed_schema, strict_rebuild
from pytest_karenina.templates.judge_schema import shared_judge_schema
from pytest_karenina.templates.time_limit import time_limit

JUDGE_RAW_OUTPUT = "judge_raw_output"
"""Artifact with the judge's unreadable reply when parsing failed."""


class ParseTemplateStage(BaseVerificationStage):
    """Turns the answer into an instance of the template.

    Regex-only and trace-only templates need no judge. Otherwise the judge sees
    the question, the answer (its final AI message unless configured otherwise)
    and :func:`judge_schema`, never the ground truth. A reply that cannot be
    read is a fatal parse error; the raw reply is kept.
    """

    @property
    def name(self) -> str:
        return "ParseTemplate"

    @property
    def requires(self) -> list[str]:
        return [ArtifactKeys.ANSWER, ArtifactKeys.RAW_LLM_RESPONSE]

    @property
    def produces(self) -> list[str]:
        return [ArtifactKeys.PARSED_ANSWER, ArtifactKeys.PARSING_MODEL_STR, *NOT_PERFORMED]

    def should_run(self, context: VerificationContext) -> bool:
        if not super().should_run(context):
            return False
        insufficient = context.get_artifact(ArtifactKeys.SUFFICIENCY_DETECTED) is False
        trace_failed = context.get_artifact(ArtifactKeys.TRACE_VALIDATION_FAILED) is True
        return not (
            recursion_limited(context) or abstained(context) or insufficient or trace_failed
        )

    def execute(self, context: VerificationContext) -> None:
        cls = answer_class(context)
        mode = template_mode(cls)
        if mode in ("regex_only", "trace_only"):
            context.set_artifact(ArtifactKeys.PARSED_ANSWER, cls.model_construct())
            context.set_artifact(ArtifactKeys.PARSING_MODEL_STR, f"{mode} (no LLM)")
            store_deep_judgment(context, None)
            return
        if context.judge_llm is None:
            raise RuntimeError("no parsing model is configured for this run")
        full_trace = bool(config_value(context, "use_full_trace_for_template", False))
        text, used_full = evaluation_input(context, full_trace)
        context.set_artifact_and_result(ArtifactKeys.USED_FULL_TRACE, used_full)
        context.set_artifact_and_result(ArtifactKeys.EVALUATION_INPUT, text if used_full else None)
        raw_class = context.get_artifact(ArtifactKeys.RAW_ANSWER)
        dj_mode = str(config_value(context, "deep_judgment_mode", "disabled") or "disabled")
        if dj_mode != "disabled":
            self._deep_parse(context, cls, raw_class, text, dj_mode)
            return
        messages = parsing_messages(
            context.question_text,
            text,
            shared_judge_schema(raw_class),
            extraction_hints=hints_for(context, raw_class),
            instructions=prompt_instructions(context, "parsing"),
        )
        try:
            reply = context.judge_llm.parse(
                messages,
                relaxed_class(raw_class),
                call_kind="parsing",
                json_schema=relaxed_schema(raw_class),
            )
        except LLMCallError as exc:
            self._failed(context, exc)
            return
        context.usage_tracker().record("parsing", reply.usage, judge_label(context))
        store_parsed(context, cls, reply.value)
        store_deep_judgment(context, None)

    def _failed(self, context: VerificationContext, exc: LLMCallError) -> None:
        parse_failed(context, exc, self.name)

    def _deep_parse(
        self,
        context: VerificationContext,
        cls: type[BaseAnswer],
        raw_class: type[BaseAnswer],
        text: str,
        mode: str,
    ) -> None:
        """Template deep judgment in place of the single parsing call."""
        judge, chat = context.judge_llm, context.judge_chat
        if judge is None or chat is None:
            raise RuntimeError("deep judgment needs a parsing model")
        settings = ExcerptSettings(
            max_excerpts=int(config_value(context, "deep_judgment_max_excerpts_per_attribute", 3)),
            threshold=float(config_value(context, "deep_judgment_fuzzy_match_threshold", 0.8)),
            retry_attempts=int(config_value(context, "deep_judgment_excerpt_retry_attempts", 2)),
        )
        tasks = (EXCERPT_TASK, HALLUCINATION_TASK, REASONING_TASK, REASONING_ONLY_TASK, "parsing")
        search = None
        if mode == "full" and config_value(context, "deep_judgment_search_enabled", False):
            search = resolve_search_tool(config_value(context, "deep_judgment_search_tool", None))
        outcome = TemplateDeepJudgment(mode=mode, threshold=settings.threshold)
        failed: LLMCallError | None = None
        try:
            deep_parse(
                chat, judge, context.question_text, text, raw_class, relaxed_class(raw_class),
                mode=mode, settings=settings, extraction_schema=relaxed_schema(raw_class),
                extraction_hints=hints_for(context, raw_class),
                instructions={task: prompt_instructions(context, task) for task in tasks},
                search=search, outcome=outcome,
            )  # fmt: skip
        except LLMCallError as exc:
            failed = exc
        for key, usage in outcome.calls.usage.items():
            context.usage_tracker().record(key, usage, judge_label(context))
        context.warnings.extend(outcome.warnings)
        context.set_artifact(DEEP_JUDGMENT, outcome)  # after a failure too: its calls count
        if failed is not None:
            self._failed(context, failed)
            return
        store_parsed(context, cls, outcome.reply)
        store_deep_judgment(context, outcome)


def store_parsed(context: VerificationContext, cls: type[BaseAnswer], reply: Any) -> None:
    """The judge's (relaxed) reply rebuilt as the template, ground truth included."""
    with time_limit(template_seconds(context), "building the answer (ground truth)"):
        parsed: BaseAnswer = strict_rebuild(cls, reply.model_dump())
    context.set_artifact(ArtifactKeys.PARSED_ANSWER, parsed)
    context.set_artifact(ArtifactKeys.PARSING_MODEL_STR, judge_label(context))


def store_deep_judgment(context: VerificationContext, outcome: TemplateDeepJudgment | None) -> None:
    """The deep-judgment artifacts of a successful parse (``outcome`` None: without it)."""
    for key, value in deep_judgment_artifacts(outcome).items():
        context.set_artifact(key, value)


def parse_failed(context: VerificationContext, exc: LLMCallError, stage: str) -> None:
    """A parse that failed for good: a fatal error of the item, the raw reply kept."""
    note_llm_failure(context, exc)
    context.set_artifact(JUDGE_RAW_OUTPUT, exc.raw_text)
    context.set_artifact_and_result(
        ArtifactKeys.TRACE_EXTRACTION_ERROR, f"Parsing failed: {exc.reason}"
    )
    context.mark_error(f"Parsing failed: {exc.reason}", stage)


def hints_for(context: VerificationContext, raw_class: type[BaseAnswer]) -> dict[str, Any] | None:
    """The template's extraction hints, when ``include_extraction_hints`` is on."""
    return _hints(raw_class) if _hints_enabled(context) else None


def _hints_enabled(context: VerificationContext) -> bool:
    return bool(config_value(context, "include_extraction_hints", True))


def _hints(raw_class: type[BaseAnswer]) -> dict[str, Any]:
    return {
        name: meta.extraction_hint
        for name, meta in raw_class.verified_fields().items()
        if meta.extraction_hint and not meta.is_trace
    }
