"""Running every scenario of a benchmark: ``run_scenarios``, the engine's entry point.

One execution per scenario x answering model x parsing model x replicate (Karenina's combos, in
that order), concurrently as ``run_verification`` runs answers (``async_max_workers`` threads
when ``async_enabled``); the turns of one execution always run in order in one thread. The
result set holds every turn's result (execution by execution), one ``scenario_results`` entry
per execution and, in ``errors``, each scenario that did not load, each execution that stopped
with status ``error`` (Karenina's description: ``Scenario '<id>' stopped at node '<node>'
(<category> in stage '<stage>'): <reason>``) and each execution that raised.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_karenina.config.verification import StampedModels
from pytest_karenina.pipeline.embedding import install_semantic_match
from pytest_karenina.pipeline.llm_stack import LLMStack
from pytest_karenina.pipeline.run import benchmark_rubrics, replicate_numbers
from pytest_karenina.results import VerificationResultSet
from pytest_karenina.scenarios.executor import run_scenario
from pytest_karenina.scenarios.load import load_scenarios
from pytest_karenina.scenarios.models import ScenarioDefinition, ScenarioError

if TYPE_CHECKING:
    from pytest_karenina.checkpoint import Benchmark
    from pytest_karenina.config.model import ModelConfig
    from pytest_karenina.config.verification import VerificationConfig
    from pytest_karenina.scenarios.state import ScenarioExecutionResult


class ScenarioExecutionFailure(Exception):
    """An execution that stopped with status ``error`` (as Karenina names it in ``errors``)."""


@dataclass(frozen=True)
class ScenarioRun:
    """One execution to make: which scenario, with which models, which replicate."""

    scenario: ScenarioDefinition
    answering: ModelConfig
    parsing: ModelConfig
    replicate: int | None

    def describe(self) -> str:
        rep = f" rep={self.replicate}" if self.replicate is not None else ""
        names = f"{self.answering.model_name}/{self.parsing.model_name}"
        return f"Scenario '{self.scenario.name}' with {names}{rep}"


def stopped_error(execution: ScenarioExecutionResult) -> tuple[str, str] | None:
    """The ``errors`` entry of an execution that stopped with status ``error`` (Karenina's
    description), None for the others."""
    failure = execution.terminal_failure
    if execution.status != "error" or failure is None:
        return None
    text = (
        f"Scenario '{execution.scenario_id}' stopped at node '{failure.node_id}' "
        f"({failure.category} in stage '{failure.stage or 'unknown'}'): {failure.reason}"
    )
    return text, f"ScenarioExecutionFailure: {text}"


def expand_runs(
    scenarios: list[ScenarioDefinition], config: VerificationConfig, models: StampedModels
) -> list[ScenarioRun]:
    """Every scenario x answering model x parsing model x replicate, in that order."""
    answering_models, parsing_models = models
    return [
        ScenarioRun(scenario, answering, parsing, replicate)
        for scenario in scenarios
        for answering in answering_models
        for parsing in parsing_models
        for replicate in replicate_numbers(config)
    ]


def run_scenarios(
    benchmark: Benchmark,
    config: VerificationConfig,
    *,
    checkpoint: str | None = None,
    llm: LLMStack | None = None,
    run_name: str | None = None,
    max_workers: int | None = None,
) -> VerificationResultSet:
    """Run the benchmark's scenarios (its checkpoint's ``hasPart``); see the module docstring.

    ``checkpoint`` names the file in load errors (default: the benchmark's name). An ``llm``
    given is left open; one made here is closed at the end.
    """
    loaded = load_scenarios(
        benchmark.scenarios,
        checkpoint=checkpoint or benchmark.name,
        limit=config.template_time_limit,
    )
    errors = [(str(e), f"ScenarioError: {e}") for e in loaded if isinstance(e, ScenarioError)]
    good = [s for s in loaded if isinstance(s, ScenarioDefinition)]
    factory = llm or LLMStack(config)
    runs = expand_runs(
        good, config, StampedModels(factory.answering_models, factory.parsing_models)
    )
    global_rubric, dynamic_rubric = benchmark_rubrics(benchmark)
    done: list[ScenarioExecutionResult | BaseException | None] = [None] * len(runs)

    def execute(index: int) -> None:
        run = runs[index]
        try:
            done[index] = run_scenario(
                run.scenario,
                config,
                factory,
                run.answering,
                run.parsing,
                replicate=run.replicate,
                run_name=run_name,
                global_rubric=global_rubric,
                dynamic_rubric=dynamic_rubric,
            )
        except Exception as exc:  # a bug of ours, not the scenario's: kept in ``errors``
            done[index] = exc

    workers = max_workers or (config.async_max_workers if config.async_enabled else 1)
    factory.prepare()
    templates = (n.question.template_code for s in good for n in s.nodes.values())
    install_semantic_match(config.embedding_check_model, templates)
    try:
        with ThreadPoolExecutor(max(1, workers), thread_name_prefix="karenina-scenario") as pool:
            for future in [pool.submit(execute, index) for index in range(len(runs))]:
                future.result()
    finally:
        if llm is None:
            factory.close()
    results = VerificationResultSet()
    executions = []
    for run, outcome in zip(runs, done, strict=True):
        if isinstance(outcome, BaseException) or outcome is None:
            errors.append((run.describe(), f"{type(outcome).__name__}: {outcome}"))
            continue
        executions.append(outcome)
        results.results.extend(outcome.turn_results)
        stopped = stopped_error(outcome)
        if stopped is not None:
            errors.append(stopped)
    results.scenario_results = [e.to_record() for e in executions] or None
    results.errors = errors or None
    return results
