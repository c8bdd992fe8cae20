"""Errors and warnings raised for answer templates."""

from __future__ import annotations


class TemplateError(ValueError):
    """An answer template cannot be used: it does not compile or is invalid.

    ``question_id`` and ``line`` (1-based, in the template source) are set when
    known; ``reason`` is the bare explanation.
    """

    def __init__(self, reason: str, *, question_id: str | None = None, line: int | None = None):
        self.reason = reason
        self.question_id = question_id
        self.line = line
        where = "answer template"
        if question_id is not None:
            where += f" of question {question_id}"
        if line is not None:
            where += f", line {line}"
        super().__init__(f"{where}: {reason}")


class TemplateWarning(UserWarning):
    """Something in a template looks wrong but Karenina accepts it."""
