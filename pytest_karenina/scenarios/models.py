"""A scenario as pytest-karenina runs it: nodes, edges, outcome criteria.

Karenina stores scenarios in a checkpoint's root ``hasPart`` (``karenina:Scenario`` objects);
:mod:`.load` reads them into these types. Conditions over the routing state are
:class:`StateCheck` s (a dot path, an expected value and a verification primitive); outcome
criteria are declarative checks (:mod:`.checks`) or the source of a function over the whole
execution. Source strings (``stateUpdateSource``, ``conditionSource``, ``evaluateSource``) are
code, as templates are: :class:`SourceFunction` compiles them once and calls them under the
run's template time limit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_karenina.config.model import REVEAL_SECRETS, ModelConfig

if TYPE_CHECKING:
    from pytest_karenina.checkpoint import Question
    from pytest_karenina.scenarios.checks import OutcomeCheck
    from pytest_karenina.scenarios.code import SourceFunction
    from pytest_karenina.templates.primitives import VerificationPrimitive

END = "__end__"
"""The target of an edge that ends the execution (Karenina's sentinel)."""

HANDOVERS = ("transcript_prepend", "transcript_append")
"""The handover strategies a checkpoint may name that pytest-karenina runs."""


class ScenarioError(ValueError):
    """A scenario that cannot be run: the message names the checkpoint, scenario and field."""


@dataclass(frozen=True)
class StateCheck:
    """A condition over the routing state: ``verify_with.check(<field's value>, expected)``.

    ``field`` is a dot path: ``verify_result``, ``turn``, ``current_node``, ``parsed.<x>``,
    ``accumulated.<x>``, ``node_visits.<node>``, ``node_results.<node>[.verify_result |
    .parsed.<x> | .rubric.<trait>]``.
    """

    field: str
    verify_with: VerificationPrimitive
    expected: Any = None


@dataclass(frozen=True)
class ScenarioEdge:
    """A transition. Without ``condition`` and ``condition_source`` it is a fallback, taken
    when no conditional edge of its source matches (the first fallback wins)."""

    source: str
    target: str
    condition: tuple[StateCheck, ...] | None = None
    condition_source: SourceFunction | None = None
    handover: str | None = None

    @property
    def conditional(self) -> bool:
        return self.condition is not None or self.condition_source is not None


@dataclass(frozen=True)
class ModelOverride:
    """The fields a node changes on the run's answering and parsing models (``None``: the
    run's model as it is)."""

    answering: Mapping[str, Any] | None = None
    parsing: Mapping[str, Any] | None = None

    def apply(
        self, answering: ModelConfig, parsing: ModelConfig
    ) -> tuple[ModelConfig, ModelConfig]:
        """The node's models: each override's fields over the run's model."""
        return _over(answering, self.answering), _over(parsing, self.parsing)


def _over(base: ModelConfig, fields: Mapping[str, Any] | None) -> ModelConfig:
    """``fields`` over ``base``. Checkpoints never hold API keys (Karenina strips them): the
    base's key is kept only for the same server (endpoint) or the same interface and provider
    (Anthropic), so a checkpoint cannot send the run's key to a server of its choosing."""
    if not fields:
        return base
    merged = {**base.model_dump(context={REVEAL_SECRETS: True}), **fields}
    url = merged.get("endpoint_base_url")
    if "endpoint_api_key" not in fields and url != base.endpoint_base_url:
        merged["endpoint_api_key"] = None
    same_family = (merged.get("interface"), merged.get("model_provider")) == (
        base.interface,
        base.model_provider,
    )
    same_server = merged.get("anthropic_base_url") == base.anthropic_base_url
    if "anthropic_api_key" not in fields and not (same_family and same_server):
        merged["anthropic_api_key"] = None
    return ModelConfig.model_validate(merged)


@dataclass(frozen=True)
class ScenarioNode:
    """One point of the graph: the question asked there (with its template and rubric)."""

    node_id: str
    question: Question
    model_override: ModelOverride | None = None
    state_update: SourceFunction | None = None
    agent_identity: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class OutcomeCriterion:
    """Judged over the whole execution once it ends: a declarative ``check`` or the
    ``evaluate`` function (called with the execution)."""

    name: str
    description: str = ""
    check: OutcomeCheck | None = None
    evaluate: SourceFunction | None = None


@dataclass(frozen=True)
class ScenarioDefinition:
    """A validated scenario: every edge names known nodes (or :data:`END`), the entry node
    exists, source strings compiled."""

    name: str
    nodes: Mapping[str, ScenarioNode]
    edges: tuple[ScenarioEdge, ...]
    entry_node: str
    description: str = ""
    outcome_criteria: tuple[OutcomeCriterion, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def outgoing(self, node_id: str) -> list[ScenarioEdge]:
        """The edges leaving ``node_id``, in the checkpoint's order."""
        return [edge for edge in self.edges if edge.source == node_id]
