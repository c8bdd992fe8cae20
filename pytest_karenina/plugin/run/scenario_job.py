"""A scenario item's job in the prefetcher: each of its executions (one per parsing model and
replicate the item runs) runs whole in the job's thread, its turns in order, through the
prefetcher's LLM stack (so replay records and replays them, keyed by the replicate index as
question calls are)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pytest_karenina.plugin.run.job_item import JobItem
from pytest_karenina.scenarios import ScenarioDefinition, ScenarioExecutionResult, run_scenario

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pytest_karenina.config.verification import VerificationConfig
    from pytest_karenina.pipeline.llm_stack import LLMStack
    from pytest_karenina.pipeline.orchestrator import StageOrchestrator
    from pytest_karenina.results import VerificationResult


@runtime_checkable
class ScenarioJobItem(JobItem, Protocol):
    """What the prefetcher reads off a ``collect.scenario_items.ScenarioItem``."""

    @property
    def scenario(self) -> Any: ...

    @property
    def model_replicate(self) -> Any: ...


def scenario_templates(item: ScenarioJobItem) -> list[str]:
    """The template code of every node of the item's scenario (none when it did not load)."""
    scenario = item.scenario
    if not isinstance(scenario, ScenarioDefinition):
        return []
    return [node.question.template_code for node in scenario.nodes.values()]


def execute_scenario(
    item: ScenarioJobItem,
    vconfig: VerificationConfig,
    llm: LLMStack,
    run_name: str,
    orchestrators: Mapping[bool, StageOrchestrator] | None = None,
) -> tuple[list[VerificationResult], list[ScenarioExecutionResult]]:
    """Run the item's executions in order; every turn's result, and each execution.
    ``orchestrators``: the turns' stages with rubric traits (True) and without."""
    scenario = item.scenario
    combination = item.model_replicate
    answering = llm.answering_models[combination.answering_index]
    executions = [
        run_scenario(
            scenario,
            vconfig,
            llm,
            answering,
            parsing,
            replicate=rep,
            run_name=run_name,
            global_rubric=item.global_rubric,
            dynamic_rubric=item.dynamic_rubric,
            orchestrators=orchestrators,
        )
        for parsing in llm.parsing_models
        for rep in combination.runs
    ]
    return [r for e in executions for r in e.turn_results], executions
