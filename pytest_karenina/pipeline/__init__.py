"""The verification pipeline: context, stages, orchestrator and the run entry points.

Custom stages import their building blocks from here::

    from pytest_karenina.pipeline import ArtifactKeys, BaseVerificationStage, VerificationContext
"""

from pytest_karenina.pipeline.artifacts import ArtifactKeys
from pytest_karenina.pipeline.context import VerificationContext
from pytest_karenina.pipeline.orchestrator import FINAL_RESULT, StageOrchestrator, StageRegistry
from pytest_karenina.pipeline.stage import (
    BaseAutoFailStage,
    BaseCheckStage,
    BaseVerificationStage,
    VerificationStage,
)
from pytest_karenina.pipeline.usage import UsageTracker

__all__ = [
    "FINAL_RESULT",
    "ArtifactKeys",
    "BaseAutoFailStage",
    "BaseCheckStage",
    "BaseVerificationStage",
    "StageOrchestrator",
    "StageRegistry",
    "UsageTracker",
    "VerificationContext",
    "VerificationStage",
]
