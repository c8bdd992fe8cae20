"""A scenario item's ``report.karenina`` payload: its verdict as the item's category, every
turn's result for the export, the executions' ``scenario_results`` records and ``errors``, and
what the reports show (path, turns, the criterion and turn that broke it, the conversation)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_karenina.plugin.payload import ItemPayload, tokens
from pytest_karenina.plugin.verdict.outcome import Outcome
from pytest_karenina.results.cost import PriceTable, results_cost, stage_costs
from pytest_karenina.scenarios import ScenarioError
from pytest_karenina.scenarios.batch import stopped_error

if TYPE_CHECKING:
    from pytest_karenina.plugin.collect.fingerprint import Fingerprints
    from pytest_karenina.plugin.collect.scenario_items import ScenarioItem

CATEGORY = {"pass": Outcome.PASS, "fail": Outcome.SCENARIO_FAIL, "error": Outcome.SCENARIO_ERROR}


def scenario_payload(
    item: ScenarioItem, prices: PriceTable | None, fingerprints: Fingerprints | None = None
) -> ItemPayload:
    """The payload of ``item`` once its setup decided its verdict (or failed);
    ``fingerprints``: the run's, for the item's fingerprint (baselines)."""
    verdict = item.verdict
    errors: list[list[str]] = []
    if isinstance(item.scenario, ScenarioError):
        errors.append([str(item.scenario), f"ScenarioError: {item.scenario}"])
    for run in item.executions:
        stopped = stopped_error(run)
        if stopped is not None:
            errors.append(list(stopped))
    category = CATEGORY[verdict.outcome] if verdict is not None else Outcome.SCENARIO_ERROR
    execution = item.executions[0] if item.executions else None
    conversation = [
        {"node": t.node_id, "question": t.question_text, "answer": t.raw_response,
         "verify_result": t.verify_result}
        for t in (execution.history if execution is not None else [])
    ]  # fmt: skip
    scenario: dict[str, Any] = {
        "name": item.scenario_name,
        "status": execution.status if execution is not None else "error",
        "path": list(verdict.path) if verdict is not None else [],
        "turns": execution.turn_count if execution is not None else 0,
        "criterion": verdict.criterion if verdict is not None else None,
        "turn": verdict.turn if verdict is not None else None,
        "conversation": conversation,
        "records": [e.to_record().model_dump(mode="json") for e in item.executions],
        "errors": errors,
    }
    rubrics = (item.global_rubric, item.dynamic_rubric)
    combination = item.model_replicate
    answering = getattr(combination, "answering", None)
    cost = results_cost(item.results, prices) if prices is not None else None
    return ItemPayload(
        nodeid=item.nodeid,
        category=category,
        question_id=item.selection_id,
        answering_model=(answering.id or "") if answering is not None else "",
        replicate=getattr(combination, "replicate", None),
        results=[result.model_dump(mode="json") for result in item.results],
        input_tokens=sum(tokens(result)[0] for result in item.results),
        output_tokens=sum(tokens(result)[1] for result in item.results),
        seconds=sum(result.metadata.execution_time or 0.0 for result in item.results),
        cost=[cost.answerer, cost.judge] if cost is not None else None,
        unpriced=tuple(sorted(cost.unpriced)) if cost is not None else (),
        stage_cost=stage_costs(item.results, prices) if prices is not None else None,
        scenario=scenario,
        fingerprint=(
            fingerprints.of_scenario(item.scenario_name, item.raw, rubrics)
            if fingerprints is not None
            else None
        ),
    )
