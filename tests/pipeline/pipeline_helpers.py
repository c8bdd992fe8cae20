"""Templates and a stage recorder shared by the test_stage_*.py modules.

Templates are source code (as a checkpoint stores them) and are compiled by the
real ValidateTemplate stage. Stage names are the seed's ("13 Stages in Detail").
"""

from __future__ import annotations

from typing import Any

from pytest_karenina.config.verification import VerificationConfig
from pytest_karenina.pipeline.context import VerificationContext
from pytest_karenina.pipeline.orchestrator import StageOrchestrator
from pytest_karenina.pipeline.stage import VerificationStage

ANSWER = "The capital of France is Paris."
"""What the answering model says in most tests."""

# A classic template: hand-written ground truth and verify().
CLASSIC = """
class Answer(BaseAnswer):
    capital: str = Field(description="The capital city named in the response")

    def ground_truth(self):
        self.correct = {"capital": "Paris"}

    def verify(self) -> bool:
        return self.capital.strip().lower() == self.correct["capital"].lower()
"""

# Classic template with a self.regex check on the raw trace.
CLASSIC_WITH_REGEX = """
class Answer(BaseAnswer):
    capital: str = Field(description="The capital city named in the response")

    def ground_truth(self):
        self.correct = {"capital": "Paris"}
        self.regex = {
            "names_paris": {"pattern": r"\\bParis\\b", "expected": "Paris", "match_type": "exact"},
        }

    def verify(self) -> bool:
        return self.capital.strip().lower() == self.correct["capital"].lower()
"""

# Regex-only: no fields, so no judge; the first check only passes on the raw trace with
# its "--- AI Message ---" header line.
REGEX_ONLY = """
class Answer(BaseAnswer):
    def ground_truth(self):
        self.regex = {
            "ai_header": {
                "pattern": r"--- AI Message ---",
                "expected": "--- AI Message ---",
                "match_type": "exact",
            },
            "year": {"pattern": r"\\b1928\\b", "expected": "1928", "match_type": "exact"},
        }
"""

# Trace-only: every field is a trace primitive (no judge).
TRACE_ONLY = """
class Answer(BaseAnswer):
    has_header: bool = VerifiedField(
        description="The trace carries the AI message header",
        ground_truth=True,
        verify_with=TraceContains(substring="--- AI Message ---"),
    )
    mentions_year: bool = VerifiedField(
        description="The trace mentions 1928",
        ground_truth=True,
        verify_with=TraceRegex(pattern=r"\\b1928\\b"),
    )
"""

# VerifiedField template with an AnyOf strategy and weights.
VERIFIED_ANY_OF = """
class Answer(BaseAnswer):
    capital: str = VerifiedField(
        description="The capital city named in the response",
        ground_truth="Paris",
        verify_with=ExactMatch(normalize=["lowercase", "strip"]),
        weight=3.0,
    )
    river: str = VerifiedField(
        description="The river the response says flows through the capital",
        ground_truth="Seine",
        verify_with=ExactMatch(normalize=["lowercase", "strip"]),
        weight=1.0,
    )

    class VerificationStrategy:
        verify_strategy = AnyOf(conditions=[FieldCheck(field="capital"), FieldCheck(field="river")])
"""

# verify() raises; verify_granular() would answer if it were called.
VERIFY_RAISES = """
class Answer(BaseAnswer):
    capital: str = Field(description="The capital city named in the response")

    def ground_truth(self):
        self.correct = {"capital": "Paris"}

    def verify(self) -> bool:
        raise KeyError("no such key in correct")

    def verify_granular(self) -> float:
        return 0.5
"""

# verify() passes; verify_granular() raises.
GRANULAR_RAISES = """
class Answer(BaseAnswer):
    capital: str = Field(description="The capital city named in the response")

    def ground_truth(self):
        self.correct = {"capital": "Paris"}

    def verify(self) -> bool:
        return self.capital == "Paris"

    def verify_granular(self) -> float:
        raise ZeroDivisionError("granular exploded")
"""

# Does not compile (unclosed parenthesis).
BROKEN = """
class Answer(BaseAnswer):
    capital: str = Field(description="The capital city named in the response"

    def verify(self) -> bool:
        return True
"""

CANARY = "Quokkaville-7781"
"""A ground truth no model should ever be shown."""

CANARY_TEMPLATE = f'''
class Answer(BaseAnswer):
    capital: str = VerifiedField(
        description="The capital city named in the response",
        ground_truth="{CANARY}",
        verify_with=ExactMatch(normalize=["lowercase", "strip"]),
    )
    founded: int = Field(description="The founding year named in the response")

    def ground_truth(self):
        self.correct = {{"capital": "{CANARY}", "founded": 1771}}

    def verify(self) -> bool:
        return self.capital == self.correct["capital"]
'''

TEMPLATE_STAGES = [
    "ValidateTemplate",
    "GenerateAnswer",
    "RecursionLimitAutoFail",
    "TraceValidationAutoFail",
    "ParseTemplate",
    "VerifyTemplate",
    "EmbeddingCheck",
    "FinalizeResult",
]
"""The template-mode stage list without optional stages, in the seed's order."""


class RecordingStage:
    """Wraps a real stage and records its name in ``executed`` when it executes."""

    def __init__(self, inner: VerificationStage, executed: list[str]) -> None:
        self.inner = inner
        self.executed = executed
        self.always_runs: bool = bool(getattr(inner, "always_runs", False))

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def requires(self) -> list[str]:
        return self.inner.requires

    @property
    def produces(self) -> list[str]:
        return self.inner.produces

    def should_run(self, context: VerificationContext) -> bool:
        return self.inner.should_run(context)

    def execute(self, context: VerificationContext) -> None:
        self.executed.append(self.name)
        self.inner.execute(context)


def recording_orchestrator(
    config: VerificationConfig, **options: Any
) -> tuple[StageOrchestrator, list[str]]:
    """The config's real stage list, recording the names of the stages that execute."""
    executed: list[str] = []
    real = StageOrchestrator.from_config(config, **options)
    return StageOrchestrator([RecordingStage(s, executed) for s in real.stages]), executed
