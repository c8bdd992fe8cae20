"""Per-run tallies the terminal summary reports: rubric traits per model, deep judgment's
unquoted attributes and traits, agent runs, cost; and each item's numeric rubric scores (which
baselines keep)."""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pytest_karenina.plugin.payload import ItemPayload
from pytest_karenina.rubrics.gates import TraitCheck


@dataclass
class TraitStats:
    """One trait of one answering model over the run."""

    kind: str
    values: list[float] = field(default_factory=list)
    labels: Counter[str] = field(default_factory=Counter)
    passed: int = 0
    gated: int = 0
    errors: int = 0

    def add(self, check: TraitCheck) -> None:
        value = check.value
        if check.error is not None:
            self.errors += 1
        elif isinstance(value, bool | int | float):
            self.values.append(float(value))
        elif isinstance(value, str):
            self.labels[value] += 1
        if check.gated:
            self.gated += 1
            self.passed += check.passed is True

    def describe(self) -> str:
        parts = []
        if self.values:
            parts.append(f"mean {sum(self.values) / len(self.values):.2f} (n={len(self.values)})")
        if self.labels:
            parts.append(", ".join(f"{label} {n}" for label, n in self.labels.most_common()))
        if self.gated:
            parts.append(f"pass {self.passed}/{self.gated}")
        if self.errors:
            parts.append(f"no value {self.errors}")
        return "; ".join(parts) or "no values"


def trait_rows(check: TraitCheck) -> list[tuple[str, TraitCheck]]:
    """A check, or one row per part of a metric or template-kind trait's value (and the
    trait itself, without a value, when it is gated)."""
    if not isinstance(check.value, dict):
        return [(check.name, check)]
    rows = [
        (f"{check.name}.{part}", dataclasses.replace(check, value=value, gated=False))
        for part, value in check.value.items()
    ]
    if check.gated:
        rows.append((check.name, dataclasses.replace(check, value=None)))
    return rows


@dataclass
class GroundingTally:
    """Results that went through deep judgment, and what they left without a verbatim
    quote (``what``: attributes or rubric traits)."""

    what: str
    judged: int = 0
    ungrounded: int = 0
    """Results with at least one name not quoted."""
    unquoted: Counter[str] = field(default_factory=Counter)
    """How many results left each name without a quote."""

    def add(self, unquoted: list[str] | None) -> None:
        """Count one result: its names without a quote, or None when it had no deep judgment."""
        if unquoted is None:
            return
        self.judged += 1
        self.ungrounded += bool(unquoted)
        self.unquoted.update(unquoted)

    def describe(self) -> str:
        line = f"{self.judged} results, {self.ungrounded} with {self.what} "
        line += "not quoted from the response"
        if self.unquoted:
            line += " (" + ", ".join(f"{n} {c}" for n, c in self.unquoted.most_common()) + ")"
        return line


@dataclass
class AgentTally:
    """Results answered by an agent run: how many, how many hit the call limit, and the
    failed tool calls per tool."""

    runs: int = 0
    limit_hits: int = 0
    failed_calls: Counter[str] = field(default_factory=Counter)

    def add(self, metrics: dict[str, Any] | None) -> None:
        if metrics is None:
            return
        self.runs += 1
        self.limit_hits += bool(metrics.get("limit_reached"))
        failed = metrics.get("suspect_failed_tools") or []
        for name in failed:
            self.failed_calls[name] += 1

    def describe(self) -> str:
        line = f"agents: {self.runs} results, {self.limit_hits} reached their call limit"
        if self.failed_calls:
            tools = ", ".join(f"{n} {c}" for n, c in self.failed_calls.most_common())
            line += f", failed tool calls in {sum(self.failed_calls.values())} ({tools})"
        return line


@dataclass
class CostTally:
    """USD spent over the run (items priced by the price table), the models without a
    price, and the items the cost cap did not start (which its gate reports)."""

    answerer: float = 0.0
    judge: float = 0.0
    priced: int = 0
    unpriced: set[str] = field(default_factory=set)
    capped: int = 0
    stages: dict[str, float] = field(default_factory=dict)
    """USD per pipeline stage (``answer_generation``, ``parsing``, ...)."""

    def add(
        self, cost: list[float] | None, unpriced: Iterable[str],
        stages: dict[str, float] | None = None,
    ) -> None:  # fmt: skip
        for stage, usd in (stages or {}).items():
            self.stages[stage] = self.stages.get(stage, 0.0) + usd
        if cost is None:
            return
        self.priced += 1
        self.answerer += cost[0]
        self.judge += cost[1]
        self.unpriced.update(unpriced)

    def lines(self) -> list[str]:
        found = []
        if self.priced:
            total = self.answerer + self.judge
            line = f"cost: ${total:.4f} (answerer ${self.answerer:.4f}, judge ${self.judge:.4f})"
            if self.unpriced:
                line += f"; no price for {', '.join(sorted(self.unpriced))}"
            found.append(line)
        return found

    def properties(self) -> list[tuple[str, str]]:
        if not self.priced:
            return []
        return [
            ("karenina.cost_usd", f"{self.answerer + self.judge:.6f}"),
            ("karenina.cost_answerer_usd", f"{self.answerer:.6f}"),
            ("karenina.cost_judge_usd", f"{self.judge:.6f}"),
        ]


def rubric_scores(payload: ItemPayload) -> dict[str, float]:
    """The mean of each numeric rubric trait (and metric part) over an item's results."""
    values: dict[str, list[float]] = {}
    for summary in payload.summaries:
        for check in summary.rubric:
            if check.skipped is not None or check.error is not None:
                continue
            for name, row in trait_rows(check):
                value = row.value
                if isinstance(value, bool | int | float) and math.isfinite(float(value)):
                    values.setdefault(name, []).append(float(value))
    return {name: rounded_mean(found) for name, found in values.items()}


def lower_is_better(payload: ItemPayload) -> set[str]:
    """The item's rubric traits whose lower values are the better ones."""
    return {check.name for s in payload.summaries for check in s.rubric if check.lower_is_better}


def rounded_mean(values: list[float]) -> float:
    """The mean of ``values``, rounded to 6 decimals (as baselines keep scores)."""
    return round(sum(values) / len(values), 6)
