"""``VerificationResultMetadata``: the always-present section of a result."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from pytest_karenina.results.failure import Failure, error_from_failure
from pytest_karenina.results.identity import ModelIdentity

SEED_ONLY_METADATA_FIELDS = frozenset({"completed_without_errors", "error"})
"""Fields of the seed document that current Karenina no longer has (not written to exports)."""


class VerificationResultMetadata(BaseModel):
    """Identification, models, timing, outcome and provenance of one verification run.

    Required: ``question_id``, ``template_id`` (MD5 of the template or ``"no_template"``),
    ``question_text``, ``answering``, ``parsing``, ``execution_time`` (seconds),
    ``timestamp`` and ``result_id``; everything else has a None/False/empty default.

    ``completed_without_errors`` and ``error`` are the seed document's outcome fields;
    ``failure``, ``caveats``, ``warnings``, ``partial_content`` and ``retry_counts`` are
    current Karenina's. When loading data that lacks the seed fields (a Karenina export),
    ``error`` is rebuilt from ``failure`` (see
    :func:`~pytest_karenina.results.failure.error_from_failure`) and
    ``completed_without_errors`` defaults to ``error is None``.

    Legacy rows (export formats 2.0/2.1) that carry only ``answering_model`` /
    ``parsing_model`` display strings get identities parsed from them.
    """

    model_config = ConfigDict(extra="ignore")

    question_id: str
    template_id: str
    completed_without_errors: bool = True
    error: str | None = None
    failure: Failure | None = None
    caveats: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    partial_content: str | None = None
    retry_counts: dict[str, dict[str, int]] | None = None
    question_text: str
    raw_answer: str | None = None
    keywords: list[str] | None = None
    answering: ModelIdentity
    parsing: ModelIdentity
    answering_system_prompt: str | None = None
    parsing_system_prompt: str | None = None
    execution_time: float
    timestamp: str
    result_id: str
    run_name: str | None = None
    replicate: int | None = None
    few_shot_enabled: bool = False
    few_shot_example_count: int = 0
    evaluation_mode: str | None = None
    scenario_id: str | None = None
    scenario_node: str | None = None
    scenario_turn: int | None = None
    scenario_path: list[str] | None = None

    @model_validator(mode="before")
    @classmethod
    def _fill_derived_fields(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        filled = dict(data)
        for role in ("answering", "parsing"):
            legacy = filled.get(f"{role}_model")
            if role not in filled and isinstance(legacy, str):
                filled[role] = ModelIdentity.from_display_string(legacy)
        if "error" not in filled:
            failure = filled.get("failure")
            filled["error"] = (
                error_from_failure(failure) if isinstance(failure, Failure | dict) else None
            )
        if "completed_without_errors" not in filled:
            filled["completed_without_errors"] = filled["error"] is None
        return filled

    @property
    def answering_model(self) -> str:
        """The answering model's display string, e.g. ``"langchain:gpt-4o"``."""
        return self.answering.display_string

    @property
    def parsing_model(self) -> str:
        """The parsing (judge) model's display string."""
        return self.parsing.display_string
