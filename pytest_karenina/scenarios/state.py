"""What an execution keeps: the routing state, each turn's record, the execution's result.

The attribute names are Karenina's (``ScenarioState``, ``TurnRecord``,
``ScenarioExecutionResult``) because checkpoint code reads them: a condition gets the state
(``lambda s: s.accumulated["asked"] > 1``), an outcome function the execution
(``lambda r: r.path[-1] == "dose"``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from pytest_karenina.results import VerificationResult
from pytest_karenina.results.scenario import (
    ScenarioFinalState,
    ScenarioResultRecord,
    ScenarioTerminalFailureRecord,
    ScenarioTurnRecord,
)

Status = Literal["completed", "limit_reached", "error", "timeout"]


@dataclass
class TurnRecord:
    """One turn: the node, the question text sent, the raw answer, the parsed fields, the
    template verdict and the id of the turn's VerificationResult."""

    node_id: str
    question_text: str
    raw_response: str
    parsed_fields: dict[str, Any]
    verify_result: bool | None
    verification_result_id: str | None


@dataclass
class ScenarioState:
    """The state routing reads. ``verify_result`` and ``parsed`` are the last turn's;
    ``node_results[node]`` holds ``verify_result``, ``parsed`` and ``rubric`` (trait scores)
    of the node's last visit; ``accumulated`` is what state updates made of it."""

    turn: int
    current_node: str
    verify_result: bool | None = None
    parsed: dict[str, Any] = field(default_factory=dict)
    node_visits: dict[str, int] = field(default_factory=dict)
    history: list[TurnRecord] = field(default_factory=list)
    accumulated: dict[str, Any] = field(default_factory=dict)
    node_results: dict[str, dict[str, Any]] = field(default_factory=dict)

    def resolve(self, path: str) -> Any:
        """The value at a condition's dot path (None when missing; ``node_visits.<node>``:
        0)."""
        root, _, rest = path.partition(".")
        if not rest:
            return getattr(self, root, None) if root in _TOP else None
        if root == "parsed":
            return self.parsed.get(rest)
        if root == "accumulated":
            return self.accumulated.get(rest)
        if root == "node_visits":
            return self.node_visits.get(rest, 0)
        if root == "node_results":
            node, _, inner = rest.partition(".")
            value: Any = self.node_results.get(node, {})
            for part in inner.split(".") if inner else []:
                value = value.get(part) if isinstance(value, dict) else None
            return value
        return None


_TOP = ("verify_result", "turn", "current_node")


@dataclass
class TerminalFailure:
    """Why an execution stopped with status ``error``."""

    node_id: str
    category: str
    stage: str
    reason: str


@dataclass
class ScenarioExecutionResult:
    """One execution of a scenario with one answering model (and replicate).

    ``outcome_results`` maps each criterion to its value (a bool, or an int for counts);
    ``criterion_errors`` the criteria whose check or function failed to run (their value is
    False, as in Karenina) to why.
    """

    scenario_id: str
    status: Status
    path: list[str]
    turn_count: int
    history: list[TurnRecord]
    turn_results: list[VerificationResult]
    final_state: ScenarioState
    outcome_results: dict[str, bool | int | float] = field(default_factory=dict)
    terminal_failure: TerminalFailure | None = None
    replicate: int | None = None
    criterion_errors: dict[str, str] = field(default_factory=dict)

    def to_record(self) -> ScenarioResultRecord:
        """The export's entry for this execution (seed 001's ``scenario_results``)."""
        state = self.final_state
        failure = self.terminal_failure
        return ScenarioResultRecord(
            scenario_id=self.scenario_id,
            status=self.status,
            path=list(self.path),
            turn_count=self.turn_count,
            history=[ScenarioTurnRecord(**_jsonable(vars(t))) for t in self.history],
            outcome_results=dict(self.outcome_results),
            final_state=ScenarioFinalState(
                turn=state.turn,
                current_node=state.current_node,
                verify_result=state.verify_result,
                parsed=_jsonable(state.parsed),
                node_visits=dict(state.node_visits),
                accumulated=_jsonable(state.accumulated),
                node_results=_jsonable(state.node_results),
            ),
            terminal_failure=ScenarioTerminalFailureRecord(**vars(failure)) if failure else None,
            replicate=self.replicate,
        )


ExecutionView = ScenarioExecutionResult
"""What outcome checks read of an execution."""


def _jsonable(value: Any) -> Any:
    """``value`` with whatever JSON cannot hold (state updates may keep anything) as text."""
    return json.loads(json.dumps(value, default=str))
