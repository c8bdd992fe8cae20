"""What a shard export keeps of a ``--karenina-judge-check`` run, and how ``pytest-karenina
merge`` reads it back.

The run record names the labels file and how many labels it holds (``judge_check``, null for
any other run) and the kappa threshold (``min_judge_kappa``); each item record of a judge
check carries its label check (``label_check``: :meth:`~..verdict.judge_check.LabelCheck.
to_json`). The merge checks them strictly (the models below, used by
:mod:`~.merge_records`), refuses records that contradict their run
(:func:`label_check_problem`) and rebuilds the run's :class:`~.judge_health.JudgeHealth`
from them (:func:`judge_health_of`), so the merged run prints and gates as the unsharded one.
Exports written before these fields existed have none of them: they are no judge check.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field, NonNegativeInt

from pytest_karenina.plugin.report.judge_health import JudgeHealth
from pytest_karenina.plugin.report.strict_json import STRICT
from pytest_karenina.plugin.verdict.judge_check import LabelCheck
from pytest_karenina.plugin.verdict.outcome import Outcome
from pytest_karenina.results.export import RUN_KEY

LABEL_CHECK = "label_check"
"""The item record's field holding its label check."""


class FieldReadingRecord(BaseModel):
    """:class:`~..verdict.judge_check.FieldReading`."""

    model_config = STRICT
    field: str
    people: Any
    parsed: Any
    agrees: bool


class JudgeReadingRecord(BaseModel):
    """:class:`~..verdict.judge_check.JudgeReading`."""

    model_config = STRICT
    judge: str
    outcome: Outcome = Field(strict=False)  # the value's string, as JSON holds it
    stage: str
    fields: list[FieldReadingRecord]
    extraction: dict[str, Any]


class LabelCheckRecord(BaseModel):
    """:class:`~..verdict.judge_check.LabelCheck`: one label against its judges' readings."""

    model_config = STRICT
    label: str
    order: NonNegativeInt
    source: str
    question_id: str
    people_pass: bool
    readings: list[JudgeReadingRecord]
    answer: str


class JudgeCheckRecord(BaseModel):
    """The run's labels file, as the run named it, and how many labels it holds."""

    model_config = STRICT
    labels_file: str
    labels: NonNegativeInt


def judge_check_record(health: JudgeHealth | None) -> dict[str, Any] | None:
    """The run record's ``judge_check`` (None for a run that checks no judge)."""
    if health is None:
        return None
    return {"labels_file": health.source, "labels": health.labels}


def label_check_problem(run: Mapping[str, Any], items: Sequence[Mapping[str, Any]]) -> str | None:
    """An item record (checked already) that contradicts its run: a label check in a run
    that checks no judge, or none in a judge check (where only an item whose xdist worker
    died has none: nothing judged it)."""
    checking = run.get("judge_check") is not None
    for index, item in enumerate(items):
        carries = item.get(LABEL_CHECK) is not None
        crashed = item.get("category") == Outcome.WORKER_CRASHED.value
        if carries == checking or (checking and crashed):
            continue
        where = f"{RUN_KEY}.items[{index}] ({item.get('nodeid')}): field {LABEL_CHECK!r}"
        if checking:
            return f"{where} is missing: the run is a judge check ({RUN_KEY}.run.judge_check)"
        return (
            f"{where} holds a label check, but the run is no judge check "
            f"({RUN_KEY}.run.judge_check is missing or null)"
        )
    return None


def judge_health_of(
    run: Mapping[str, Any], items: Sequence[Mapping[str, Any]]
) -> JudgeHealth | None:
    """The judge health of a (merged) run from its records: what the unsharded run's
    controller gathered from its reports. None for a run that checks no judge."""
    found = run.get("judge_check")
    if not isinstance(found, Mapping):
        return None
    health = JudgeHealth(str(found["labels_file"]), int(found["labels"]))
    for item in items:
        check = item.get(LABEL_CHECK)
        if isinstance(check, Mapping) and item["nodeid"] not in health.checks:
            health.checks[str(item["nodeid"])] = LabelCheck.from_json(check)
    return health
