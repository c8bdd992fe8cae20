"""The cells pytest-html's results table gets from a karenina payload (escaped HTML): the
question, why it did not pass, the deciding field's expected and extracted values, the score
and the rubric tally."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from pytest_karenina.plugin.payload import ItemPayload, ResultSummary
from pytest_karenina.plugin.verdict.outcome import Outcome

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


QUESTION_SHOWN = 80
"""Characters of the question the Question column shows (the whole text on hover)."""
REASON_SHOWN = 120
"""Characters of the one-line reason the Reason column shows (the whole line on hover)."""
VALUE_SHOWN = 40
"""Characters of an expected or extracted value the Expected column shows."""


def _attribute(text: str) -> str:
    """``text`` for a ``title`` attribute: escaped, newlines kept as character references (a
    cell's HTML stays on one line, which pytest-html's sort values need)."""
    return escape(text).replace("\r", "").replace("\n", "&#10;")


def _shortened(text: str, limit: int) -> tuple[str, bool]:
    """``text`` on one line (runs of white space as one space), cut to ``limit`` characters;
    and whether it was cut."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line, line != text
    return line[: limit - 1].rstrip() + "\u2026", True


def _hover_text(text: str | None, limit: int) -> str:
    """``text`` cut to ``limit`` characters, the whole of it on hover (escaped HTML)."""
    if not text:
        return ""
    shown, cut = _shortened(text, limit)
    if not cut:
        return escape(shown)
    return f'<span title="{_attribute(text)}">{escape(shown)}</span>'


def question_cell(payload: ItemPayload) -> str:
    """The question's text, short; the whole text on hover (escaped HTML)."""
    return _hover_text(payload.question, QUESTION_SHOWN)


def item_reason(payload: ItemPayload, reported: str | None) -> str | None:
    """Why the item did not pass, in one line: the reason its payload travelled with (the
    first line of the failure, as the process that ran the item wrote it), else the first
    reason among its results; None for an item that passed."""
    if reported:
        return reported
    return next((summary.reason for summary in payload.summaries if summary.reason), None)


def reason_cell(reason: str | None) -> str:
    """The one-line reason, short; the whole line on hover (escaped HTML)."""
    return _hover_text(reason, REASON_SHOWN)


def _shown(value: Any) -> str:
    """A value as the field tables show it (strings quoted), cut to :data:`VALUE_SHOWN`."""
    text = repr(value) if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= VALUE_SHOWN else text[: VALUE_SHOWN - 1] + "\u2026"


def deciding_summary(payload: ItemPayload) -> ResultSummary | None:
    """The result that decided the item's failure: the first whose category is the item's,
    else the first that did not pass (None when every result passed)."""
    failed = [s for s in payload.summaries if s.category not in (Outcome.PASS, Outcome.NO_VERDICT)]
    return next(
        (s for s in failed if s.category == payload.category), failed[0] if failed else None
    )


def failing_fields(summary: ResultSummary) -> list[dict[str, Any]]:
    """The field rows that failed (for a template with its own ``verify()``: that differ)."""
    return [
        row
        for row in summary.fields
        if row.get("passed") is False or (row.get("passed") is None and row.get("differs"))
    ]


def deciding_cell(payload: ItemPayload) -> str:
    """``field: expected → got`` for the first field (or gated rubric trait) that failed the
    deciding result, ``+N more`` when others failed too; empty when the item passed or a
    stage other than the template and rubric decided (escaped HTML)."""
    summary = deciding_summary(payload)
    if summary is None or summary.category.is_error or decided_elsewhere(summary):
        return ""
    fields = failing_fields(summary)
    traits = [check for check in summary.rubric if check.gated and check.passed is False]
    if fields:
        name, expected, got = fields[0]["field"], _shown(fields[0]["expected"]), fields[0]["parsed"]
    elif traits:
        name, expected, got = traits[0].name, traits[0].bound or "", traits[0].value
    else:
        return ""
    more = len(fields) + len(traits) - 1
    hover = f"{name}: expected {expected}, got {_shown(got)}"
    return (
        f'<span title="{_attribute(hover)}">{escape(str(name))}: '
        f'<span class="karenina-expected">{escape(expected)}</span> \u2192 '
        f'<span class="karenina-got">{escape(_shown(got))}</span></span>'
        + (f' <span class="karenina-na">+{more} more</span>' if more else "")
    )
