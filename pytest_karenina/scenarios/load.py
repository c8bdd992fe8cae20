"""Reading the scenarios of a checkpoint (its root ``hasPart``) into :class:`ScenarioDefinition`.

Each scenario loads on its own: :func:`load_scenarios` returns the broken ones as
:class:`ScenarioError` s (the message names the checkpoint, the scenario and the field) beside
the good ones, so one broken scenario never stops the others. Checked here: the structure and
types of every field, that edges and the entry node name known nodes (or ``__end__``), the
handover strategies, the primitives of conditions and checks, and that every source string
compiles. Karenina's builder also refuses orphan nodes and conditional edges without a
fallback; a checkpoint may still hold them (Karenina's loader does not check), and they run
as Karenina runs them: an orphan is never visited, and a turn whose conditional edges all
fail without a fallback ends the execution normally.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_karenina.checkpoint import Question
from pytest_karenina.rubrics.traits import Rubric
from pytest_karenina.scenarios.checks import parse_check, primitive_at
from pytest_karenina.scenarios.code import SourceFunction, compile_source
from pytest_karenina.scenarios.models import (
    END,
    HANDOVERS,
    ModelOverride,
    OutcomeCriterion,
    ScenarioDefinition,
    ScenarioEdge,
    ScenarioError,
    ScenarioNode,
    StateCheck,
)


def load_scenarios(
    raw: Sequence[Any] | None, *, checkpoint: str, limit: float | None
) -> list[ScenarioDefinition | ScenarioError]:
    """Every scenario of a checkpoint's ``hasPart`` list, in order, or the error of each that
    does not load. ``limit``: seconds the checkpoint's code may run to compile."""
    loaded: list[ScenarioDefinition | ScenarioError] = []
    for index, data in enumerate(raw or []):
        try:
            loaded.append(parse_scenario(data, checkpoint=checkpoint, limit=limit, index=index))
        except ScenarioError as exc:
            loaded.append(exc)
    return loaded


def parse_scenario(
    data: Any, *, checkpoint: str, limit: float | None, index: int = 0
) -> ScenarioDefinition:
    """One scenario from its checkpoint form; ScenarioError naming the field otherwise."""
    name = data.get("name") if isinstance(data, Mapping) else None
    label = f"scenario {name!r}" if isinstance(name, str) else f"scenario #{index}"
    try:
        return _scenario(data, limit)
    except ValueError as exc:
        raise ScenarioError(f"{checkpoint}: {label}: {exc}") from exc


def _scenario(data: Any, limit: float | None) -> ScenarioDefinition:
    if not isinstance(data, Mapping):
        raise ValueError(f"expected a scenario object, got {type(data).__name__}")
    name = _string(data, "name", "name")
    raw_nodes = data.get("nodes")
    if not isinstance(raw_nodes, Mapping) or not raw_nodes:
        raise ValueError("nodes: expected a non-empty object of nodes by id")
    nodes = {key: _node(key, value, limit) for key, value in raw_nodes.items()}
    entry = _string(data, "entryNode", "entryNode")
    if entry not in nodes:
        raise ValueError(f"entryNode: unknown node {entry!r} (nodes: {sorted(nodes)})")
    raw_edges = data.get("edges", [])
    if not isinstance(raw_edges, list):
        raise ValueError("edges: expected a list")
    edges = tuple(_edge(i, e, set(nodes), limit) for i, e in enumerate(raw_edges))
    raw_criteria = data.get("outcomeCriteria") or []
    if not isinstance(raw_criteria, list):
        raise ValueError("outcomeCriteria: expected a list")
    criteria = tuple(_criterion(i, c, limit) for i, c in enumerate(raw_criteria))
    seen = [c.name for c in criteria]
    duplicated = sorted({n for n in seen if seen.count(n) > 1})
    if duplicated:
        raise ValueError(f"outcomeCriteria: criterion names repeat: {duplicated}")
    return ScenarioDefinition(
        name=name,
        nodes=nodes,
        edges=edges,
        entry_node=entry,
        description=str(data.get("description") or ""),
        outcome_criteria=criteria,
        metadata=dict(data.get("metadata") or {}),
    )


def _string(data: Mapping[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise ValueError(f"{where}: expected a non-empty string, got {value!r}")
    return value


def _source(data: Mapping[str, Any], key: str, where: str, limit: float | None) -> Any:
    source = data.get(key)
    if source is None:
        return None
    if not isinstance(source, str):
        raise ValueError(f"{where}.{key}: expected source code as a string, got {source!r}")
    try:
        return compile_source(source, f"{where}.{key}", limit)
    except ValueError as exc:
        raise ValueError(f"{where}.{key}: {exc}") from exc


def _node(key: str, data: Any, limit: float | None) -> ScenarioNode:
    where = f"nodes.{key}"
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: expected a node object")
    node_id = data.get("nodeId", key)
    if node_id != key:
        raise ValueError(f"{where}.nodeId: {node_id!r} differs from its key {key!r}")
    override = data.get("modelOverride")
    if override is not None and not isinstance(override, Mapping):
        raise ValueError(f"{where}.modelOverride: expected an object")
    state_update: SourceFunction | None = _source(data, "stateUpdateSource", where, limit)
    agent = data.get("agentIdentity")
    return ScenarioNode(
        node_id=key,
        question=_question(data, where),
        model_override=_override(override, where) if override else None,
        state_update=state_update,
        agent_identity=agent if isinstance(agent, str) and agent else None,
        metadata=dict(data.get("metadata") or {}),
    )


def _override(data: Mapping[str, Any], where: str) -> ModelOverride:
    parts: dict[str, Mapping[str, Any] | None] = {}
    for key in ("answering_model", "parsing_model"):
        value = data.get(key)
        if value is not None and not isinstance(value, Mapping):
            raise ValueError(f"{where}.modelOverride.{key}: expected a model object")
        parts[key] = value
    return ModelOverride(parts["answering_model"], parts["parsing_model"])


def _question(data: Mapping[str, Any], where: str) -> Question:
    stored = data.get("questionData")
    if isinstance(stored, Mapping):
        text, answer = stored.get("question"), stored.get("raw_answer")
        template, keywords = stored.get("answer_template"), stored.get("keywords") or []
        few_shot, rubric = stored.get("few_shot_examples"), stored.get("question_rubric")
        workspace, field = stored.get("workspace_path"), f"{where}.questionData"
    else:
        item = data.get("question")
        if not isinstance(item, Mapping):
            raise ValueError(f"{where}.question: expected a Question object (or questionData)")
        text = item.get("text")
        answer = (item.get("acceptedAnswer") or {}).get("text")
        template = (item.get("hasPart") or {}).get("text")
        keywords, few_shot, rubric, workspace = [], None, None, None
        field = f"{where}.question"
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{field}: the question text is missing")
    if not isinstance(template, str) or not template.strip():
        raise ValueError(f"{field}: the answer template is missing")
    try:
        return Question(
            text=text,
            raw_answer=answer if isinstance(answer, str) else "",
            template_code=template,
            keywords=[str(k) for k in keywords],
            finished=True,
            few_shot_examples=few_shot,
            rubric=_rubric(rubric),
            workspace_path=workspace if isinstance(workspace, str) else None,
        )
    except ValueError as exc:
        raise ValueError(f"{field}: {exc}") from exc


def _rubric(data: Any) -> Rubric | None:
    if not data:
        return None
    rubric = Rubric.model_validate(data)
    return rubric if rubric.traits() else None


def _edge(index: int, data: Any, nodes: set[str], limit: float | None) -> ScenarioEdge:
    where = f"edges[{index}]"
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: expected an edge object")
    source, target = (
        _string(data, "source", f"{where}.source"),
        _string(data, "target", f"{where}.target"),
    )
    if source not in nodes:
        raise ValueError(f"{where}.source: unknown node {source!r} (nodes: {sorted(nodes)})")
    if target != END and target not in nodes:
        raise ValueError(
            f"{where}.target: unknown node {target!r} (nodes: {sorted(nodes)}, or {END!r})"
        )
    handover = data.get("handover")
    if handover is not None and handover not in HANDOVERS:
        raise ValueError(
            f"{where}.handover: {handover!r} is not supported (supported: {', '.join(HANDOVERS)})"
        )
    raw = data.get("condition")
    checks = None
    if raw is not None:
        items = raw if isinstance(raw, list) else [raw]
        checks = tuple(
            _state_check(c, f"{where}.condition" + (f"[{i}]" if isinstance(raw, list) else ""))
            for i, c in enumerate(items)
        )
    return ScenarioEdge(
        source, target, checks, _source(data, "conditionSource", where, limit), handover
    )


def _state_check(data: Any, where: str) -> StateCheck:
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: expected a StateCheck object")
    return StateCheck(
        _string(data, "field", f"{where}.field"), primitive_at(data, where), data.get("expected")
    )


def _criterion(index: int, data: Any, limit: float | None) -> OutcomeCriterion:
    where = f"outcomeCriteria[{index}]"
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: expected a criterion object")
    name = _string(data, "name", f"{where}.name")
    where = f"outcomeCriteria[{name!r}]"
    check = parse_check(data["check"], f"{where}.check") if data.get("check") is not None else None
    evaluate: SourceFunction | None = _source(data, "evaluateSource", where, limit)
    if check is None and evaluate is None:
        raise ValueError(f"{where}: needs a check or an evaluateSource")
    return OutcomeCriterion(name, str(data.get("description") or ""), check, evaluate)
