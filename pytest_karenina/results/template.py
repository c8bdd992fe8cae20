"""``VerificationResultTemplate``: answer generation, parsing and template verification."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

SEED_ONLY_TEMPLATE_FIELDS = frozenset({"template_validation_error"})
"""Template fields of the seed documents that current Karenina does not store."""


class VerificationResultTemplate(BaseModel):
    """Everything the template path produced (in ``rubric_only`` mode: the answer, no verdict).

    Groups (all with None/False/empty defaults):

    * answer: ``raw_llm_response`` (the trace text, see :mod:`~pytest_karenina.results.trace`),
      ``trace_messages`` and ``conversation_context`` (message dicts ``{role, content,
      block_index, ...}``);
    * parsing and verification: ``template_validation_error`` (seed "13 Stages"; None on
      success), ``parsed_gt_response``, ``parsed_llm_response``,
      ``template_verification_performed``, ``verify_result`` (None when verification did not
      run), ``verify_granular_result``, ``field_verification_error``, ``field_results``
      (tri-valued per field), ``field_scores``, ``composition_strategy``;
    * ``embedding_*`` and ``regex_*`` checks;
    * guards: ``recursion_limit_reached``, ``response_timeout_partial``, ``usage_unavailable``;
    * agentic and dynamic parsing: ``investigation_trace``, ``agentic_*``, ``dynamic_*``;
    * ``abstention_*`` and ``sufficiency_*`` checks (``sufficiency_detected`` True means the
      response *was* sufficient);
    * ``answering_mcp_servers``, ``usage_metadata`` (per stage plus ``total``) and
      ``agent_metrics``.
    """

    model_config = ConfigDict(extra="ignore")

    template_validation_error: str | None = None
    raw_llm_response: str = ""
    trace_messages: list[dict[str, Any]] = Field(default_factory=list)
    conversation_context: list[dict[str, Any]] = Field(default_factory=list)
    parsed_gt_response: dict[str, Any] | None = None
    parsed_llm_response: dict[str, Any] | None = None

    template_verification_performed: bool = False
    verify_result: bool | None = None
    verify_granular_result: Any | None = None
    field_verification_error: str | None = None
    field_results: dict[str, bool | None] | None = None
    field_scores: dict[str, float | None] | None = None
    composition_strategy: str | None = None

    embedding_check_performed: bool = False
    embedding_similarity_score: float | None = None
    embedding_override_applied: bool = False
    embedding_model_used: str | None = None

    regex_validations_performed: bool = False
    regex_validation_results: dict[str, bool] | None = None
    regex_validation_details: dict[str, dict[str, Any]] | None = None
    regex_overall_success: bool | None = None
    regex_extraction_results: dict[str, Any] | None = None

    recursion_limit_reached: bool = False
    response_timeout_partial: bool = False
    usage_unavailable: bool = False

    investigation_trace: str | None = None
    agentic_parsing_performed: bool = False
    agentic_extraction_recovery: Any | None = None
    agentic_extraction_error: str | None = None
    dynamic_parsing_performed: bool = False
    dynamic_parse_decision: str | None = None
    dynamic_decision_reasoning: str | None = None

    abstention_check_performed: bool = False
    abstention_detected: bool | None = None
    abstention_override_applied: bool = False
    abstention_reasoning: str | None = None

    sufficiency_check_performed: bool = False
    sufficiency_detected: bool | None = None
    sufficiency_override_applied: bool = False
    sufficiency_reasoning: str | None = None

    answering_mcp_servers: list[str] | None = None
    usage_metadata: dict[str, dict[str, Any]] | None = None
    agent_metrics: dict[str, Any] | None = None
