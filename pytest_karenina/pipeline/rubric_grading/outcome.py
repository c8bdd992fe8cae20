"""``RubricOutcome``: what one rubric evaluation found, gathered trait by trait."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pytest_karenina.llm.ports import Usage
from pytest_karenina.results.rubric import VerificationResultRubric


@dataclass
class RubricOutcome:
    """Scores by trait type plus, per trait, the judge's reasoning or why it has no value.

    Template-kind LLM traits store one score per field under ``"trait.field"``; their
    errors are keyed by the trait name.
    """

    llm_scores: dict[str, Any] = field(default_factory=dict)
    llm_labels: dict[str, str] = field(default_factory=dict)
    llm_reasoning: dict[str, str] = field(default_factory=dict)
    regex_scores: dict[str, bool] = field(default_factory=dict)
    callable_scores: dict[str, bool | int] = field(default_factory=dict)
    metric_scores: dict[str, dict[str, float]] = field(default_factory=dict)
    confusion_lists: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    provenance: dict[str, str] = field(default_factory=dict)
    promoted: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    calls: int = 0

    def fail(self, trait: str, reason: str) -> None:
        """Record why ``trait`` has no value (the first reason is kept)."""
        self.errors.setdefault(trait, reason)

    def add_usage(self, usage: Usage) -> None:
        self.usage = self.usage + usage
        self.calls += 1

    def to_result(self, strategy: str | None) -> VerificationResultRubric:
        """The result section; empty dicts become None, as in Karenina. The evaluation was
        performed (seed 001) even when no trait yielded a value."""
        return VerificationResultRubric(
            rubric_evaluation_performed=True,
            rubric_evaluation_strategy=strategy,
            llm_trait_scores=self.llm_scores or None,
            llm_trait_labels=self.llm_labels or None,
            regex_trait_scores=self.regex_scores or None,
            callable_trait_scores=self.callable_scores or None,
            metric_trait_scores=self.metric_scores or None,
            metric_trait_confusion_lists=self.confusion_lists or None,
            dynamic_rubric_skipped_traits=self.skipped or None,
            dynamic_rubric_promoted_traits=self.promoted or None,
            trait_provenance=self.provenance or None,
            llm_trait_reasoning=self.llm_reasoning or None,
            trait_errors=self.errors or None,
        )
