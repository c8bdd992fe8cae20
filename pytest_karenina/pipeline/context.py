"""``VerificationContext``: the state one question's pipeline run shares between stages.

Stages communicate through *artifacts* (working data for later stages) and
*result fields* (values the final ``VerificationResult`` is built from). A
stage that cannot continue calls :meth:`VerificationContext.mark_error`; later
stages then skip, except the finalizer.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_karenina.pipeline.artifacts import ArtifactKeys
from pytest_karenina.pipeline.usage import UsageTracker
from pytest_karenina.results.ids import pipeline_timestamp
from pytest_karenina.rubrics.traits import Rubric

if TYPE_CHECKING:
    from pytest_karenina.config.model import ModelConfig
    from pytest_karenina.config.verification import VerificationConfig
    from pytest_karenina.llm.agent_ports import AgentPort
    from pytest_karenina.llm.ports import ChatPort, StructuredPort


FEATURE_FLAGS = (
    "agentic_parsing", "agentic_judge_context", "agentic_parsing_max_turns",
    "agentic_parsing_timeout", "agentic_rubric_strategy", "agentic_rubric_parallel",
    "workspace_copy", "workspace_cleanup",
)  # fmt: skip
"""The ``VerificationConfig`` settings a context carries as fields of its own (seed 004)."""


def extract_feature_flags(config: VerificationConfig) -> dict[str, Any]:
    """The context fields named in :data:`FEATURE_FLAGS`, from ``config``."""
    return {name: getattr(config, name) for name in FEATURE_FLAGS}


@dataclass
class VerificationContext:
    """Everything a stage may read or write for one question x model pair x replicate.

    The ports stages call: ``answering_llm`` (the model under test),
    ``judge_llm`` (template parsing), ``judge_checks`` (the judge at temperature
    0, for abstention and sufficiency) and ``judge_chat`` (free-text judge
    questions); ``answering_agent`` when the answering model works as an agent, and
    ``judge_agent`` when the parsing model is a deep agent. ``config`` is the run's
    configuration (None only in hand-built contexts, e.g. stage tests).

    Agentic evaluation (seed 004, section 8): the run's settings ``agentic_parsing``,
    ``agentic_judge_context``, ``agentic_parsing_max_turns``, ``agentic_parsing_timeout``,
    ``agentic_rubric_strategy``, ``agentic_rubric_parallel``, ``workspace_copy`` and
    ``workspace_cleanup`` (:func:`extract_feature_flags`; the stages read them here, so a
    stage or ``prepare`` hook that changes one is followed), ``workspace_root`` and the
    question's ``question_workspace_path``; GenerateAnswer sets ``workspace_path`` (and
    ``workspace_is_copy``) when the answer has a workspace (agentic parsing, or agentic
    rubric traits that read it).

    Rubrics: ``rubric`` holds the question's own traits, ``global_rubric`` the
    benchmark's global traits and ``dynamic_rubric`` its dynamic traits (graded
    only when the response deals with their concept); RubricEvaluation merges them.
    """

    question_id: str
    question_text: str
    template_code: str
    answering_model: ModelConfig
    parsing_model: ModelConfig
    template_id: str = "no_template"
    config: VerificationConfig | None = None
    rubric: Rubric | None = None
    global_rubric: Rubric | None = None
    dynamic_rubric: Rubric | None = None
    keywords: list[str] | None = None
    raw_answer: str | None = None
    run_name: str | None = None
    replicate: int | None = None
    judge_replicate: int | None = None
    """Which of the judge replicates judges the answer (None without judge replicates)."""
    few_shot_examples: list[dict[str, str]] | None = None
    answering_llm: ChatPort | None = None
    judge_llm: StructuredPort | None = None
    judge_checks: StructuredPort | None = None
    judge_chat: ChatPort | None = None
    answering_agent: AgentPort | None = None
    judge_agent: AgentPort | None = None
    agentic_parsing: bool = False
    agentic_judge_context: str = "workspace_only"
    agentic_parsing_max_turns: int = 15
    agentic_parsing_timeout: float = 120.0
    agentic_rubric_strategy: str = "individual"
    agentic_rubric_parallel: bool = False
    workspace_copy: bool = True
    workspace_cleanup: bool = True
    workspace_root: Path | None = None
    question_workspace_path: str | None = None
    workspace_path: Path | None = None
    workspace_is_copy: bool = False
    artifacts: dict[str, Any] = field(default_factory=dict)
    result_fields: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    error_stage: str | None = None
    warnings: list[str] = field(default_factory=list)
    started_at: float = field(default_factory=time.perf_counter)
    timestamp: str = field(default_factory=pipeline_timestamp)

    @property
    def completed_without_errors(self) -> bool:
        return self.error is None

    def set_artifact(self, key: str, value: Any) -> None:
        self.artifacts[key] = value

    def get_artifact(self, key: str, default: Any = None) -> Any:
        return self.artifacts.get(key, default)

    def has_artifact(self, key: str) -> bool:
        return key in self.artifacts

    def set_result_field(self, key: str, value: Any) -> None:
        self.result_fields[key] = value

    def get_result_field(self, key: str, default: Any = None) -> Any:
        return self.result_fields.get(key, default)

    def set_artifact_and_result(self, key: str, value: Any) -> None:
        """Store ``value`` both as an artifact and as a result field."""
        self.artifacts[key] = value
        self.result_fields[key] = value

    def mark_error(self, message: str, stage: str | None = None) -> None:
        """Record a fatal error; later stages skip (the finalizer still runs).

        The first error wins: a later one is kept as a warning instead.
        """
        if self.error is None:
            self.error = message
            self.error_stage = stage
        else:
            self.warnings.append(message)

    def usage_tracker(self) -> UsageTracker:
        """The run's usage tracker, created on first use."""
        tracker = self.artifacts.get(ArtifactKeys.USAGE_TRACKER)
        if not isinstance(tracker, UsageTracker):
            tracker = UsageTracker()
            self.artifacts[ArtifactKeys.USAGE_TRACKER] = tracker
        return tracker

    def record_autofail(self, stage: str) -> None:
        """Force the verdict to False and remember the first guard that did it."""
        self.set_artifact_and_result(ArtifactKeys.VERIFY_RESULT, False)
        self.set_artifact(ArtifactKeys.FIELD_VERIFICATION_RESULT, False)
        if not self.has_artifact(ArtifactKeys.FAILED_STAGE):
            self.set_artifact(ArtifactKeys.FAILED_STAGE, stage)
