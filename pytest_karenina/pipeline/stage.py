"""The stage protocol and the base classes custom stages build on."""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from typing import Any, Protocol, runtime_checkable

from pytest_karenina.llm.ports import Usage
from pytest_karenina.pipeline.artifacts import ArtifactKeys
from pytest_karenina.pipeline.context import VerificationContext
from pytest_karenina.pipeline.usage import UsageTracker

logger = logging.getLogger("pytest_karenina.pipeline")

VERDICT_REASON = "verdict_reason"
"""Artifact a stage may set while it runs: why it changed (or forced) the verdict, in words,
e.g. ``"deep judgment: no verbatim quote for codename"``. The orchestrator moves it to the
stage's entry of :data:`~pytest_karenina.pipeline.deciding_stage.STAGE_REASONS`, and the
reports name the stage with it."""


@runtime_checkable
class VerificationStage(Protocol):
    """What the orchestrator needs from a stage (structural: no base class required).

    ``requires`` / ``produces`` are artifact keys, used to validate stage order.
    ``execute`` changes the context in place and returns nothing.
    """

    @property
    def name(self) -> str: ...

    @property
    def requires(self) -> list[str]: ...

    @property
    def produces(self) -> list[str]: ...

    def should_run(self, context: VerificationContext) -> bool: ...

    def execute(self, context: VerificationContext) -> None: ...


class BaseVerificationStage(ABC):
    """Defaults for stages: no requirements, nothing produced, skip after an error."""

    #: The finalizer sets this: it runs even after an error.
    always_runs: bool = False

    @property
    @abstractmethod
    def name(self) -> str: ...

    @property
    def requires(self) -> list[str]:
        return []

    @property
    def produces(self) -> list[str]:
        return []

    def should_run(self, context: VerificationContext) -> bool:
        """False once a fatal error is recorded; call it first when overriding."""
        return context.error is None

    @abstractmethod
    def execute(self, context: VerificationContext) -> None: ...

    def get_or_create_usage_tracker(self, context: VerificationContext) -> UsageTracker:
        return context.usage_tracker()

    def set_artifact_and_result(self, context: VerificationContext, key: str, value: Any) -> None:
        context.set_artifact_and_result(key, value)


class BaseCheckStage(BaseVerificationStage):
    """A stage that detects a condition and may turn the verdict into a failure.

    Subclasses give ``_artifact_prefix`` (e.g. ``"abstention"``, which yields the
    ``abstention_check_performed`` / ``_detected`` / ``_override_applied`` /
    ``_reasoning`` artifacts and result fields), ``_detect`` and
    ``_should_trigger_override``. Usage is recorded under ``<prefix>_check``.
    """

    @property
    @abstractmethod
    def _artifact_prefix(self) -> str: ...

    @property
    def produces(self) -> list[str]:
        prefix = self._artifact_prefix
        return [f"{prefix}_check_performed", f"{prefix}_detected", f"{prefix}_reasoning"]

    @abstractmethod
    def _detect(
        self, context: VerificationContext
    ) -> tuple[bool | None, bool, str | None, Usage | None]:
        """Return ``(detected, check_performed, reasoning, usage)``."""

    @abstractmethod
    def _should_trigger_override(self, detected: bool | None, check_performed: bool) -> bool: ...

    def execute(self, context: VerificationContext) -> None:
        prefix = self._artifact_prefix
        detected, performed, reasoning, usage = self._detect(context)
        if usage is not None:
            judge = context.parsing_model.identity("parsing").display_string
            context.usage_tracker().record(f"{prefix}_check", usage, judge)
        context.set_artifact_and_result(f"{prefix}_check_performed", performed)
        context.set_artifact_and_result(f"{prefix}_detected", detected)
        context.set_artifact_and_result(f"{prefix}_reasoning", reasoning)
        override = self._should_trigger_override(detected, performed)
        context.set_artifact_and_result(f"{prefix}_override_applied", override)
        if override:
            # A verdict, not a problem: the result and the item's failure text say it already.
            logger.info("%s: %s check failed the answer", context.question_id, prefix)
            context.set_artifact_and_result(ArtifactKeys.VERIFY_RESULT, False)


class BaseAutoFailStage(BaseVerificationStage):
    """A guard that forces ``verify_result = False`` when its condition holds.

    ``should_run`` decides whether the condition holds (after the base checks);
    subclasses may skip when an earlier failure already decided the item, give a
    reason (logged, and the :data:`VERDICT_REASON` that ``metadata.failure`` and the reports
    show) and set extra result fields.
    """

    def should_run(self, context: VerificationContext) -> bool:
        if not super().should_run(context):
            return False
        return not self._should_skip_due_to_prior_failure(context)

    def _should_skip_due_to_prior_failure(self, context: VerificationContext) -> bool:
        return False

    @abstractmethod
    def _get_autofail_reason(self, context: VerificationContext) -> str: ...

    def _set_additional_failure_fields(self, context: VerificationContext) -> None:
        """Hook for stage-specific result fields; nothing by default."""

    def execute(self, context: VerificationContext) -> None:
        reason = self._get_autofail_reason(context)
        # A verdict, not a problem: VERDICT_REASON carries it to the item's failure text.
        logger.info("%s: auto-fail at stage %s: %s", context.question_id, self.name, reason)
        context.set_artifact(VERDICT_REASON, reason)
        context.record_autofail(self.name)
        self._set_additional_failure_fields(context)
