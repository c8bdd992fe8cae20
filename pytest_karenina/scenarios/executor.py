"""Running a scenario: turn after turn through the stage pipeline, routed by its edges.

Each turn runs the whole pipeline for its node (:func:`~pytest_karenina.pipeline.run.run_question`)
with the conversation so far as context: the answering call carries the earlier questions and
answers, the judge sees this node's question. Then, as Karenina does: the node's result goes
into the state (``node_results``, ``verify_result``, ``parsed``), the node's state update runs,
a turn that errored (any failure but ``content``) stops the execution with status ``error``,
the turn limit (``scenario_turn_limit``) with ``limit_reached``; else the node's conditional
edges are tried in order (the first that matches wins), then its first fallback. No edge to
take, or an edge to ``__end__``: the execution ``completed``. Outcome criteria are judged over
the whole execution when it ends.

Departures from Karenina, so that broken checkpoint code is not mistaken for a route: a
condition or state update that raises (or runs past the template time limit) stops the
execution with status ``error`` (Karenina logs it and treats the condition as not matching, or
keeps the state from before the update); an outcome criterion that raises counts False (as in
Karenina) and is listed in ``criterion_errors``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pytest_karenina.llm.ports import ChatMessage
from pytest_karenina.pipeline.artifacts import ArtifactKeys
from pytest_karenina.pipeline.orchestrator import StageOrchestrator
from pytest_karenina.pipeline.run import Task, run_question
from pytest_karenina.pipeline.stages.generate_answer import CONVERSATION_HISTORY
from pytest_karenina.results import compute_result_id
from pytest_karenina.scenarios.checks import evaluate_check
from pytest_karenina.scenarios.code import ScenarioCodeError
from pytest_karenina.scenarios.conversation import USER, Tagged, hand_over, replies
from pytest_karenina.scenarios.models import END, ScenarioDefinition, ScenarioEdge, ScenarioNode
from pytest_karenina.scenarios.state import (
    ScenarioExecutionResult,
    ScenarioState,
    Status,
    TerminalFailure,
    TurnRecord,
)

if TYPE_CHECKING:
    from pytest_karenina.config.model import ModelConfig
    from pytest_karenina.config.verification import VerificationConfig
    from pytest_karenina.pipeline.context import VerificationContext
    from pytest_karenina.pipeline.llm_stack import LLMStack
    from pytest_karenina.results import VerificationResult
    from pytest_karenina.rubrics.traits import Rubric

GRAPH = "scenario_graph"
"""``terminal_failure.category`` of a broken graph (an edge to an unknown node)."""
CODE = "scenario_code"
"""``terminal_failure.category`` of checkpoint code that raised (condition, state update)."""


class _Stop(Exception):
    def __init__(self, failure: TerminalFailure) -> None:
        super().__init__(failure.reason)
        self.failure = failure


@dataclass
class _Run:
    """One execution's moving parts."""

    scenario: ScenarioDefinition
    config: VerificationConfig
    llm: LLMStack
    answering: ModelConfig
    parsing: ModelConfig
    replicate: int | None
    run_name: str | None
    global_rubric: Rubric | None
    dynamic_rubric: Rubric | None
    state: ScenarioState
    messages: list[Tagged] = field(default_factory=list)
    path: list[str] = field(default_factory=list)
    results: list[VerificationResult] = field(default_factory=list)
    models: dict[str, tuple[ModelConfig, ModelConfig]] = field(default_factory=dict)
    orchestrators: Mapping[bool, StageOrchestrator] | None = None


def turn_config(config: VerificationConfig, rubric: bool) -> VerificationConfig:
    """The config a turn runs with: template_and_rubric when the turn has rubric traits, else
    template_only; deep judgment off. Its stage list is ``default_stages`` of it."""
    mode = "template_and_rubric" if rubric else "template_only"
    return config.model_copy(update={"evaluation_mode": mode, "deep_judgment_mode": "disabled"})


def run_scenario(
    scenario: ScenarioDefinition,
    config: VerificationConfig,
    llm: LLMStack,
    answering: ModelConfig,
    parsing: ModelConfig,
    *,
    replicate: int | None = None,
    run_name: str | None = None,
    global_rubric: Rubric | None = None,
    dynamic_rubric: Rubric | None = None,
    orchestrators: Mapping[bool, StageOrchestrator] | None = None,
) -> ScenarioExecutionResult:
    """Execute ``scenario`` with one answering and one parsing model (stamped, e.g. an
    :class:`LLMStack`'s). Never raises for the scenario's own problems: they end up in the
    result (status ``error`` and its ``terminal_failure``). ``orchestrators``: the stages of a
    turn with rubric traits (True) and without (False); by default those of
    :func:`turn_config`."""
    run = _Run(
        scenario,
        config,
        llm,
        answering,
        parsing,
        replicate,
        run_name,
        global_rubric,
        dynamic_rubric,
        ScenarioState(turn=0, current_node=scenario.entry_node),
        orchestrators=orchestrators,
    )
    status: Status = "completed"
    failure: TerminalFailure | None = None
    try:
        status = _turns(run)
    except _Stop as stop:
        status, failure = "error", stop.failure
    result = ScenarioExecutionResult(
        scenario_id=scenario.name,
        status=status,
        path=run.path,
        turn_count=run.state.turn,
        history=run.state.history,
        turn_results=run.results,
        final_state=run.state,
        terminal_failure=failure,
        replicate=replicate,
    )
    _judge_criteria(scenario, result, config.template_time_limit)
    return result


def _turns(run: _Run) -> Literal["completed", "limit_reached"]:
    scenario, state = run.scenario, run.state
    entry = scenario.nodes[scenario.entry_node]
    base_agent = entry.agent_identity or run.answering.id or run.answering.model_name or "model"
    handover: str | None = None
    previous: tuple[str, str | None] | None = None
    while True:
        node = scenario.nodes[state.current_node]
        run.path.append(node.node_id)
        answering, parsing = _models(run, node)
        agent = node.agent_identity or base_agent
        if handover is not None:
            question_text = hand_over(handover, run.messages, node.question.text)
            history: list[ChatMessage] = []
        else:
            question_text = node.question.text
            history = [tagged.message for tagged in run.messages]
        if previous != (agent, answering.system_prompt) and answering.system_prompt:
            run.messages.append(Tagged(ChatMessage("system", answering.system_prompt), agent))
        run.messages.append(Tagged(ChatMessage("user", question_text), USER))
        result, parsed = _run_turn(run, node, answering, parsing, question_text, history)
        trace = result.template.trace_messages if result.template is not None else None
        run.messages.extend(Tagged(message, agent) for message in replies(trace))
        _record(run, node, result, parsed, question_text)
        failure = result.metadata.failure
        if failure is not None and failure.category != "content":
            raise _Stop(
                TerminalFailure(node.node_id, failure.category, failure.stage or "", failure.reason)
            )
        if state.turn >= run.config.scenario_turn_limit:
            return "limit_reached"
        edge = _next_edge(run, scenario.outgoing(node.node_id))
        if edge is None or edge.target == END:
            return "completed"
        if edge.target not in scenario.nodes:
            reason = f"edge {edge.source} -> {edge.target}: unknown node {edge.target!r}"
            raise _Stop(TerminalFailure(node.node_id, GRAPH, "scenario", reason))
        handover = edge.handover
        previous = (agent, answering.system_prompt)
        state.current_node = edge.target


def _models(run: _Run, node: ScenarioNode) -> tuple[ModelConfig, ModelConfig]:
    """The node's models, built once per execution (the LLM stack keys ports by model)."""
    if node.model_override is None:
        return run.answering, run.parsing
    found = run.models.get(node.node_id)
    if found is None:
        found = run.models[node.node_id] = node.model_override.apply(run.answering, run.parsing)
    return found


def _run_turn(
    run: _Run,
    node: ScenarioNode,
    answering: ModelConfig,
    parsing: ModelConfig,
    question_text: str,
    history: list[ChatMessage],
) -> tuple[VerificationResult, dict[str, Any]]:
    question = node.question
    if question_text != question.text:
        question = question.model_copy(update={"text": question_text})
    own = question.rubric is not None  # a node's own rubric replaces the global one (Karenina)
    task = Task(
        question,
        answering,
        parsing,
        run.replicate,
        None if own else run.global_rubric,
        run.dynamic_rubric,
    )
    config = turn_config(run.config, task.has_rubric)
    node_results = copy.deepcopy(run.state.node_results)
    parsed: dict[str, Any] = {}

    def prepare(context: VerificationContext) -> None:
        context.set_artifact(CONVERSATION_HISTORY, list(history))
        context.set_artifact(ArtifactKeys.SCENARIO_NODE_RESULTS, node_results)

    orchestrator = run.orchestrators.get(task.has_rubric) if run.orchestrators else None
    if orchestrator is None:
        orchestrator = StageOrchestrator.from_config(config, rubric=task.has_rubric)
    result, _ = run_question(
        task, config, run.llm, orchestrator=orchestrator, run_name=run.run_name, prepare=prepare
    )
    if result.template is not None and isinstance(result.template.parsed_llm_response, dict):
        parsed = dict(result.template.parsed_llm_response)
    _link(result, run, node.node_id)
    run.results.append(result)
    return result, parsed


def _link(result: VerificationResult, run: _Run, node_id: str) -> None:
    """Seed 001's linking fields, and the result id Karenina computes with them."""
    meta = result.metadata
    meta.scenario_id = run.scenario.name
    meta.scenario_node = node_id
    meta.scenario_turn = run.state.turn
    meta.scenario_path = list(run.path)
    meta.result_id = compute_result_id(
        meta.answering,
        meta.parsing,
        meta.question_id,
        meta.replicate,
        meta.timestamp,
        run.scenario.name,
        node_id,
        run.state.turn,
    )


def _record(
    run: _Run, node: ScenarioNode, result: VerificationResult, parsed: dict[str, Any], asked: str
) -> None:
    state = run.state
    verdict = result.template.verify_result if result.template is not None else None
    rubric = result.rubric.get_all_trait_scores() if result.rubric is not None else {}
    state.node_results[node.node_id] = {
        "verify_result": verdict,
        "parsed": parsed,
        "rubric": rubric,
    }
    record = TurnRecord(
        node.node_id,
        asked,
        (result.template.raw_llm_response if result.template else None) or "",
        parsed,
        verdict,
        result.metadata.result_id,
    )
    if node.state_update is not None:
        updated = _call(run, node.state_update, state.accumulated, dict(parsed), node=node.node_id)
        if not isinstance(updated, dict):
            reason = f"{node.state_update.what} returned {type(updated).__name__}, not a dict"
            raise _Stop(TerminalFailure(node.node_id, CODE, "scenario", reason))
        state.accumulated = updated
    state.turn += 1
    state.node_visits[node.node_id] = state.node_visits.get(node.node_id, 0) + 1
    state.history.append(record)
    state.verify_result = verdict
    state.parsed = parsed


def _call(run: _Run, function: Callable[..., Any], *args: Any, node: str) -> Any:
    try:
        return function(*args, limit=run.config.template_time_limit)
    except ScenarioCodeError as exc:
        raise _Stop(TerminalFailure(node, CODE, "scenario", str(exc))) from exc


def _next_edge(run: _Run, edges: list[ScenarioEdge]) -> ScenarioEdge | None:
    fallback = next((edge for edge in edges if not edge.conditional), None)
    for edge in edges:
        if edge.conditional and _matches(run, edge):
            return edge
    return fallback


def _matches(run: _Run, edge: ScenarioEdge) -> bool:
    state = run.state
    if edge.condition_source is not None:
        return bool(_call(run, edge.condition_source, state, node=edge.source))
    try:
        return all(
            check.verify_with.check(state.resolve(check.field), check.expected)
            for check in edge.condition or ()
        )
    except Exception as exc:
        reason = (
            f"edge {edge.source} -> {edge.target}: condition raised {type(exc).__name__}: {exc}"
        )
        raise _Stop(TerminalFailure(edge.source, CODE, "scenario", reason)) from exc


def _judge_criteria(
    scenario: ScenarioDefinition, result: ScenarioExecutionResult, limit: float | None
) -> None:
    for criterion in scenario.outcome_criteria:
        try:
            if criterion.check is not None:
                value: Any = evaluate_check(criterion.check, result)
            else:
                assert criterion.evaluate is not None
                value = criterion.evaluate(result, limit=limit)
        except Exception as exc:
            result.outcome_results[criterion.name] = False
            result.criterion_errors[criterion.name] = f"{type(exc).__name__}: {exc}"
            continue
        if not isinstance(value, bool | int | float):
            result.outcome_results[criterion.name] = False
            result.criterion_errors[criterion.name] = (
                f"returned {type(value).__name__}, not a bool or number"
            )
            continue
        result.outcome_results[criterion.name] = value
