"""The cells pytest-html's results table gets from a karenina payload (escaped HTML)."""

from __future__ import annotations

from html import escape
from typing import Any

from pytest_karenina.plugin.payload import ItemPayload, ResultSummary

SCORING_STAGES = frozenset({"VerifyTemplate", "RubricEvaluation"})
"""Stages whose verdict the granular score and the field table stand for."""


def _score(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, int | float) else ""


def decided_elsewhere(summary: ResultSummary) -> bool:
    """A result that did not pass because a stage forced its verdict (an auto-fail or a
    custom stage): its granular score and field table are not why it failed."""
    return (
        summary.reason is not None
        and not summary.category.is_error
        and summary.deciding_stage not in SCORING_STAGES
    )


def rubric_cell(payload: ItemPayload) -> str:
    """``4/5 traits`` (gated traits that passed), or ``3 traits`` when none is gated."""
    rubric = payload.rubric
    if rubric.gated:
        return f"{rubric.passed}/{rubric.gated} traits"
    return f"{rubric.traits} traits" if rubric.traits else ""


def score_cell(payload: ItemPayload) -> str:
    """The lowest granular score (with the stage that decided instead, when one forced the
    verdict), or why there is none (escaped HTML)."""
    if payload.category.is_error:
        why = payload.category.value
        return f'<span class="karenina-na" title="nothing was judged: {why}">n/a ({why})</span>'
    if payload.score is not None:
        stages = sorted({s.deciding_stage for s in payload.summaries if decided_elsewhere(s)})
        if not stages:
            return _score(payload.score)
        named = escape(", ".join(stages))
        return (
            f'<span title="the granular score of the fields; {named} decided the verdict">'
            f"{_score(payload.score)}, decided by {named}</span>"
        )
    categories = {summary.category for summary in payload.summaries}
    if "abstained" in categories:
        why = "abstained"
    elif any(s.verify_result is not None for s in payload.summaries):
        why = "own verify()"  # a classic template decides without field scores
    elif payload.summaries:
        why = "no template verdict"
    else:
        return ""
    return f'<span class="karenina-na" title="no granular score: {why}">n/a ({why})</span>'
