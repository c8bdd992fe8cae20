"""The ``report.karenina`` payload: what the process that ran an item tells the process that
reports (an xdist controller, or itself).

:class:`ItemPayload` is built in one place (:meth:`ItemPayload.of_verdicts`, or
:meth:`ItemPayload.worker_crashed` for an item whose xdist worker died) and travels as
:meth:`ItemPayload.to_json` (builtins only: execnet cannot ship models, enums or
dataclasses). The reporting side reads it back with :meth:`ItemPayload.from_json`, which
fills defaults for missing keys. The full result dumps ride along under ``results`` so
the reporting process can stream the export.

A setup report of an item that the cost cap did not start carries
:data:`COST_CAPPED` instead (:func:`mark_cost_capped`): the reporting process counts those
items by that mark, never by the text of the skip reason.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_karenina.plugin.verdict.explain import result_reason
from pytest_karenina.plugin.verdict.outcome import (
    FieldFacts,
    Outcome,
    Verdict,
    deciding_stage,
    field_rows,
    overrides,
    template_error_of,
    worst_outcome,
)
from pytest_karenina.results.agent_metrics import is_agent_run
from pytest_karenina.results.cost import PriceTable, results_cost, stage_costs
from pytest_karenina.rubrics.gates import TraitCheck, gate_summary

if TYPE_CHECKING:
    from pytest_karenina.plugin.verdict.replicates import ReplicateVote
    from pytest_karenina.results import VerificationResult

PAYLOAD_VERSION = 2
COST_CAPPED = "karenina_cost_capped"
"""The report attribute that marks the setup report of an item the cost cap did not start."""


def mark_cost_capped(report: Any) -> None:
    """Mark ``report`` (a setup report) as the skip of an item the cost cap did not start;
    the mark travels with the report under xdist."""
    setattr(report, COST_CAPPED, True)


def cost_capped(report: Any) -> bool:
    """Whether ``report`` is the skip of an item the cost cap did not start."""
    return getattr(report, COST_CAPPED, False) is True


def tokens(result: VerificationResult) -> tuple[int, int]:
    """``(input, output)`` tokens of every call of ``result``."""
    usage = (result.template.usage_metadata if result.template else None) or {}
    total = usage.get("total") or {}
    return int(total.get("input_tokens") or 0), int(total.get("output_tokens") or 0)


def _number(value: Any) -> float | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass(frozen=True, slots=True)
class ResultSummary:
    """One result of an item, as the reports show it."""

    category: Outcome
    verify_result: bool | None = None
    granular_score: float | None = None
    parsing_model: str = ""
    deciding_stage: str = ""
    reason: str | None = None
    """Why the result did not pass, in one line (:func:`~.verdict.explain.result_reason`: the
    deciding stage's reason first); None for a pass or no verdict."""
    fields: list[dict[str, Any]] = field(default_factory=list)
    """Rows of ``field, expected, parsed, primitive, passed``."""
    regex: dict[str, bool] = field(default_factory=dict)
    overrides: list[str] = field(default_factory=list)
    abstention_reasoning: str | None = None
    sufficiency_reasoning: str | None = None
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    raw_response: str | None = None
    """The answer as the judge saw it; None when the trace is left out of the report."""
    rubric: list[TraitCheck] = field(default_factory=list)
    custom_fields: dict[str, Any] = field(default_factory=dict)
    """What custom stages added to the result (``VerificationResult.custom_fields``)."""
    unquoted: list[str] | None = None
    """Deep judgment's attributes without a verbatim quote; None when it did not run."""
    unquoted_traits: list[str] | None = None
    """Rubric deep judgment's traits without a verbatim quote; None when it did not run."""
    excerpts: dict[str, list[str]] = field(default_factory=dict)
    """Deep judgment's accepted quotes per attribute, and per rubric trait as
    ``"rubric: <trait>"`` (for highlighting the answer)."""
    risks: dict[str, str] = field(default_factory=dict)
    """Hallucination risk per attribute and per rubric trait (keys as ``excerpts``)."""
    deep_judgment_notes: list[str] = field(default_factory=list)
    """Why attributes have no quote: their rejected quotes and similarities."""
    agent: dict[str, Any] | None = None
    """``agent_metrics`` when the answer came from an agent run; None otherwise."""

    @property
    def rubric_gates(self) -> tuple[int, int]:
        """``(passed, gated)`` over the rubric checks."""
        return gate_summary(self.rubric)

    @classmethod
    def of_verdict(cls, verdict: Verdict, facts: FieldFacts, include_trace: bool) -> ResultSummary:
        result = verdict.result
        template = result.template
        input_tokens, output_tokens = tokens(result)
        return cls(
            category=verdict.category,
            verify_result=template.verify_result if template else None,
            granular_score=_number(template.verify_granular_result if template else None),
            parsing_model=result.metadata.parsing.model_name,
            deciding_stage=deciding_stage(verdict),
            reason=(
                None
                if verdict.category in (Outcome.PASS, Outcome.NO_VERDICT)
                else result_reason(verdict, facts)
            ),
            fields=field_rows(result, facts),
            regex=dict(template.regex_validation_results or {}) if template else {},
            overrides=overrides(result),
            abstention_reasoning=template.abstention_reasoning if template else None,
            sufficiency_reasoning=template.sufficiency_reasoning if template else None,
            error=result.metadata.error or template_error_of(result),
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            raw_response=(template.raw_llm_response if template else "") if include_trace else None,
            rubric=list(verdict.checks),
            custom_fields=dict(result.custom_fields or {}),
            unquoted=_unquoted(result),
            unquoted_traits=_unquoted_traits(result),
            excerpts=_quotes(result),
            risks=_risks(result),
            deep_judgment_notes=[
                w for w in result.metadata.warnings if w.startswith("deep judgment: ")
            ],
            agent=_agent(result),
        )

    def to_json(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        data["category"] = self.category.value
        data["rubric"] = [dataclasses.asdict(check) for check in self.rubric]
        data["rubric_gates"] = list(self.rubric_gates)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ResultSummary:
        known = {f.name for f in dataclasses.fields(cls)} - {"category", "rubric"}
        return cls(
            category=Outcome(data.get("category") or Outcome.NO_VERDICT),
            rubric=[TraitCheck(**check) for check in data.get("rubric") or ()],
            **{name: data[name] for name in known if data.get(name) is not None},
        )


def answer_hashes(results: Sequence[VerificationResult]) -> list[str]:
    """12 hex characters of the SHA-256 of each replicate's answer, in the order of the
    results (the judges of one replicate share its answer: it counts once)."""
    found: dict[int | None, str] = {}
    for result in results:
        if result.metadata.replicate not in found and result.template is not None:
            answer = result.template.raw_llm_response.encode("utf-8", "surrogatepass")
            found[result.metadata.replicate] = hashlib.sha256(answer).hexdigest()[:12]
    return list(found.values())


def _agent(result: VerificationResult) -> dict[str, Any] | None:
    metrics = result.template.agent_metrics if result.template is not None else None
    return dict(metrics) if metrics is not None and is_agent_run(metrics) else None


def _unquoted(result: VerificationResult) -> list[str] | None:
    section = result.deep_judgment
    if section is None or not section.deep_judgment_performed:
        return None
    return list(section.attributes_without_excerpts or ())


def _unquoted_traits(result: VerificationResult) -> list[str] | None:
    section = result.deep_judgment_rubric
    if section is None or not section.deep_judgment_rubric_performed:
        return None
    return list(section.traits_without_valid_excerpts or ())


RUBRIC_KEY = "rubric: {}"
"""How a rubric trait is named among the attributes of :attr:`ResultSummary.excerpts`."""


def _quotes(result: VerificationResult) -> dict[str, list[str]]:
    template, rubric = result.deep_judgment, result.deep_judgment_rubric
    found = dict((template.extracted_excerpts or {}) if template is not None else {})
    for name, quotes in ((rubric.extracted_rubric_excerpts or {}) if rubric else {}).items():
        found[RUBRIC_KEY.format(name)] = quotes
    return {
        name: [str(q.get("text")) for q in quotes if isinstance(q, dict) and q.get("text")]
        for name, quotes in found.items()
    }


def _risks(result: VerificationResult) -> dict[str, str]:
    template, rubric = result.deep_judgment, result.deep_judgment_rubric
    found = dict((template.hallucination_risk_assessment or {}) if template is not None else {})
    assessed = (rubric.rubric_hallucination_risk_assessment or {}) if rubric is not None else {}
    for name, risk in assessed.items():
        found[RUBRIC_KEY.format(name)] = str((risk or {}).get("overall_risk"))
    return found


@dataclass(frozen=True, slots=True)
class RubricTally:
    """Over an item's results: gated traits that passed, gated traits, and traits graded
    (dynamic traits the response did not touch are not graded)."""

    passed: int = 0
    gated: int = 0
    traits: int = 0


@dataclass(frozen=True, slots=True)
class ItemPayload:
    """One item's outcome with everything the reports show about it."""

    nodeid: str
    category: Outcome
    question_id: str | None = None
    question: str | None = None
    answering_model: str | None = None
    replicate: int | None = None
    score: float | None = None
    """The lowest granular score of the item's results."""
    input_tokens: int = 0
    output_tokens: int = 0
    rubric: RubricTally = RubricTally()
    summaries: list[ResultSummary] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)
    """``VerificationResult`` dumps (JSON mode), for the export."""
    flaky: str | None = None
    """When the replicates disagree (a replicate policy): ``passed/replicates``; when the
    judge replicates of one answer disagree: ``judge passed/judge replicates``; or both."""
    replicates: str | None = None
    """Under a replicate policy or with judge replicates: the outcomes and the decision."""
    replicate_passes: list[int] | None = None
    """Under a replicate policy: ``[passed, replicates]``."""
    judges: list[dict[str, Any]] = field(default_factory=list)
    """With judge replicates: per answer and judge model, each judge replicate's outcome and
    field values (:meth:`~.verdict.judge_votes.JudgeVote.to_json`)."""
    flaky_sides: list[str] = field(default_factory=list)
    """A flaky item's sides that flipped: ``judge-side: ...``, ``answer-side: ...``."""
    seconds: float = 0.0
    """The pipelines' time: the sum of the results' ``execution_time``."""
    cost: list[float] | None = None
    """With a price table: ``[answerer, judge]`` USD."""
    unpriced: tuple[str, ...] = ()
    """Models the item used that the price table has no price for."""
    stage_cost: dict[str, float] | None = None
    """With a price table: USD per pipeline stage (``stage_costs``); the run summary folds
    it into its cost tally and keeps none per item."""
    fingerprint: dict[str, str] | None = None
    """What the verdict was measured with: a hash per part (question, template, rubric,
    judge, prompts; :mod:`~.collect.fingerprint`), for baselines."""
    answers: list[str] = field(default_factory=list)
    """A hash of the answer of each replicate the item ran (:func:`answer_hashes`), for
    baselines to tell a new verdict of the same answer from a new answer."""
    scenario: dict[str, Any] | None = None
    """A scenario item's: ``name``, ``status``, ``path``, ``turns``, ``criterion``, ``turn``
    (what broke it), ``conversation`` (each turn's node, question, answer and verdict),
    ``records`` (``scenario_results`` entries) and ``errors`` (``[description, error]``) for
    the export; None for questions."""

    @classmethod
    def of_verdicts(
        cls, *, nodeid: str, question_id: str, question_text: str, answering_model: str,
        replicate: int | None, facts: FieldFacts, verdicts: Sequence[Verdict],
        include_trace: bool, vote: ReplicateVote | None = None, prices: PriceTable | None = None,
        fingerprint: dict[str, str] | None = None,
    ) -> ItemPayload:  # fmt: skip
        """The item's payload; ``include_trace`` keeps the raw responses in the summaries;
        ``facts``: what the question's template says about its fields; ``vote``: the
        replicate policy's decision, which is then the item's category; ``prices``: the
        price table its cost is computed with."""
        summaries = [
            ResultSummary.of_verdict(verdict, facts, include_trace) for verdict in verdicts
        ]
        scores = [s.granular_score for s in summaries if s.granular_score is not None]
        gates = [s.rubric_gates for s in summaries]
        valued = sum(1 for s in summaries for check in s.rubric if check.skipped is None)
        results = [verdict.result for verdict in verdicts]
        cost = results_cost(results, prices) if prices is not None else None
        return cls(
            nodeid=nodeid,
            category=vote.outcome if vote else worst_outcome([s.category for s in summaries]),
            question_id=question_id,
            question=question_text,
            answering_model=answering_model,
            replicate=replicate,
            score=min(scores) if scores else None,
            input_tokens=sum(s.input_tokens for s in summaries),
            output_tokens=sum(s.output_tokens for s in summaries),
            rubric=RubricTally(sum(p for p, _ in gates), sum(g for _, g in gates), valued),
            summaries=summaries,
            results=[verdict.result.model_dump(mode="json") for verdict in verdicts],
            flaky=vote.flaky_text() if vote is not None else None,
            replicates=vote.describe() if vote is not None else None,
            replicate_passes=(
                [vote.passed, len(vote.outcomes)] if vote is not None and vote.grouped else None
            ),
            judges=(
                [judge.to_json() for judge in vote.judges]
                if vote is not None and vote.judge_replicates > 1
                else []
            ),
            flaky_sides=vote.side_lines() if vote is not None else [],
            seconds=sum(result.metadata.execution_time or 0.0 for result in results),
            cost=[cost.answerer, cost.judge] if cost is not None else None,
            unpriced=tuple(sorted(cost.unpriced)) if cost is not None else (),
            stage_cost=stage_costs(results, prices) if prices is not None else None,
            fingerprint=fingerprint,
            answers=answer_hashes(results),
        )

    def for_summary(self) -> ItemPayload:
        """What a run summary keeps of an item once it has taken in the item's rubric checks:
        the scalars (a large run keeps one per item to its end)."""
        scenario = self.scenario
        if scenario is not None:
            kept = ("name", "status", "path", "turns", "criterion", "turn")
            scenario = {key: scenario.get(key) for key in kept}
        return dataclasses.replace(
            self, question=None, results=[], summaries=[], judges=[], flaky_sides=[],
            scenario=scenario, stage_cost=None,
        )  # fmt: skip

    @classmethod
    def worker_crashed(cls, nodeid: str) -> ItemPayload:
        """An item whose xdist worker died while running it: an error, nothing measured."""
        return cls(nodeid=nodeid, category=Outcome.WORKER_CRASHED)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": PAYLOAD_VERSION,
            **{f.name: getattr(self, f.name) for f in dataclasses.fields(self)},
            "category": self.category.value,
            "rubric": dataclasses.asdict(self.rubric),
            "summaries": [summary.to_json() for summary in self.summaries],
            "unpriced": list(self.unpriced),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ItemPayload:
        simple = {f.name for f in dataclasses.fields(cls)} - {
            "nodeid", "category", "rubric", "summaries", "unpriced",
        }  # fmt: skip
        return cls(
            nodeid=str(data.get("nodeid") or ""),
            category=Outcome(data.get("category") or Outcome.NO_VERDICT),
            rubric=RubricTally(**(data.get("rubric") or {})),
            summaries=[ResultSummary.from_json(s) for s in data.get("summaries") or ()],
            unpriced=tuple(str(name) for name in data.get("unpriced") or ()),
            **{name: data[name] for name in simple if data.get(name) is not None},
        )
