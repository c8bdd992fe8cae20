"""``VerificationResultRubric``: rubric trait scores, split by trait type."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

TraitType = Literal["llm", "regex", "callable", "metric", "agentic"]
"""The trait types :meth:`VerificationResultRubric.get_trait_by_name` reports."""

ScoreValue = bool | int | float | str | list[Any] | dict[str, Any] | None
"""A trait value: bool (boolean kind), int (score kind, or class index of a literal trait),
or, for the fields of template-kind traits (keys ``"trait.field"``), whatever the field holds."""


class VerificationResultRubric(BaseModel):
    """Rubric results; present when rubric (or agentic rubric) evaluation produced scores.

    A trait whose value is None is left out of the per-type dicts, and an empty dict is stored
    as None. ``llm_trait_labels`` maps literal-kind traits to their class name (an index of -1
    in ``llm_trait_scores`` marks an invalid or missing classification).
    ``metric_trait_scores`` is ``{trait: {metric: float}}`` and
    ``metric_trait_confusion_lists`` is ``{trait: {"tp"|"fn"|"fp"|"tn": [str]}}``.
    ``trait_provenance`` maps trait names to ``"global"``, ``"question_specific"`` or
    ``"dynamic"``.

    Two fields are pytest-karenina's own (Karenina ignores them when it loads an export):
    ``llm_trait_reasoning`` holds the judge's reasoning per LLM trait when it gave one, and
    ``trait_errors`` why a trait has no value (a callable that cannot be loaded, a judge
    call that failed, a trait missing from the judge's reply...). A trait is never dropped
    silently: it has a value or an entry in ``trait_errors``.
    """

    model_config = ConfigDict(extra="ignore")

    rubric_evaluation_performed: bool = False
    rubric_evaluation_strategy: str | None = None
    llm_trait_scores: dict[str, ScoreValue] | None = None
    llm_trait_labels: dict[str, str] | None = None
    regex_trait_scores: dict[str, bool] | None = None
    callable_trait_scores: dict[str, bool | int | float] | None = None
    metric_trait_scores: dict[str, dict[str, float]] | None = None
    metric_trait_confusion_lists: dict[str, dict[str, list[str]]] | None = None
    agentic_trait_scores: dict[str, ScoreValue] | None = None
    agentic_trait_investigation_traces: dict[str, str] | None = None
    agentic_trait_extraction_metadata: dict[str, Any] | None = None
    dynamic_rubric_skipped_traits: dict[str, str] | None = None
    dynamic_rubric_promoted_traits: list[str] | None = None
    trait_provenance: dict[str, str] | None = None
    llm_trait_reasoning: dict[str, str] | None = None
    trait_errors: dict[str, str] | None = None

    def _scores_by_type(self) -> list[tuple[TraitType, dict[str, Any] | None]]:
        return [
            ("llm", self.llm_trait_scores),
            ("regex", self.regex_trait_scores),
            ("callable", self.callable_trait_scores),
            ("metric", self.metric_trait_scores),
            ("agentic", self.agentic_trait_scores),
        ]

    def get_all_trait_scores(self) -> dict[str, Any]:
        """Every trait score of every type in one flat ``{name: value}`` dict.

        Types are merged in the order llm, regex, callable, metric, agentic; when two types
        share a trait name the later one wins (read the per-type dicts in that case).
        Metric traits contribute their ``{metric: float}`` dict.
        """
        scores: dict[str, Any] = {}
        for _, by_name in self._scores_by_type():
            scores.update(by_name or {})
        return scores

    def get_trait_by_name(self, name: str) -> tuple[Any, TraitType] | None:
        """``(value, trait_type)`` of the trait called ``name``, or None if no type has it.

        Types are searched in the order llm, regex, callable, metric, agentic.
        """
        for trait_type, by_name in self._scores_by_type():
            if by_name and name in by_name:
                return by_name[name], trait_type
        return None

    def get_llm_trait_labels(self) -> dict[str, str]:
        """Class names of literal-kind LLM traits (``{}`` when there are none)."""
        return dict(self.llm_trait_labels or {})
