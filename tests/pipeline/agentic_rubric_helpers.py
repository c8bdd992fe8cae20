"""Scripted deep-agent judges for stage 11b (AgenticRubricEvaluation) unit tests.

A :class:`ScriptedAgents` is an LLM stack's ``agent_factory``: each deep-agent model gets a
:class:`ScriptedAgent` (by model id) answering each run with its ``reply`` function, and every
run is recorded with its messages and run config. Extraction calls go to a
:class:`~tests.support.fake_llm.FakeLLM` (the judge's structured port).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_karenina.config.model import ModelConfig
from pytest_karenina.config.verification import VerificationConfig
from pytest_karenina.llm.agent_ports import AgentResult, AgentRunConfig
from pytest_karenina.llm.ports import ChatMessage, Usage
from pytest_karenina.pipeline.context import VerificationContext
from pytest_karenina.pipeline.llm_stack import LLMStack
from pytest_karenina.results import VerificationResult
from pytest_karenina.rubrics.traits import Rubric
from tests.pipeline.pipeline_helpers import CLASSIC
from tests.support.fake_llm import FakeLLM, fake_config, question, run_one

EXTRACTION = "rubric_agentic_trait_extraction"
INVESTIGATION = "rubric_agentic_trait_investigation"
AgentReply = Callable[[list[ChatMessage], AgentRunConfig], AgentResult]


def report(text: str, *, calls: int = 1, **flags: Any) -> AgentResult:
    """An investigation that ends with ``text`` (``limit_reached``/``timeout_reached``
    flags as given)."""
    trace = [{"role": "assistant", "content": text, "block_index": 0}]
    return AgentResult(text, trace, Usage(5, 3), turns=calls, **flags)


def criterion(messages: Sequence[ChatMessage]) -> str:
    """The trait a single-trait investigation is about (its system message names it)."""
    system = messages[0].content
    if "## Criterion: " not in system:
        return ""
    return system.split("## Criterion: ", 1)[1].split("\n", 1)[0]


@dataclass
class ScriptedAgent:
    reply: AgentReply
    runs: list[tuple[list[ChatMessage], AgentRunConfig]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def run(self, messages: Sequence[ChatMessage], config: AgentRunConfig) -> AgentResult:
        with self.lock:
            self.runs.append((list(messages), config))
        return self.reply(list(messages), config)

    def run_of(self, trait: str) -> tuple[list[ChatMessage], AgentRunConfig]:
        (found,) = [run for run in self.runs if criterion(run[0]) == trait]
        return found


@dataclass
class ScriptedAgents:
    """Agents by model id; a model without a script gets a default reply."""

    replies: dict[str, AgentReply] = field(default_factory=dict)
    built: dict[str, ScriptedAgent] = field(default_factory=dict)

    def build(self, model: ModelConfig) -> ScriptedAgent:
        name = model.id or "?"
        agent = self.built.get(name)
        if agent is None:
            reply = self.replies.get(name, lambda messages, config: report("Nothing found."))
            agent = self.built[name] = ScriptedAgent(reply)
        return agent

    def __getitem__(self, name: str) -> ScriptedAgent:
        return self.built[name]


JUDGE_KEY = "sk-judge-secret-7f3a9c"
"""The judge's API key (``extra_kwargs``): a secret no result may hold."""


def deep_judge(name: str = "judge") -> ModelConfig:
    return ModelConfig(id=name, model_name=f"{name}-model", interface="langchain_deep_agents",
                       model_provider="openai", extra_kwargs={"api_key": JUDGE_KEY})  # fmt: skip


def override(name: str) -> dict[str, Any]:
    """A trait's ``model_override`` mapping naming another deep-agent model."""
    return deep_judge(name).model_dump(exclude_none=True)


def agentic_config(**fields: Any) -> VerificationConfig:
    return fake_config(judges=[deep_judge()], **{"evaluation_mode": "rubric_only", **fields})


def run_agentic(
    traits: list[Any],
    fake: FakeLLM,
    agents: ScriptedAgents,
    *,
    workspace: Path | None = None,
    dynamic: list[Any] | None = None,
    **fields: Any,
) -> VerificationResult:
    """One question with ``traits`` as its rubric, answered by ``fake`` and judged by the
    scripted agents; ``workspace``: the answer's workspace."""
    config = agentic_config(**fields)
    stack = LLMStack(config, adapter_factory=fake.for_model, agent_factory=agents.build)

    def prepare(context: VerificationContext) -> None:
        context.workspace_path = workspace
        if dynamic is not None:
            context.dynamic_rubric = Rubric.from_traits(dynamic)

    item = question(CLASSIC).model_copy(update={"rubric": Rubric.from_traits(traits)})
    return run_one(item, config, stack, prepare=prepare)
