"""What a run's export keeps of each test item and of the run itself, under the export's
``pytest_karenina`` key: enough to rebuild the run's summary and gates without the
checkpoint (``pytest-karenina merge``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
from typing import Any

from pytest_karenina.plugin.options.settings import Settings
from pytest_karenina.plugin.payload import ItemPayload, ResultSummary
from pytest_karenina.plugin.report.clusters import deciding_row
from pytest_karenina.plugin.report.judge_health import JudgeHealth
from pytest_karenina.plugin.report.label_records import LABEL_CHECK, judge_check_record
from pytest_karenina.plugin.verdict.judge_check import LabelCheck

RECORD_VERSION = 1
REASON_LIMIT = 300
"""Characters of a failure's first line kept as its reason."""


def _slim(summary: ResultSummary) -> ResultSummary:
    """A result's scalars, rubric values, deep-judgment and agent tallies: what the run
    summary counts (the field tables, quotes and reasoning stay in the results; a failed
    verdict keeps its deciding field's row, for the failure clusters)."""
    row = deciding_row(summary)
    return dataclasses.replace(
        summary, fields=[row] if row is not None else [], regex={}, overrides=[],
        abstention_reasoning=None,
        sufficiency_reasoning=None, raw_response=None, custom_fields={}, excerpts={}, risks={},
        deep_judgment_notes=[],
        rubric=[dataclasses.replace(check, reasoning=None) for check in summary.rubric],
    )  # fmt: skip


def item_record(
    payload: ItemPayload, outcome: str, reason: str | None, check: LabelCheck | None = None
) -> dict[str, Any]:
    """The record of one item; ``outcome``: pytest's (passed, failed, skipped); ``reason``:
    the first line of why it failed or errored; ``check``: a judge check's label check."""
    slim = dataclasses.replace(
        payload, question=None, results=[], summaries=[_slim(s) for s in payload.summaries],
        scenario=payload.for_summary().scenario,  # its records are the export's own section
    )  # fmt: skip
    record = slim.to_json()
    if record.get("scenario") is None:
        record.pop("scenario", None)  # question items: records as before issue 29
    record["outcome"] = outcome
    if reason:
        record["reason"] = reason[:REASON_LIMIT]
    if check is not None:
        record[LABEL_CHECK] = check.to_json()
    return record


def first_line(text: str) -> str | None:
    """The first non-blank line of ``text`` (a report's failure text), stripped."""
    return next((line.strip() for line in text.splitlines() if line.strip()), None)


def run_record(
    settings: Settings,
    selection: Mapping[str, int] | None,
    skipped: Collection[str] = (),
    other_failures: int = 0,
    cost_capped: int = 0,
    judge_health: JudgeHealth | None = None,
) -> dict[str, Any]:
    """The run's settings that its summary and gates depend on (with ``judge_health``, a
    judge check's labels file), what it selected, the node ids it skipped and how many
    failures it had outside the questions."""
    policy = settings.replicate_policy
    ci = settings.ci
    return {
        "version": RECORD_VERSION,
        "checkpoints": sorted(path.name for path in settings.checkpoints),
        "shard": list(settings.shard) if settings.shard is not None else None,
        "replicate_policy": {"kind": policy.kind, "k": policy.k},
        "compare_to": settings.compare_to,
        "min_pass_rate": settings.min_pass_rate,
        "gate_on": settings.gate_on,
        "score_tolerance": ci.score_tolerance,
        "baseline_models": [list(pair) for pair in ci.baseline_models],
        "baseline_fail_on": ci.baseline_fail_on,
        "judge_check": judge_check_record(judge_health),
        "min_judge_kappa": settings.min_judge_kappa if judge_health is not None else None,
        "selection": dict(selection) if selection is not None else None,
        "skipped": sorted(skipped),
        "other_failures": other_failures,
        "cost_capped": cost_capped,
    }
