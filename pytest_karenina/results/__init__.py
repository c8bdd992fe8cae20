"""Verification results: the models, failure classification, ids, trace text and export files.

The bottom layer of the engine: it depends on pydantic and the standard library only.
See ``docs/results.md``.
"""

from __future__ import annotations

from pytest_karenina.results.classify import (
    AUTOFAIL_STAGE_CATEGORIES,
    PARSE_STAGES,
    RETRY_CATEGORIES,
    cap_warnings,
    classify_failure,
    collect_caveats,
)
from pytest_karenina.results.deep_judgment import (
    VerificationResultDeepJudgment,
    VerificationResultDeepJudgmentRubric,
)
from pytest_karenina.results.export import (
    FORMAT_VERSION,
    default_karenina_version,
    export_header,
    read_export_payload,
    result_line,
    write_export,
)
from pytest_karenina.results.failure import (
    CATEGORY_GROUPS,
    Caveat,
    Failure,
    FailureCategory,
    FailureGroup,
    trim_reason,
)
from pytest_karenina.results.identity import ModelIdentity
from pytest_karenina.results.ids import compute_result_id, export_timestamp, pipeline_timestamp
from pytest_karenina.results.metadata import VerificationResultMetadata
from pytest_karenina.results.result import SEED_ONLY_FIELDS, VerificationResult, strip_seed_only
from pytest_karenina.results.result_set import VerificationResultSet
from pytest_karenina.results.rubric import ScoreValue, TraitType, VerificationResultRubric
from pytest_karenina.results.template import VerificationResultTemplate
from pytest_karenina.results.trace import (
    TraceError,
    final_ai_message,
    prepare_evaluation_input,
    render_trace,
)
from pytest_karenina.results.writer import ExportWriter, sidecar_path

__all__ = [
    "AUTOFAIL_STAGE_CATEGORIES",
    "CATEGORY_GROUPS",
    "FORMAT_VERSION",
    "PARSE_STAGES",
    "RETRY_CATEGORIES",
    "SEED_ONLY_FIELDS",
    "Caveat",
    "ExportWriter",
    "Failure",
    "FailureCategory",
    "FailureGroup",
    "ModelIdentity",
    "ScoreValue",
    "TraceError",
    "TraitType",
    "VerificationResult",
    "VerificationResultDeepJudgment",
    "VerificationResultDeepJudgmentRubric",
    "VerificationResultMetadata",
    "VerificationResultRubric",
    "VerificationResultSet",
    "VerificationResultTemplate",
    "cap_warnings",
    "classify_failure",
    "collect_caveats",
    "compute_result_id",
    "default_karenina_version",
    "export_header",
    "export_timestamp",
    "final_ai_message",
    "pipeline_timestamp",
    "prepare_evaluation_input",
    "read_export_payload",
    "render_trace",
    "result_line",
    "sidecar_path",
    "strip_seed_only",
    "trim_reason",
    "write_export",
]
