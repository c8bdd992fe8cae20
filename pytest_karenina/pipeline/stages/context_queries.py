"""Small helpers shared by the built-in stages."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_karenina.pipeline.artifacts import ArtifactKeys
from pytest_karenina.pipeline.context import VerificationContext
from pytest_karenina.prompts import instructions_for
from pytest_karenina.results.trace import prepare_evaluation_input
from pytest_karenina.templates.time_limit import DEFAULT_TEMPLATE_TIME_LIMIT

if TYPE_CHECKING:
    from pytest_karenina.templates import BaseAnswer

AI_HEADER = "--- AI Message ---"


def config_value(context: VerificationContext, name: str, default: Any) -> Any:
    """A ``VerificationConfig`` field, or ``default`` in hand-built contexts."""
    return getattr(context.config, name, default) if context.config is not None else default


def prompt_instructions(context: VerificationContext, task: str) -> str | None:
    """The user's extra instructions for ``task`` from ``prompt_config`` (spec 4.7)."""
    return instructions_for(config_value(context, "prompt_config", None), task)


def judge_label(context: VerificationContext) -> str:
    return context.parsing_model.identity("parsing").display_string


def evaluation_input(context: VerificationContext, full_trace: bool) -> tuple[str, bool]:
    """The text a judge reads: the final AI message, or the whole trace.

    Returns ``(text, used_full_trace)``. A trace whose final AI message cannot
    be found falls back to the whole trace.
    """
    raw = str(context.get_artifact(ArtifactKeys.RAW_LLM_RESPONSE, ""))
    text, error = prepare_evaluation_input(raw, full_trace)
    return text, full_trace or error is not None


def answer_class(context: VerificationContext) -> type[BaseAnswer]:
    cls: type[BaseAnswer] = context.get_artifact(ArtifactKeys.ANSWER)
    return cls


def abstained(context: VerificationContext) -> bool:
    return context.get_artifact(ArtifactKeys.ABSTENTION_DETECTED) is True


def recursion_limited(context: VerificationContext) -> bool:
    return context.get_artifact(ArtifactKeys.RECURSION_LIMIT_REACHED) is True


def template_seconds(context: VerificationContext) -> float | None:
    """How long template code may run per step (``template_time_limit``)."""
    value = config_value(context, "template_time_limit", DEFAULT_TEMPLATE_TIME_LIMIT)
    return None if value is None else float(value)
