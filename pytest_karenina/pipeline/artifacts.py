"""``ArtifactKeys``: the names stages use for artifacts and result fields.

The values are Karenina's, so custom stages written against Karenina's
constants read and write the same keys here.
"""

from __future__ import annotations

FINAL_RESULT = "final_result"
"""Artifact key under which the finalizer leaves the ``VerificationResult``."""


class ArtifactKeys:
    """String constants for ``context.set_artifact`` / ``set_result_field`` keys."""

    # Answer generation and parsing
    RAW_LLM_RESPONSE = "raw_llm_response"
    TRACE_MESSAGES = "trace_messages"
    CONVERSATION_CONTEXT = "conversation_context"
    PARSED_ANSWER = "parsed_answer"
    USAGE_TRACKER = "usage_tracker"
    AGENT_METRICS = "agent_metrics"
    ANSWERING_MCP_SERVERS = "answering_mcp_servers"

    # Template classes (ValidateTemplate)
    ANSWER = "Answer"
    RAW_ANSWER = "RawAnswer"
    TEMPLATE_VALIDATION_ERROR = "template_validation_error"
    TEMPLATE_MODE = "template_mode"

    # Model identification
    ANSWERING_MODEL_IDENTITY = "answering_model_identity"
    PARSING_MODEL_IDENTITY = "parsing_model_identity"
    PARSING_MODEL_STR = "parsing_model_str"

    # Verification
    VERIFY_RESULT = "verify_result"
    VERIFY_GRANULAR_RESULT = "verify_granular_result"
    FIELD_VERIFICATION_RESULT = "field_verification_result"
    FIELD_VERIFICATION_ERROR = "field_verification_error"
    FIELD_RESULTS = "field_results"
    FIELD_SCORES = "field_scores"
    COMPOSITION_STRATEGY = "composition_strategy"
    TEMPLATE_VERIFICATION_PERFORMED = "template_verification_performed"
    PARSED_GT_RESPONSE = "parsed_gt_response"
    PARSED_LLM_RESPONSE = "parsed_llm_response"

    # Regex checks
    REGEX_VALIDATIONS_PERFORMED = "regex_validations_performed"
    REGEX_VALIDATION_RESULTS = "regex_validation_results"
    REGEX_VALIDATION_DETAILS = "regex_validation_details"
    REGEX_OVERALL_SUCCESS = "regex_overall_success"
    REGEX_EXTRACTION_RESULTS = "regex_extraction_results"

    # Guards
    RECURSION_LIMIT_REACHED = "recursion_limit_reached"
    RESPONSE_TIMEOUT_PARTIAL = "response_timeout_partial"
    USAGE_UNAVAILABLE = "usage_unavailable"
    MCP_ENABLED = "mcp_enabled"
    TRACE_VALIDATION_FAILED = "trace_validation_failed"
    TRACE_VALIDATION_ERROR = "trace_validation_error"
    TRACE_EXTRACTION_ERROR = "trace_extraction_error"
    FAILED_STAGE = "failed_stage"

    # Abstention and sufficiency
    ABSTENTION_CHECK_PERFORMED = "abstention_check_performed"
    ABSTENTION_DETECTED = "abstention_detected"
    ABSTENTION_OVERRIDE_APPLIED = "abstention_override_applied"
    ABSTENTION_REASONING = "abstention_reasoning"
    SUFFICIENCY_CHECK_PERFORMED = "sufficiency_check_performed"
    SUFFICIENCY_DETECTED = "sufficiency_detected"
    SUFFICIENCY_OVERRIDE_APPLIED = "sufficiency_override_applied"
    SUFFICIENCY_REASONING = "sufficiency_reasoning"

    # Embedding check
    EMBEDDING_CHECK_PERFORMED = "embedding_check_performed"
    EMBEDDING_SIMILARITY_SCORE = "embedding_similarity_score"
    EMBEDDING_OVERRIDE_APPLIED = "embedding_override_applied"
    EMBEDDING_MODEL_USED = "embedding_model_used"

    # Rubric evaluation
    RUBRIC_RESULT = "rubric_result"
    VERIFY_RUBRIC = "verify_rubric"
    LLM_TRAIT_LABELS = "llm_trait_labels"
    METRIC_TRAIT_METRICS = "metric_trait_metrics"
    METRIC_TRAIT_CONFUSION_LISTS = "metric_trait_confusion_lists"
    RUBRIC_EVALUATION_STRATEGY = "rubric_evaluation_strategy"

    # Agentic rubric traits (stage 11b): artifacts only, the values of the rubric section's
    # fields of those names
    AGENTIC_RUBRIC_EVALUATION_PERFORMED = "agentic_rubric_evaluation_performed"
    AGENTIC_TRAIT_SCORES = "agentic_trait_scores"
    AGENTIC_TRAIT_INVESTIGATION_TRACES = "agentic_trait_investigation_traces"
    AGENTIC_TRAIT_EXTRACTION_METADATA = "agentic_trait_extraction_metadata"

    # Deep judgment (templates): artifacts ParseTemplate sets, named like the fields of the
    # deep_judgment result section they equal
    DEEP_JUDGMENT_PERFORMED = "deep_judgment_performed"
    EXTRACTED_EXCERPTS = "extracted_excerpts"
    ATTRIBUTE_REASONING = "attribute_reasoning"
    ATTRIBUTES_WITHOUT_EXCERPTS = "attributes_without_excerpts"
    DEEP_JUDGMENT_STAGES_COMPLETED = "deep_judgment_stages_completed"
    DEEP_JUDGMENT_MODEL_CALLS = "deep_judgment_model_calls"
    DEEP_JUDGMENT_EXCERPT_RETRY_COUNT = "deep_judgment_excerpt_retry_count"
    HALLUCINATION_RISK_ASSESSMENT = "hallucination_risk_assessment"

    # Deep judgment (rubrics)
    DEEP_JUDGMENT_RUBRIC_PERFORMED = "deep_judgment_rubric_performed"
    TRAITS_WITHOUT_VALID_EXCERPTS = "traits_without_valid_excerpts"

    # Agentic parsing (seed 004, section 7); WORKSPACE_PATH is an artifact only
    INVESTIGATION_TRACE = "investigation_trace"
    WORKSPACE_PATH = "workspace_path"
    AGENTIC_PARSING_PERFORMED = "agentic_parsing_performed"
    AGENTIC_EXTRACTION_RECOVERY = "agentic_extraction_recovery"
    AGENTIC_EXTRACTION_ERROR = "agentic_extraction_error"
    TEMPLATE_EVALUATOR = "template_evaluator"

    # Trace filtering and evaluation input
    USED_FULL_TRACE = "used_full_trace"
    EVALUATION_INPUT = "evaluation_input"

    # Scenario context (conditional ground truth)
    SCENARIO_NODE_RESULTS = "scenario_node_results"
