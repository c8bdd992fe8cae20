"""Multi-turn scenarios: loading them from a checkpoint, running them, their results.

An engine package above ``pipeline`` (every turn is a pipeline run); the plugin builds on it.
"""

from pytest_karenina.scenarios.batch import run_scenarios
from pytest_karenina.scenarios.executor import run_scenario
from pytest_karenina.scenarios.load import load_scenarios, parse_scenario
from pytest_karenina.scenarios.models import END, ScenarioDefinition, ScenarioError
from pytest_karenina.scenarios.state import ScenarioExecutionResult, ScenarioState, TurnRecord

__all__ = [
    "END",
    "ScenarioDefinition",
    "ScenarioError",
    "ScenarioExecutionResult",
    "ScenarioState",
    "TurnRecord",
    "load_scenarios",
    "parse_scenario",
    "run_scenario",
    "run_scenarios",
]
