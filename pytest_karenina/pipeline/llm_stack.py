"""The run's LLM layer, assembled in one place: adapter -> limits and retries ->
record/replay -> the chat and structured ports stages call.

One :class:`LLMStack` per run stamps the configured models once and builds each model's
raw stack once, on its first use, shared by every thread: connection pools, concurrency
caps, pacing and the replay store are shared too. Per question, the pipeline only names
the question, the replicate and the judge replicate on the ports of its model pair
(:meth:`ModelPairLLMs.for_question`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pytest_karenina.config.model import REVEAL_SECRETS, ModelConfig
from pytest_karenina.config.secrets import setting_secrets, url_secrets
from pytest_karenina.config.verification import VerificationConfig
from pytest_karenina.llm.adapters.claude_agent_chat import ClaudeAgentChatModel
from pytest_karenina.llm.adapters.claude_tool import ClaudeToolModel
from pytest_karenina.llm.adapters.langchain_model import LangChainModel
from pytest_karenina.llm.adapters.manual_model import ManualModel
from pytest_karenina.llm.adapters.openai_endpoint import OpenAIEndpointModel
from pytest_karenina.llm.agent_ports import AgentPort, AgentResult, AgentRunConfig
from pytest_karenina.llm.agents.registry import agent_tier, uses_agent
from pytest_karenina.llm.assumed import AnswerMisses
from pytest_karenina.llm.batch.collector import BatchCollector
from pytest_karenina.llm.batch.model import BatchingModel
from pytest_karenina.llm.batch.registry import batch_parts
from pytest_karenina.llm.limits import ConcurrencyLimiter, RateLimiter
from pytest_karenina.llm.ports import ChatMessage, RawModel
from pytest_karenina.llm.provider_keys import configured_key
from pytest_karenina.llm.replay import ReplayingModel, ReplayStore
from pytest_karenina.llm.secret_logs import scrub_logs
from pytest_karenina.llm.service import LLMService
from pytest_karenina.llm.transport import RetryingModel
from pytest_karenina.pipeline.agent_stack import AgentFactory, build_agent, default_agent
from pytest_karenina.pipeline.replay_sides import (
    CountingAgent,
    CountingModel,
    LiveCalls,
    ReplaySides,
    Side,
)
from pytest_karenina.pipeline.retries import record_retry

logger = logging.getLogger(__name__)
AdapterFactory = Callable[[ModelConfig], RawModel]
"""Builds the raw model for a model config (a hook for custom adapters)."""
MissModel = Callable[[ModelConfig, Side], RawModel | None]
"""Builds what answers the calls a strict store misses, for a model on a side (None: a miss
stays a ReplayMiss): an estimate's assumed replies."""


NATIVE_STRUCTURED = (
    "langchain",
    "openai_endpoint",
    "openrouter",
    "claude_tool",
    "claude_agent_sdk",
)
"""Interfaces whose judge replies are asked for with the provider's structured output."""


def default_adapter(model: ModelConfig) -> RawModel:
    """The built-in adapter for ``model.interface``."""
    if model.interface == "manual":
        traces = model.manual_traces
        if isinstance(traces, str | Path):
            return ManualModel.from_file(traces)
        if isinstance(traces, Mapping):
            return ManualModel(traces)
        raise ValueError("a manual model needs manual_traces: a JSON file path or a mapping")
    if model.interface in ("openai_endpoint", "openrouter"):
        return OpenAIEndpointModel(model)
    if model.interface == "claude_tool":
        return ClaudeToolModel(model)
    if model.interface == "claude_agent_sdk":  # its one-call replies; its agent runs the CLI
        return ClaudeAgentChatModel(model)
    return LangChainModel(model)


def model_secrets(model: ModelConfig) -> list[str]:
    """Every secret value configured for ``model``, to keep out of replies, errors, logs and
    recordings: its API keys (for an interface with a key variable of its own, the key it
    sends, e.g. ``ANTHROPIC_API_KEY``); the credentials of its base URLs and MCP server URLs
    (``user:password@``, ``?token=``-like parameters); and in ``extra_kwargs`` the values
    under secret names (``api_key``, ``client_secret``...), secret-named or token-like
    header values (``default_headers``) and URL credentials
    (:func:`~pytest_karenina.config.secrets.setting_secrets`)."""
    values = [model.endpoint_api_key, model.anthropic_api_key]
    found = [secret.get_secret_value() for secret in values if secret is not None]
    found += [key] if (key := configured_key(model)) else []  # e.g. ANTHROPIC_API_KEY
    servers = (model.mcp_urls_dict or {}).values()
    for url in (model.endpoint_base_url, model.anthropic_base_url, *servers):
        found += url_secrets(url) if url else []
    found += setting_secrets(model.extra_kwargs or {})
    return list(dict.fromkeys(value for value in found if value))


def run_secrets(config: VerificationConfig) -> list[str]:
    """The secrets of every model of ``config``: a model can echo what another one is
    configured with (a shared header, a key in the environment of a tool)."""
    models = [*config.answering_models, *config.parsing_models]
    return list(dict.fromkeys(value for model in models for value in model_secrets(model)))


@dataclass(frozen=True)
class ModelPairLLMs:
    """The ports of one answering model x parsing model pair.

    ``answering``: the model under test; ``judge``: the parsing model (native structured
    output where the interface has it); ``judge_checks``: the parsing model at temperature
    0, for abstention and sufficiency checks. ``answering_agent``: the answering model's
    agent port when it answers as an agent (MCP tools, a deep-agent interface);
    ``judge_agent``: the parsing model's, when it is a deep agent (agentic parsing).
    """

    answering: LLMService
    judge: LLMService
    judge_checks: LLMService
    answering_agent: AgentPort | None = None
    judge_agent: AgentPort | None = None

    def for_question(
        self, question_id: str, replicate: int | None = None, judge_replicate: int | None = None
    ) -> ModelPairLLMs:
        """The same ports, naming ``question_id`` and ``replicate`` in every call they make,
        agent runs included: replicates are then keyed apart in the replay store. The judge's
        ports (``judge``, ``judge_checks``, ``judge_agent``) also name ``judge_replicate``, so
        each judge replicate's calls are keyed apart while the answer stays one."""
        return ModelPairLLMs(
            self.answering.for_question(question_id, replicate),
            self.judge.for_question(question_id, replicate, judge_replicate),
            self.judge_checks.for_question(question_id, replicate, judge_replicate),
            _for_replicate(self.answering_agent, replicate),
            _for_replicate(self.judge_agent, replicate, judge_replicate),
        )


@dataclass(frozen=True)
class ReplicateAgent:
    """An agent port whose runs carry ``replicate`` and ``judge_replicate`` (the stages build
    run configs without them), so each replicate's agent runs are recorded and replayed
    apart."""

    agent: AgentPort
    replicate: int | None
    judge_replicate: int | None = None

    def run(self, messages: Sequence[ChatMessage], config: AgentRunConfig) -> AgentResult:
        found = replace(config, replicate=self.replicate, judge_replicate=self.judge_replicate)
        return self.agent.run(messages, found)


def _for_replicate(
    agent: AgentPort | None, replicate: int | None, judge_replicate: int | None = None
) -> AgentPort | None:
    if agent is None or (replicate is None and judge_replicate is None):
        return agent
    return ReplicateAgent(agent, replicate, judge_replicate)


class LLMStack:
    """Builds, caches and hands out the LLM ports of one run.

    :attr:`answering_models` and :attr:`parsing_models` are the config's models, stamped
    once; tasks built from them find their ports by identity, built on first use. A model
    the stack did not stamp (a hand-built task) gets ports over the raw stack of an equal
    model, built once.

    ``replay``: one store for every call, or :class:`~.replay_sides.ReplaySides` (a store
    per side: answering calls and judge calls). The answering ports and agent of a pair go
    through the answering side's store, the judge's ports and agent through the judge
    side's, even when one model is both; a model's adapter and transport are built once.

    ``miss_model``: under strict replay, what answers a call the store lacks instead of a
    ``ReplayMiss`` (agent runs still miss); nothing it builds is recorded.

    ``batch``: the run's batch collector (``--karenina-batch``): the calls of models that can
    batch go through it, under the replay layer (recorded calls are never sent).
    """

    def __init__(
        self,
        config: VerificationConfig,
        *,
        replay: ReplayStore | ReplaySides | None = None,
        adapter_factory: AdapterFactory | None = None,
        agent_factory: AgentFactory | None = None,
        miss_model: MissModel | None = None,
        batch: BatchCollector | None = None,
    ) -> None:
        self.config = config
        self.batch = batch
        self.miss_model = miss_model
        self.sides = ReplaySides.of(replay)
        self.replay = self.sides.answering
        """The answering side's store (with one store for every call, that store)."""
        self.live_calls = LiveCalls()
        """How many calls each side sent to a live model."""
        self.adapter_factory = adapter_factory or default_adapter
        self.secrets = run_secrets(config)
        """What every reply, agent run, error, log record and recording of the run is
        scrubbed of."""
        scrub_logs(self.secrets)
        self.agent_factory = agent_factory or (
            lambda model: default_agent(model, config, self._secrets_of(model))
        )
        self.answering_models, self.parsing_models = config.stamped_models()
        # The stack holds these models, so their ids cannot be reused by other objects.
        self._own_ids = {id(model) for model in [*self.answering_models, *self.parsing_models]}
        self._lock = threading.Lock()
        self._raw: dict[tuple[Side, str], RawModel] = {}
        self._agents: dict[tuple[Side, str], AgentPort] = {}
        self._adapters: list[RawModel] = []
        self._adapter_of: dict[str, RawModel] = {}
        self._transport_of: dict[str, RawModel] = {}
        self._pairs: dict[tuple[int, int], ModelPairLLMs] = {}

    def pair(self, answering: ModelConfig, parsing: ModelConfig) -> ModelPairLLMs:
        """The ports of ``answering`` x ``parsing``."""
        key = (id(answering), id(parsing))
        found = self._pairs.get(key)
        if found is None:
            with self._lock:
                found = self._pairs.get(key) or self._build_pair(answering, parsing)
                if self._own_ids.issuperset(key):
                    self._pairs[key] = found
        return found

    def prepare(self) -> None:
        """Build the ports of every pair of the stack's own models, and their clients, now.

        Call it in the main thread before worker threads start: they then find every model
        ready (provider SDKs imported, connection pools made) instead of queueing behind the
        first thread's imports. A model that cannot be built is left to fail its own calls.
        """
        for answering in self.answering_models:
            for parsing in self.parsing_models:
                try:
                    self.pair(answering, parsing)
                except Exception:
                    continue
        for adapter in list(self._adapters):
            prepare = getattr(adapter, "prepare", None)
            try:
                if prepare is not None:
                    prepare()
            except Exception:
                continue

    def _build_pair(self, answering: ModelConfig, parsing: ModelConfig) -> ModelPairLLMs:
        native = parsing.interface in NATIVE_STRUCTURED
        at_zero = parsing.model_copy(update={"temperature": 0.0})
        judge_agent = agent_tier(parsing.interface) == "deep_agent"
        return ModelPairLLMs(
            answering=LLMService(self._raw_for(answering, "answering"), native_structured=False),
            judge=LLMService(self._raw_for(parsing, "judge"), native_structured=native),
            judge_checks=LLMService(self._raw_for(at_zero, "judge"), native_structured=native),
            answering_agent=(
                self._agent_for(answering, "answering") if uses_agent(answering) else None
            ),
            judge_agent=self._agent_for(parsing, "judge") if judge_agent else None,
        )

    def _agent_for(self, model: ModelConfig, side: Side) -> AgentPort:
        """The shared agent port of ``model`` on ``side`` (called with the lock held)."""
        key = (side, _model_key(model))
        agent = self._agents.get(key)
        if agent is None:
            secrets = self._secrets_of(model)
            store = self.sides.store(side)
            if store is not None:
                store.add_secrets(secrets)

            def live() -> AgentPort:
                return CountingAgent(self.agent_factory(model), self.live_calls, side)

            agent = self._agents[key] = build_agent(model, live, store, secrets)
        return agent

    def _secrets_of(self, model: ModelConfig) -> list[str]:
        """The run's secrets and ``model``'s (a hand-built task's model may have its own)."""
        own = [value for value in model_secrets(model) if value not in self.secrets]
        if own:
            scrub_logs(own)
        return [*self.secrets, *own]

    def _raw_for(self, model: ModelConfig, side: Side) -> RawModel:
        """The shared raw stack of ``model`` on ``side`` (called with the lock held)."""
        key = (side, _model_key(model))
        stack = self._raw.get(key)
        if stack is None:
            stack = self._raw[key] = self._build_raw(model, side)
        return stack

    def _build_raw(self, model: ModelConfig, side: Side) -> RawModel:
        key = _model_key(model)
        adapter = self._adapter_of.get(key)
        if adapter is None:
            adapter = self._adapter_of[key] = self.adapter_factory(model)
            self._adapters.append(adapter)
        # Manual answers are local already, and they depend on the question id,
        # which is not part of a replay key.
        replay = self.sides.store(side) if model.interface != "manual" else None
        secrets = self._secrets_of(model)
        if replay is not None:
            replay.add_secrets(secrets)
            if replay.mode == "strict":
                # No transport at all: strict replay cannot open a connection, and a miss
                # is a ReplayMiss naming the question and the call kind.
                replaying = ReplayingModel(None, replay, identity=adapter.replay_identity)
                fallback = self.miss_model(model, side) if self.miss_model else None
                return AnswerMisses(replaying, fallback) if fallback else replaying
        transport = self._transport_of.get(key)
        if transport is None:
            transport = self._transport_of[key] = self._transport(model, adapter, secrets)
        parts = batch_parts(model) if self.batch is not None else None
        if parts is not None and self.batch is not None:
            provider, codec = parts
            transport = BatchingModel(transport, codec, provider, self.batch, tuple(secrets))
        live = CountingModel(transport, self.live_calls, side)
        return ReplayingModel(live, replay) if replay is not None else live

    def _transport(self, model: ModelConfig, adapter: RawModel, secrets: list[str]) -> RawModel:
        """``adapter`` under ``model``'s limits and retries: one per model, both sides."""
        limit = model.max_concurrent_requests or self.config.max_concurrent_requests
        rate = model.requests_per_minute or self.config.requests_per_minute
        return RetryingModel(
            adapter,
            model.retry_policy,
            timeout=model.request_timeout,
            max_total_seconds=self.config.max_call_seconds,
            limiter=ConcurrencyLimiter(limit),
            rate_limiter=RateLimiter(rate),
            secrets=secrets,
            error_patterns=self.config.custom_error_patterns,
            on_retry=record_retry,
        )

    def stats(self) -> dict[str, Any]:
        return self.replay.stats() if self.replay is not None else {}

    def close(self) -> None:
        """Close what the agents hold open (MCP sessions, each within a bound: see
        docs/agents.md); they reopen if used again. A close that fails is a warning, and
        the other agents are closed all the same."""
        for agent in list(self._agents.values()):
            close = getattr(agent, "close", None)
            try:
                if close is not None:
                    close()
            except Exception as exc:
                logger.warning("closing an agent failed: %s: %s", type(exc).__name__, exc)


def _model_key(model: ModelConfig) -> str:
    # Everything that tells two models apart, secrets included (a dump for artifacts
    # masks header values and keys, which would make different models look equal).
    return model.model_dump_json(exclude={"manual_traces"}, context={REVEAL_SECRETS: True})
