"""The verification pipeline: context, stages, orchestrator and the run entry points.

Custom stages import their building blocks from here::

    from pytest_karenina.pipeline import ArtifactKeys, BaseVerificationStage, VerificationContext
"""

from pytest_karenina.pipeline.artifacts import FINAL_RESULT, ArtifactKeys
from pytest_karenina.pipeline.context import VerificationContext
from pytest_karenina.pipeline.llm_stack import LLMStack, ModelPairLLMs
from pytest_karenina.pipeline.orchestrator import StageOrchestrator, StageRegistry
from pytest_karenina.pipeline.run import Task, expand_tasks, run_question, run_verification
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
    "LLMStack",
    "ModelPairLLMs",
    "StageOrchestrator",
    "StageRegistry",
    "Task",
    "UsageTracker",
    "VerificationContext",
    "VerificationStage",
    "expand_tasks",
    "run_question",
    "run_verification",
]
