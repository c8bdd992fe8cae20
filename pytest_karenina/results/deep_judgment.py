"""Deep-judgment sections: excerpts and reasoning for template attributes and rubric traits."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

SEED_ONLY_DEEP_JUDGMENT_FIELDS = frozenset({"deep_judgment_enabled"})
"""Deep-judgment fields of the seed document that current Karenina replaced."""


class VerificationResultDeepJudgment(BaseModel):
    """Multi-stage template parsing; present when the template deep-judgment mode is enabled.

    ``deep_judgment_mode`` is current Karenina's (``"full"``, ``"reasoning_only"``, ...);
    ``deep_judgment_enabled`` is the seed document's flag. When loading data without the flag
    it is derived: True iff a mode other than ``"disabled"`` is recorded.

    ``extracted_excerpts`` is ``{attribute: [{text, confidence, similarity_score, ...}]}``
    (an empty list: no excerpt found), ``attribute_reasoning`` is ``{attribute: text}``,
    ``hallucination_risk_assessment`` is ``{attribute: "none"|"low"|"medium"|"high"}`` and
    only filled when search was enabled.
    """

    model_config = ConfigDict(extra="ignore")

    deep_judgment_mode: str | None = None
    deep_judgment_enabled: bool = False
    deep_judgment_performed: bool = False
    extracted_excerpts: dict[str, list[dict[str, Any]]] | None = None
    attribute_reasoning: dict[str, str] | None = None
    deep_judgment_stages_completed: list[str] | None = None
    deep_judgment_model_calls: int = 0
    deep_judgment_excerpt_retry_count: int = 0
    attributes_without_excerpts: list[str] | None = None
    deep_judgment_search_enabled: bool = False
    hallucination_risk_assessment: dict[str, str] | None = None

    @model_validator(mode="before")
    @classmethod
    def _derive_enabled(cls, data: Any) -> Any:
        if isinstance(data, dict) and "deep_judgment_enabled" not in data:
            mode = data.get("deep_judgment_mode")
            return {**data, "deep_judgment_enabled": mode not in (None, "disabled")}
        return data


class VerificationResultDeepJudgmentRubric(BaseModel):
    """Deep judgment of rubric traits; present when it ran for at least one trait.

    ``deep_judgment_rubric_scores`` holds the traits evaluated with deep judgment and
    ``standard_rubric_scores`` the others of the same rubric. ``trait_metadata`` is per trait
    ``{stages_completed, model_calls, had_excerpts, excerpt_retry_count, ...}``.
    ``traits_without_valid_excerpts`` lists the traits that exhausted their excerpt retries
    (they trigger the DeepJudgmentRubricAutoFail stage).
    ``rubric_hallucination_risk_assessment`` is ``{trait: {overall_risk, per_excerpt_risks}}``.
    """

    model_config = ConfigDict(extra="ignore")

    deep_judgment_rubric_performed: bool = False
    extracted_rubric_excerpts: dict[str, list[dict[str, Any]]] | None = None
    rubric_trait_reasoning: dict[str, str] | None = None
    deep_judgment_rubric_scores: dict[str, int | bool] | None = None
    standard_rubric_scores: dict[str, int | bool] | None = None
    trait_metadata: dict[str, dict[str, Any]] | None = None
    traits_without_valid_excerpts: list[str] | None = None
    rubric_hallucination_risk_assessment: dict[str, dict[str, Any]] | None = None
    total_deep_judgment_model_calls: int = 0
    total_traits_evaluated: int = 0
    total_excerpt_retries: int = 0
