"""Run-level aggregation on the reporting process: pass rates, outcome counts, tokens, rubric
traits, cost; and the lines of the terminal summary that say them."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from pytest_karenina.plugin.payload import ItemPayload
from pytest_karenina.plugin.report.cluster_text import cluster_lines
from pytest_karenina.plugin.report.clusters import ClusterTally
from pytest_karenina.plugin.report.comparison import compare_models
from pytest_karenina.plugin.report.judge_agreement import JudgeAgreementTally
from pytest_karenina.plugin.report.pass_rates import pass_rate, pass_rates_by_model
from pytest_karenina.plugin.report.statements import Line, title
from pytest_karenina.plugin.report.tallies import (
    AgentTally,
    CostTally,
    GroundingTally,
    TraitStats,
    lower_is_better,
    rubric_scores,
    trait_rows,
)
from pytest_karenina.plugin.safe_text import terminal_safe
from pytest_karenina.plugin.verdict.outcome import Outcome
from pytest_karenina.results.statistics import pass_at_k


@dataclass
class RunSummary:
    """Payloads by node id (first one wins: a rerun item reports again), and what the run's
    reports and gates read of them."""

    payloads: dict[str, ItemPayload] = field(default_factory=dict)
    """By node id, scalars only (:meth:`ItemPayload.for_summary`)."""
    skipped: set[str] = field(default_factory=set)
    other_failures: int = 0
    """Failed or errored reports that are not a question's verdict (plain tests, collection
    errors, teardown errors): the pass-rate gate never forgives them."""
    _rubric: dict[str, dict[str, TraitStats]] = field(default_factory=dict)
    deep_judgment: GroundingTally = field(default_factory=lambda: GroundingTally("attributes"))
    """Template deep judgment's results, by attribute."""
    rubric_deep_judgment: GroundingTally = field(
        default_factory=lambda: GroundingTally("rubric traits")
    )
    agents: AgentTally = field(default_factory=AgentTally)
    cost: CostTally = field(default_factory=CostTally)
    flaky: list[str] = field(default_factory=list)
    """``question [model] passed/replicates`` of each item whose replicates disagreed (or
    ``judge passed/judge replicates``: whose judge disagreed with itself on an answer)."""
    flaky_sides: list[str] = field(default_factory=list)
    """``question [model]: judge-side: ...`` / ``answer-side: ...``: which side of each
    flaky item flipped."""
    judge: JudgeAgreementTally = field(default_factory=JudgeAgreementTally)
    """The judge's agreement with itself (judge replicates)."""
    pass_at: int | None = None
    """``K`` of a ``pass@K`` replicate policy: the summary then estimates pass@K."""
    compare_to: str | None = None
    """The reference answering model of the paired comparison (``--karenina-compare-to``)."""
    rubric_scores: dict[str, dict[str, float]] = field(default_factory=dict)
    """Node id -> the item's mean numeric rubric values (for baselines)."""
    lower_is_better: set[str] = field(default_factory=set)
    """Rubric traits (and metric parts) whose lower values are the better ones."""
    reasons: dict[str, str] = field(default_factory=dict)
    """Node id -> the first line of why a failed or errored item did not pass."""
    clusters: ClusterTally = field(default_factory=ClusterTally)
    """The run's failures, grouped by what went wrong (:mod:`.clusters`)."""

    def add(self, payload: ItemPayload) -> bool:
        """Count ``payload`` (its rubric checks now, its scalars kept); False when its item
        has reported already."""
        if payload.nodeid in self.payloads:
            return False
        model = self._rubric.setdefault(payload.answering_model or "?", {})
        self.cost.add(payload.cost, payload.unpriced, payload.stage_cost)
        if payload.flaky:
            name = f"{payload.question_id} [{payload.answering_model}]"
            self.flaky.append(f"{name} {payload.flaky}")
            self.flaky_sides += [f"{name}: {side}" for side in payload.flaky_sides]
        self.judge.add(payload)
        self.clusters.add(payload)
        for summary in payload.summaries:
            self.deep_judgment.add(summary.unquoted)
            self.rubric_deep_judgment.add(summary.unquoted_traits)
            self.agents.add(summary.agent)
            for check in summary.rubric:
                if check.skipped is not None:
                    continue
                for name, row in trait_rows(check):
                    model.setdefault(name, TraitStats(check.kind)).add(row)
        scores = rubric_scores(payload)
        if scores:  # most runs have no rubric: keep nothing per item for them
            self.rubric_scores[payload.nodeid] = scores
        self.lower_is_better |= lower_is_better(payload)
        self.payloads[payload.nodeid] = payload.for_summary()
        return True

    def add_skip(self, nodeid: str) -> None:
        self.skipped.add(nodeid)

    @property
    def total(self) -> int:
        return len(self.payloads)

    @property
    def passed(self) -> int:
        return sum(1 for p in self.payloads.values() if p.category is Outcome.PASS)

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.total if self.total else None

    def by_model(self) -> dict[str, tuple[int, int]]:
        """Answering model -> (passed, total)."""
        found: dict[str, tuple[int, int]] = {}
        for payload in self.payloads.values():
            model = payload.answering_model or "?"
            passed, total = found.get(model, (0, 0))
            found[model] = (passed + (payload.category is Outcome.PASS), total + 1)
        return found

    def rubric_stats(self) -> dict[str, dict[str, TraitStats]]:
        """Answering model -> trait (or trait.part) -> statistics, in first-seen order."""
        return {model: traits for model, traits in self._rubric.items() if traits}

    def categories(self) -> Counter[str]:
        return Counter(p.category.value for p in self.payloads.values())

    def tokens(self) -> tuple[int, int]:
        return (
            sum(p.input_tokens for p in self.payloads.values()),
            sum(p.output_tokens for p in self.payloads.values()),
        )

    def suite_properties(self) -> list[tuple[str, str]]:
        """The run's JUnit suite properties: the pass rate and its 95% interval, the cost."""
        found: list[tuple[str, str]] = []
        rate = pass_rate(self.payloads.values())
        if rate is not None:
            found += [
                ("karenina.pass_rate", f"{rate.rate:.4f}"),
                ("karenina.pass_rate_ci_low", f"{rate.low:.4f}"),
                ("karenina.pass_rate_ci_high", f"{rate.high:.4f}"),
            ]
        return found + self.cost.properties() + self.judge.suite_properties()

    def _scenarios(self) -> list[ItemPayload]:
        return [p for p in self.payloads.values() if p.scenario is not None]

    def _covered(self) -> str:
        """What the pass rate covers: ``items``, or with scenarios how many of each kind."""
        scenarios = len(self._scenarios())
        if not scenarios:
            return "items"
        questions = len(self.payloads) - scenarios
        return f"items: {questions} question(s), {scenarios} scenario(s)"

    def scenario_lines(self) -> list[Line]:
        """Scenarios counted apart from questions: passed of run, and their outcomes."""
        scenarios = self._scenarios()
        if not scenarios:
            return []
        passed = sum(1 for p in scenarios if p.category is Outcome.PASS)
        counts = Counter(str(p.category) for p in scenarios)
        outcomes = ", ".join(f"{name} {count}" for name, count in sorted(counts.items()))
        return [Line(f"scenarios: {passed}/{len(scenarios)} passed ({outcomes})")]

    def lines(self) -> list[Line]:
        """The terminal summary's karenina section (none when nothing was reported): pass
        rates, outcomes, tokens, cost, deep judgment, agents, flaky items (and which side
        flipped), the judge's self-agreement, pass@K, rubric traits. The gates' lines follow
        it (:func:`~..gates.protocol.run_lines`)."""
        if not self.payloads and not self.skipped:
            return []
        found = [title("karenina summary")]
        overall = pass_rate(self.payloads.values())
        if overall is None:
            found.append(Line("pass rate n/a (0/0 items)"))
        else:
            found.append(Line(
                f"pass rate {overall.rate:.1%} ({overall.passed}/{overall.total} "
                f"{self._covered()}), 95% CI {overall.low:.1%}-{overall.high:.1%}"
            ))  # fmt: skip
        for model, rate in pass_rates_by_model(self.payloads.values()).items():
            text = (
                f"  {model}: {rate.rate:.1%} ({rate.passed}/{rate.total}), "
                f"95% CI {rate.low:.1%}-{rate.high:.1%}"
            )
            found.append(Line(terminal_safe(text)))
        found += self.scenario_lines()
        comparison = compare_models(self.payloads.values(), self.compare_to)
        found += [Line(terminal_safe(line)) for line in (comparison.lines() if comparison else ())]
        counts = self.categories()
        if self.skipped:
            counts["skipped"] = len(self.skipped)
        outcomes = ", ".join(f"{name} {count}" for name, count in sorted(counts.items()))
        found.append(Line(f"outcomes: {outcomes}"))
        found += cluster_lines(self.clusters)
        input_tokens, output_tokens = self.tokens()
        found.append(Line(f"tokens: {input_tokens} in, {output_tokens} out"))
        found += [Line(terminal_safe(line)) for line in self.cost.lines()]
        if self.deep_judgment.judged:
            found.append(Line(terminal_safe(f"deep judgment: {self.deep_judgment.describe()}")))
        if self.rubric_deep_judgment.judged:
            text = f"rubric deep judgment: {self.rubric_deep_judgment.describe()}"
            found.append(Line(terminal_safe(text)))
        if self.agents.runs:
            found.append(Line(terminal_safe(self.agents.describe())))
        if self.flaky:
            flaky = terminal_safe(", ".join(self.flaky))
            found.append(Line(f"flaky: {len(self.flaky)} items ({flaky})"))
            found += [Line(terminal_safe(f"  {side}")) for side in self.flaky_sides]
        found += [Line(line) for line in self.judge.lines()]
        estimate = self.pass_at_k()
        if estimate is not None:
            found.append(Line(estimate))
        rubric = self.rubric_stats()
        if rubric:
            found.append(Line("rubric traits:"))
            for model, traits in sorted(rubric.items()):
                found.append(Line(f"  {terminal_safe(model)}:"))
                for name, stats in traits.items():
                    found.append(
                        Line(terminal_safe(f"    {name} ({stats.kind}): {stats.describe()}"))
                    )
        return found

    def pass_at_k(self) -> str | None:
        """``pass@2 (unbiased estimate from 3 replicates): 83.3% over 4 items``, when the
        policy is pass@K and more than K replicates ran."""
        k = self.pass_at
        counts = [p.replicate_passes for p in self.payloads.values() if p.replicate_passes]
        if k is None or not counts or any(n <= k for _, n in counts):
            return None
        mean = sum(pass_at_k(n, c, k) for c, n in counts) / len(counts)
        replicates = max(n for _, n in counts)
        return (
            f"pass@{k} (unbiased estimate from {replicates} replicates): {mean:.1%} "
            f"over {len(counts)} items"
        )
