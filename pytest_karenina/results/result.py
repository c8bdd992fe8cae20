"""``VerificationResult``: the outcome of verifying one question with one model pair."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from pytest_karenina.results.deep_judgment import (
    SEED_ONLY_DEEP_JUDGMENT_FIELDS,
    VerificationResultDeepJudgment,
    VerificationResultDeepJudgmentRubric,
)
from pytest_karenina.results.failure import Failure, template_validation_error_from_failure
from pytest_karenina.results.metadata import (
    SEED_ONLY_METADATA_FIELDS,
    VerificationResultMetadata,
)
from pytest_karenina.results.rubric import VerificationResultRubric
from pytest_karenina.results.template import (
    SEED_ONLY_TEMPLATE_FIELDS,
    VerificationResultTemplate,
)

SEED_ONLY_FIELDS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "metadata": SEED_ONLY_METADATA_FIELDS,
        "template": SEED_ONLY_TEMPLATE_FIELDS,
        "deep_judgment": SEED_ONLY_DEEP_JUDGMENT_FIELDS,
    }
)
"""Per section, the seed-document fields that exports leave out (current Karenina lacks them
and its metadata model rejects unknown keys); loading rebuilds them from the other fields."""
OWN_OPTIONAL_FIELDS = ("custom_fields", "judge_replicate", "saved_workspace")
"""Root fields of ours that exports leave out when they are None, so an export of a run that
does not use them is Karenina's shape exactly."""


class VerificationResult(BaseModel):
    """One verification run: five sections plus the three shared trace-filtering fields.

    ``metadata`` and ``template`` are always present (in ``rubric_only`` mode the template
    section holds the answer and no verdict);
    ``rubric``, ``deep_judgment`` and ``deep_judgment_rubric`` only when those evaluations ran.
    ``evaluation_input`` is the text handed to evaluation (full trace or final AI message),
    ``used_full_trace`` says which, and ``trace_extraction_error`` records a failed
    final-message extraction.

    ``model_dump(mode="json")`` is JSON-native and ``model_validate`` reads it back unchanged;
    unknown keys (from newer Karenina versions) are ignored. :meth:`export_dict` is the
    Karenina-shaped dump written to export files.
    """

    model_config = ConfigDict(extra="ignore")

    metadata: VerificationResultMetadata
    template: VerificationResultTemplate | None = None
    rubric: VerificationResultRubric | None = None
    deep_judgment: VerificationResultDeepJudgment | None = None
    deep_judgment_rubric: VerificationResultDeepJudgmentRubric | None = None
    evaluation_input: str | None = None
    used_full_trace: bool = True
    trace_extraction_error: str | None = None
    custom_fields: dict[str, Any] | None = None
    """Result fields that custom stages set (``set_result_field``) and no section takes,
    by key; None when there are none (and then left out of exports)."""
    judge_replicate: int | None = None
    """Which judge replicate judged the answer (``--karenina-judge-replicates``; ours, Karenina
    has none); None without judge replicates (and then left out of exports)."""
    saved_workspace: str | None = None
    """Where the answer's final workspace was saved (``workspace_output_mode``; ours, Karenina
    lists its saves in a manifest); None when none was (and then left out of exports)."""

    @model_validator(mode="before")
    @classmethod
    def _derive_template_validation_error(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        template = data.get("template")
        if not isinstance(template, dict) or "template_validation_error" in template:
            return data
        metadata = data.get("metadata")
        failure: Any = None
        if isinstance(metadata, VerificationResultMetadata):
            failure = metadata.failure
        elif isinstance(metadata, dict):
            failure = metadata.get("failure")
        if not isinstance(failure, Failure | dict):
            return data
        derived = template_validation_error_from_failure(failure)
        return {**data, "template": {**template, "template_validation_error": derived}}

    @property
    def verify_result(self) -> bool | None:
        """``template.verify_result``, or None without a template section."""
        return self.template.verify_result if self.template is not None else None

    def export_dict(self) -> dict[str, Any]:
        """The JSON-native dump written to export files: every field except
        :data:`SEED_ONLY_FIELDS`, in Karenina's key order."""
        exclude: dict[str, Any] = {
            section: set(fields) for section, fields in SEED_ONLY_FIELDS.items()
        }
        for name in OWN_OPTIONAL_FIELDS:
            if getattr(self, name) is None:
                exclude[name] = True
        return self.model_dump(mode="json", exclude=exclude)


def strip_seed_only(data: Mapping[str, Any]) -> dict[str, Any]:
    """The export form of an already dumped result (``model_dump(mode="json")`` output)."""
    stripped = dict(data)
    for name in OWN_OPTIONAL_FIELDS:
        if stripped.get(name, ...) is None:
            del stripped[name]
    for section, fields in SEED_ONLY_FIELDS.items():
        value = stripped.get(section)
        if isinstance(value, Mapping):
            stripped[section] = {k: v for k, v in value.items() if k not in fields}
    return stripped
