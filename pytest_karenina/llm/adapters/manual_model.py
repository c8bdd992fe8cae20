"""``manual``: answers recorded ahead of time, per question id (no network)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_karenina.llm.ports import LLMCallError, ModelReply, ModelRequest
from pytest_karenina.results.text import encodable


class ManualModel:
    """Replies with the recorded answer of the request's question.

    ``answers`` maps question ids to the answer text. It answers any call kind
    with that text, so it serves as an answering model only.
    """

    def __init__(self, answers: Mapping[str, str], *, source: str = "<manual answers>") -> None:
        self.answers = {key: encodable(text) for key, text in answers.items()}
        self.source = source

    @classmethod
    def from_file(cls, path: str | Path) -> ManualModel:
        """Read ``{"<question id>": "<answer>", ...}`` from a JSON file."""
        try:
            data: Any = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path}: cannot read manual answers: {exc}") from exc
        if not isinstance(data, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in data.items()
        ):
            raise ValueError(f"{path}: manual answers must be an object of question id -> text")
        return cls(data, source=str(path))

    @property
    def replay_identity(self) -> dict[str, Any]:
        return {"adapter": "manual", "source": self.source}

    def invoke(self, request: ModelRequest) -> ModelReply:
        answer = self.answers.get(request.question_id or "")
        if answer is None:
            raise LLMCallError(
                request.call_kind,
                f"{self.source} has no answer for question {request.question_id!r}",
            )
        return ModelReply(answer, model="manual")
