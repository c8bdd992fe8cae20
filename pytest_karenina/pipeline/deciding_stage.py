"""Which stage decided the verdict, and why: what the orchestrator notes after every stage.

A stage decides when ``verify_result`` (the artifact or the result field: a custom stage may
set either, as seed "Writing Custom Stages" shows) differs after it ran. The last such stage
is :data:`DECIDING_STAGE`. A stage gives its reason by setting the :data:`VERDICT_REASON`
artifact while it runs (the auto-fail stages do); the orchestrator moves it to
:data:`STAGE_REASONS`. A stage that changed the verdict without a reason is described by the
result fields it declares in ``produces`` (``toxicity_score 0.9, toxicity_passed False``).
FinalizeResult hands both to :func:`~pytest_karenina.results.classify_failure`, which names
the stage and its reason in ``metadata.failure``.
"""

from __future__ import annotations

from typing import Any

from pytest_karenina.pipeline.artifacts import ArtifactKeys
from pytest_karenina.pipeline.context import VerificationContext
from pytest_karenina.pipeline.stage import VERDICT_REASON, VerificationStage

DECIDING_STAGE = "deciding_stage"
"""Artifact: the name of the last stage after which ``verify_result`` had changed."""
STAGE_REASONS = "stage_reasons"
"""Artifact: stage name -> the reason it gave (or that its result fields tell)."""

_VERDICT_KEYS = frozenset({ArtifactKeys.VERIFY_RESULT, ArtifactKeys.FIELD_VERIFICATION_RESULT})
_MAX_VALUE = 40
_MAX_REASON = 300


def verdict_state(context: VerificationContext) -> tuple[Any, Any]:
    """``verify_result`` as an artifact and as a result field (None when unset)."""
    key = ArtifactKeys.VERIFY_RESULT
    return context.artifacts.get(key), context.result_fields.get(key)


def note_decision(
    context: VerificationContext, stage: VerificationStage, before: tuple[Any, Any]
) -> None:
    """After ``stage`` ran: keep the reason it gave, and name it the deciding stage when the
    verdict is not what it was (``before``, from :func:`verdict_state`)."""
    given = context.artifacts.pop(VERDICT_REASON, None)
    reasons: dict[str, str] = context.artifacts.setdefault(STAGE_REASONS, {})
    if given is not None:
        reasons[stage.name] = str(given)[:_MAX_REASON]
    if verdict_state(context) == before:
        return
    context.set_artifact(DECIDING_STAGE, stage.name)
    if stage.name not in reasons:
        told = _produced_values(context, stage)
        if told:
            reasons[stage.name] = told


def _produced_values(context: VerificationContext, stage: VerificationStage) -> str | None:
    try:
        produces = list(stage.produces)
    except Exception:  # a custom stage's property; the reason is a courtesy
        return None
    shown = [
        f"{key} {_short(context.result_fields[key])}"
        for key in produces
        if key in context.result_fields and key not in _VERDICT_KEYS
    ]
    return ", ".join(shown)[:_MAX_REASON] or None


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    text = " ".join(repr(value).split())
    return text if len(text) <= _MAX_VALUE else text[: _MAX_VALUE - 3] + "..."
