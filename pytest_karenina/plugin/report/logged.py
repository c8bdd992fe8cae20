"""What a question's reports show once logged: the status of a flaky question, and the
scalars a report keeps after its item's last report is logged."""

from __future__ import annotations

from typing import Any

LOGGED_KEEPS = frozenset({"category", "question_id", "answering_model", "score"})
"""The keys of a ``report.karenina`` payload still there once every report of its item has
been logged (see :func:`logged_residue`)."""


def logged_residue(data: dict[str, Any]) -> dict[str, Any]:
    """What stays of a payload once every report of its item is logged: a few scalars
    (:data:`LOGGED_KEEPS`).

    pytest keeps every report until the session ends; once an item's teardown report is
    logged (pytest-html renders the item's row then) nothing reads the rest, and the field
    tables, result dumps and question text are most of what a report weighs.
    """
    return {key: value for key, value in data.items() if key in LOGGED_KEEPS}


def flaky_status(report: Any) -> tuple[str, str, str] | None:
    """The test status of a flaky question's call report (None for any other report)."""
    data = getattr(report, "karenina", None)
    if getattr(report, "when", None) != "call" or not isinstance(data, dict):
        return None
    flaky = data.get("flaky")
    if not flaky:
        return None
    outcome = str(report.outcome)
    letter = "~" if outcome == "passed" else "F" if outcome == "failed" else "s"
    return outcome, letter, f"{outcome.upper()} (flaky {flaky})"
