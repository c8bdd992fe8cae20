"""Errors raised for unreadable or invalid checkpoints."""

from __future__ import annotations

import json
from typing import Any


class CheckpointError(ValueError):
    """A checkpoint could not be read, parsed or understood.

    Attributes:
        file: the checkpoint path as the caller gave it (or a label for in-memory data).
        json_path: where in the document the problem is, e.g.
            ``dataFeedElement[3].item.hasPart.text``; ``""`` for the file as a whole.
        question_id: the id of the question the problem is in, when known.
        reason: what was expected and what was found.

    The message reads ``<file>: <json_path>: <reason>``, followed by
    `` (question <id>)`` when the question is known.
    """

    def __init__(
        self, file: str, json_path: str, reason: str, question_id: str | None = None
    ) -> None:
        self.file = file
        self.json_path = json_path
        self.reason = reason
        self.question_id = question_id
        location = f"{file}: {json_path}" if json_path else file
        message = f"{location}: {reason}"
        if question_id is not None:
            message += f" (question {question_id})"
        super().__init__(message)

    def __reduce__(self) -> tuple[Any, ...]:
        # Keep the error picklable (xdist ships exceptions between processes).
        return (type(self), (self.file, self.json_path, self.reason, self.question_id))


class DecodeFailure(Exception):
    """Internal: a problem found while decoding, before the file name is attached."""

    def __init__(self, json_path: str, reason: str, question_id: str | None = None) -> None:
        super().__init__(json_path, reason)
        self.json_path = json_path
        self.reason = reason
        self.question_id = question_id

    def for_file(self, file: str) -> CheckpointError:
        """The public error for this failure in ``file``."""
        return CheckpointError(file, self.json_path, self.reason, self.question_id)


def describe(value: Any) -> str:
    """A short phrase naming a JSON value's type and showing the value, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({'true' if value else 'false'})"
    if isinstance(value, int | float):
        return f"a number ({value!r})"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"a string ({json.dumps(shown, ensure_ascii=False)})"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return f"a {type(value).__name__}"
