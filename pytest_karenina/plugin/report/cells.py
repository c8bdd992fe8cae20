"""The cells pytest-html's results table gets from a karenina payload (escaped HTML)."""

from __future__ import annotations

from typing import Any

from pytest_karenina.plugin.report.payload import ItemPayload


def _score(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, int | float) else ""


def rubric_cell(payload: ItemPayload) -> str:
    """``4/5 traits`` (gated traits that passed), or ``3 traits`` when none is gated."""
    rubric = payload.rubric
    if rubric.gated:
        return f"{rubric.passed}/{rubric.gated} traits"
    return f"{rubric.traits} traits" if rubric.traits else ""


def score_cell(payload: ItemPayload) -> str:
    """The lowest granular score, or why there is none (escaped HTML)."""
    if payload.score is not None:
        return _score(payload.score)
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
