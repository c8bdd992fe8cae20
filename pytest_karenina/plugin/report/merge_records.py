"""The shape of a shard export as ``pytest-karenina merge`` reads it, checked strictly.

A shard export is written by ``--karenina-results``: Karenina's header and ``results``, and
under ``pytest_karenina`` the run's settings (:func:`~.item_record.run_record`) and
one record per test item (:func:`~.item_record.item_record`, an
:meth:`~..payload.ItemPayload.to_json` with its pytest outcome). Every field the
merge or its summary reads is checked here, so a damaged one is an error that names the file
and the field rather than a traceback later; the ``pytest_karenina`` records may hold no
field their writer does not write, and their versions must be the ones this version writes.
Karenina's part (header, results) keeps room for fields other tools add.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    FiniteFloat,
    NonNegativeInt,
    PositiveInt,
    ValidationError,
)

from pytest_karenina.plugin.payload import PAYLOAD_VERSION
from pytest_karenina.plugin.report.item_record import RECORD_VERSION
from pytest_karenina.plugin.report.label_records import (
    JudgeCheckRecord,
    LabelCheckRecord,
    label_check_problem,
)
from pytest_karenina.plugin.report.strict_json import STRICT, problems
from pytest_karenina.plugin.verdict.outcome import Outcome
from pytest_karenina.plugin.verdict.replicates import PolicyKind
from pytest_karenina.results.export import FORMAT_VERSION, RUN_KEY

OPEN = ConfigDict(strict=True, extra="allow", frozen=True)
"""Karenina's part of an export: its fields checked, other fields allowed."""
Share = Annotated[FiniteFloat, Field(ge=0, le=1)]
Money = Annotated[FiniteFloat, Field(ge=0)]
Pair = Annotated[list[NonNegativeInt], Field(min_length=2, max_length=2)]


class TraitCheckRecord(BaseModel):
    """:class:`~pytest_karenina.rubrics.gates.TraitCheck`."""

    model_config = STRICT
    name: str
    kind: str
    value: Any
    gated: bool
    passed: bool | None
    bound: str | None
    reasoning: str | None
    error: str | None
    skipped: str | None
    lower_is_better: bool


class AgentRecord(BaseModel):
    """The parts of ``agent_metrics`` the summary counts."""

    model_config = OPEN
    limit_reached: bool | None = None
    suspect_failed_tools: list[str] | None = None


class SummaryRecord(BaseModel):
    """:class:`~..payload.ResultSummary`."""

    model_config = STRICT
    category: Outcome = Field(strict=False)  # the value's string, as JSON holds it
    verify_result: bool | None
    granular_score: FiniteFloat | None
    parsing_model: str
    deciding_stage: str
    reason: str | None
    fields: list[dict[str, Any]]
    regex: dict[str, bool]
    overrides: list[str]
    abstention_reasoning: str | None
    sufficiency_reasoning: str | None
    error: str | None
    input_tokens: NonNegativeInt
    output_tokens: NonNegativeInt
    raw_response: str | None
    rubric: list[TraitCheckRecord]
    custom_fields: dict[str, Any]
    unquoted: list[str] | None
    unquoted_traits: list[str] | None
    excerpts: dict[str, list[str]]
    risks: dict[str, str]
    deep_judgment_notes: list[str]
    agent: AgentRecord | None
    rubric_gates: Pair


class FingerprintRecord(BaseModel):
    """:mod:`~..collect.fingerprint`: a hash per part of what the verdict was measured with."""

    model_config = STRICT
    question: str
    template: str
    rubric: str
    judge: str
    prompts: str


class TallyRecord(BaseModel):
    """:class:`~..payload.RubricTally`."""

    model_config = STRICT
    passed: NonNegativeInt
    gated: NonNegativeInt
    traits: NonNegativeInt


class JudgeRecord(BaseModel):
    """:meth:`~..verdict.judge_votes.JudgeVote.to_json`: one answer's judge replicates."""

    model_config = STRICT
    replicate: PositiveInt | None
    judge: str
    outcomes: list[Annotated[Outcome, Field(strict=False)]]
    values: dict[str, list[Any]]


class ItemRecord(BaseModel):
    """One test item: an :class:`~..payload.ItemPayload` and its pytest outcome."""

    model_config = STRICT
    version: int
    nodeid: str
    category: Outcome = Field(strict=False)
    question_id: str | None
    question: str | None
    answering_model: str | None
    replicate: NonNegativeInt | None
    score: FiniteFloat | None
    input_tokens: NonNegativeInt
    output_tokens: NonNegativeInt
    rubric: TallyRecord
    summaries: list[SummaryRecord]
    results: list[dict[str, Any]]
    flaky: str | None
    replicates: str | None
    replicate_passes: Pair | None
    seconds: Money
    cost: Annotated[list[Money], Field(min_length=2, max_length=2)] | None
    unpriced: list[str]
    stage_cost: dict[str, Money] | None = None  # from issue 30 on
    fingerprint: FingerprintRecord | None = None  # not in exports written before issue 26
    answers: list[str] = Field(default_factory=list)
    judges: list[JudgeRecord] = Field(default_factory=list)  # from issue 26 on
    flaky_sides: list[str] = Field(default_factory=list)  # from issue 26 on
    label_check: LabelCheckRecord | None = None  # a judge check's items, from issue 26 on
    scenario: dict[str, Any] | None = None  # scenario items, from issue 29 on
    outcome: Literal["passed", "failed", "skipped"]
    reason: str | None = None


class PolicyRecord(BaseModel):
    model_config = STRICT
    kind: PolicyKind
    k: PositiveInt | None


class SelectionRecord(BaseModel):
    model_config = STRICT
    collected: NonNegativeInt
    selected: NonNegativeInt
    digest: NonNegativeInt
    unchanged: NonNegativeInt


class RunRecord(BaseModel):
    """The run's settings: :func:`~.item_record.run_record` (and ``merged_from`` in
    the export of a merge)."""

    model_config = STRICT
    version: int
    checkpoints: list[str]
    shard: Annotated[list[PositiveInt], Field(min_length=2, max_length=2)] | None
    replicate_policy: PolicyRecord
    compare_to: str | None
    min_pass_rate: Share | None
    gate_on: Literal["point", "lower"]
    score_tolerance: Money
    baseline_models: list[Annotated[list[str], Field(min_length=2, max_length=2)]] = Field(
        default_factory=list
    )  # these two are not in records written before issue 26
    baseline_fail_on: Literal["regression", "likely"] = "regression"
    judge_check: JudgeCheckRecord | None = None  # these two from issue 26 on
    min_judge_kappa: Annotated[FiniteFloat, Field(ge=-1, le=1)] | None = None
    selection: SelectionRecord | None
    skipped: list[str]
    other_failures: NonNegativeInt
    cost_capped: NonNegativeInt
    merged_from: list[str] | None = None


class RunBlock(BaseModel):
    model_config = STRICT
    run: RunRecord
    items: list[ItemRecord]


class JobSummary(BaseModel):
    model_config = OPEN
    total_questions: NonNegativeInt
    successful_count: NonNegativeInt
    failed_count: NonNegativeInt
    start_time: FiniteFloat | None
    end_time: FiniteFloat | None
    total_duration: FiniteFloat | None
    is_complete: bool


class Metadata(BaseModel):
    model_config = OPEN
    export_timestamp: str
    karenina_version: str
    job_id: str
    verification_config: dict[str, Any]
    job_summary: JobSummary


class SharedData(BaseModel):
    model_config = OPEN
    rubric_definition: dict[str, Any] | None


class ShardFile(BaseModel):
    """A whole shard export."""

    model_config = OPEN
    format_version: str
    metadata: Metadata | None
    shared_data: SharedData | None = None
    results: list[dict[str, Any]]
    scenario_results: list[Any] | None = None
    pytest_karenina: RunBlock


def shard_problem(data: Any) -> str | None:
    """What is wrong with a parsed shard export (None when nothing is): an unknown version of
    the export or of its records, or the first damaged fields, each named by its place in
    the file (``pytest_karenina.items[3].score``) and its item's node id."""
    if not isinstance(data, dict):
        return "not a results export (not a JSON object)"
    version = data.get("format_version")
    if version != FORMAT_VERSION:
        return f"format_version {version!r} is not one this version reads ({FORMAT_VERSION!r})"
    block = data.get(RUN_KEY)
    run = block.get("run") if isinstance(block, dict) else None
    items = block.get("items") if isinstance(block, dict) else None
    found = run.get("version") if isinstance(run, dict) else None
    if isinstance(run, dict) and (type(found) is not int or found != RECORD_VERSION):
        return (
            f"{RUN_KEY}.run.version {found!r} is not one this version reads ({RECORD_VERSION}): "
            "merge the shards with the pytest-karenina that wrote them"
        )
    for index, item in enumerate(items if isinstance(items, list) else ()):
        found = item.get("version") if isinstance(item, dict) else None
        if isinstance(item, dict) and (type(found) is not int or found != PAYLOAD_VERSION):
            return (
                f"{RUN_KEY}.items[{index}].version {found!r} is not one this version reads "
                f"({PAYLOAD_VERSION}): merge the shards with the pytest-karenina that wrote them"
            )

    def label(loc: tuple[int | str, ...]) -> tuple[int, str | None]:
        if loc[:2] != (RUN_KEY, "items") or len(loc) < 3 or not isinstance(items, list):
            return 0, None
        item = items[loc[2]] if isinstance(loc[2], int) else None
        nodeid = item.get("nodeid") if isinstance(item, dict) else None
        return 3, nodeid if isinstance(nodeid, str) else None

    try:
        ShardFile.model_validate(data)
    except ValidationError as exc:
        return problems(exc, labeler=label)
    assert isinstance(run, dict) and isinstance(items, list)  # validated above
    return label_check_problem(run, items)
