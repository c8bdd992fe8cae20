"""A scenario item's verdict and its explanation.

Karenina gives a scenario no pass or fail; ours: an execution that stopped with status
``error`` (a turn errored, the graph is broken, a condition or state update raised) or whose
outcome criterion could not be evaluated is an error. Otherwise it passes when every
true/false outcome criterion holds (counts are reported, not judged); with no such criterion,
when the execution completed and every turn passed. A failure names the criterion that did not
hold (or the turn that failed, or the turn limit) and the turn that broke it; every explanation
shows the path taken.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pytest_karenina.plugin.safe_text import terminal_safe
from pytest_karenina.scenarios.checks import breaking_turn

if TYPE_CHECKING:
    from pytest_karenina.scenarios import ScenarioDefinition, ScenarioExecutionResult

ScenarioOutcome = Literal["pass", "fail", "error"]


@dataclass(frozen=True)
class ScenarioVerdict:
    """The outcome, the reason (None for a pass), the criterion that did not hold and the
    index of the turn that broke the execution (None when no single turn did)."""

    outcome: ScenarioOutcome
    reason: str | None
    path: tuple[str, ...]
    criterion: str | None = None
    turn: int | None = None

    def explanation(self) -> str:
        """The reason, then the path taken (``path: start -> ask -> dose``)."""
        lines = [self.reason or "passed", f"path: {path_text(self.path)}"]
        return "\n".join(terminal_safe(line) for line in lines)


def path_text(path: tuple[str, ...] | list[str]) -> str:
    return " -> ".join(path) if path else "(no turn)"


def scenario_verdict(
    execution: ScenarioExecutionResult, scenario: ScenarioDefinition
) -> ScenarioVerdict:
    """The verdict of one execution of ``scenario`` (see the module docstring)."""
    path = tuple(execution.path)
    failure = execution.terminal_failure
    if execution.status == "error":
        where = failure.node_id if failure else "?"
        why = f"{failure.category}: {failure.reason}" if failure else "no reason recorded"
        turn = len(execution.history) - 1 if execution.history else None
        return ScenarioVerdict("error", f"stopped at node '{where}' ({why})", path, turn=turn)
    for name, why in execution.criterion_errors.items():
        return ScenarioVerdict(
            "error", f"criterion '{name}' could not be evaluated: {why}", path, name
        )
    judged = [
        c
        for c in scenario.outcome_criteria
        if isinstance(execution.outcome_results.get(c.name), bool)
    ]
    for criterion in judged:
        if execution.outcome_results[criterion.name] is True:
            continue
        check = criterion.check
        turn = breaking_turn(check, execution) if check is not None else None
        reason = f"criterion '{criterion.name}' did not hold"
        if criterion.description:
            reason += f" ({criterion.description})"
        return ScenarioVerdict(
            "fail", reason + _at_turn(execution, turn), path, criterion.name, turn
        )
    if judged:
        return ScenarioVerdict("pass", None, path)
    if execution.status == "limit_reached":
        turn = len(execution.history) - 1
        reason = f"did not complete: the turn limit was reached after {execution.turn_count} turns"
        return ScenarioVerdict("fail", reason, path, turn=turn)
    for index, turn_record in enumerate(execution.history):
        if turn_record.verify_result is not True:
            reason = "a turn did not pass" + _at_turn(execution, index)
            return ScenarioVerdict("fail", reason, path, turn=index)
    return ScenarioVerdict("pass", None, path)


def _at_turn(execution: ScenarioExecutionResult, turn: int | None) -> str:
    if turn is None:
        return ""
    return f": broken at turn {turn}, node '{execution.history[turn].node_id}'"
