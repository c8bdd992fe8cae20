"""The saved form of one scenario execution: an entry of an export's ``scenario_results``.

Seed 001 describes each entry as the execution's trace: its status, the path taken, the turn
history, the outcome criteria's results and the final state. The fields follow Karenina's
``ScenarioResultRecord`` (scenario id, status, path, turn count, compact turn history, outcome
results, terminal failure, replicate) plus ``final_state``, which the seed lists and Karenina's
record leaves out (so Karenina's strict loader refuses these entries: docs/compatibility.md).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ScenarioStatus = Literal["completed", "limit_reached", "error", "timeout"]


class ScenarioTurnRecord(BaseModel):
    """One executed turn: the node, what it asked, what the model said and the verdict."""

    model_config = ConfigDict(extra="forbid")

    node_id: str
    question_text: str
    raw_response: str
    parsed_fields: dict[str, Any] = Field(default_factory=dict)
    verify_result: bool | None = None
    verification_result_id: str | None = None


class ScenarioTerminalFailureRecord(BaseModel):
    """Why an execution stopped with status ``error``: the node, a category, the stage (or
    ``scenario`` for the graph and its code) and the reason."""

    model_config = ConfigDict(extra="forbid")

    node_id: str | None = None
    category: str | None = None
    stage: str | None = None
    reason: str | None = None


class ScenarioFinalState(BaseModel):
    """The routing state when the execution ended (``history`` is the record's own)."""

    model_config = ConfigDict(extra="forbid")

    turn: int = 0
    current_node: str | None = None
    verify_result: bool | None = None
    parsed: dict[str, Any] = Field(default_factory=dict)
    node_visits: dict[str, int] = Field(default_factory=dict)
    accumulated: dict[str, Any] = Field(default_factory=dict)
    node_results: dict[str, dict[str, Any]] = Field(default_factory=dict)


class ScenarioResultRecord(BaseModel):
    """One scenario execution as an export stores it (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    scenario_id: str
    status: ScenarioStatus
    path: list[str] = Field(default_factory=list)
    turn_count: int
    history: list[ScenarioTurnRecord] = Field(default_factory=list)
    outcome_results: dict[str, bool | int | float] = Field(default_factory=dict)
    final_state: ScenarioFinalState | None = None
    terminal_failure: ScenarioTerminalFailureRecord | None = None
    replicate: int | None = None
