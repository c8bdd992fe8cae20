"""Small constructors shared by the result tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_karenina.results import (
    ModelIdentity,
    VerificationResult,
    VerificationResultMetadata,
    VerificationResultTemplate,
)

EXPORTS = Path(__file__).parent.parent / "data" / "export_format"
GPT4O = ModelIdentity.of("langchain", "gpt-4o")


def export_text(name: str) -> str:
    """The text of ``tests/data/export_format/results_export_<name>.json``."""
    return (EXPORTS / f"results_export_{name}.json").read_text(encoding="utf-8")


def metadata(**overrides: Any) -> VerificationResultMetadata:
    """Metadata with only the required fields set (plus ``overrides``)."""
    fields: dict[str, Any] = {
        "question_id": "q1",
        "template_id": "no_template",
        "question_text": "What is 2 + 2?",
        "answering": GPT4O,
        "parsing": GPT4O,
        "execution_time": 0.5,
        "timestamp": "2026-04-21 12:00:00",
        "result_id": "0123456789abcdef",
        **overrides,
    }
    return VerificationResultMetadata(**fields)


def result(
    verify_result: bool | None = True, *, meta: dict[str, Any] | None = None, **template: Any
) -> VerificationResult:
    """A result with a template section holding ``verify_result`` and ``template`` fields."""
    return VerificationResult(
        metadata=metadata(**(meta or {})),
        template=VerificationResultTemplate(verify_result=verify_result, **template),
    )
