"""Wiring the LLM layer for a run: adapter -> retries -> record/replay -> service.

One :class:`LLMFactory` per run builds each model's stack once and shares it
between threads, so connection pools, concurrency caps and the replay store
are shared too.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_karenina.llm.adapters.langchain_model import LangChainModel
from pytest_karenina.llm.adapters.manual_model import ManualModel
from pytest_karenina.llm.limits import ConcurrencyLimiter, RateLimiter
from pytest_karenina.llm.ports import RawModel
from pytest_karenina.llm.replay import ReplayingModel, ReplayStore
from pytest_karenina.llm.service import LLMService
from pytest_karenina.llm.transport import RetryingModel
from pytest_karenina.pipeline.retries import record_retry

if TYPE_CHECKING:
    from pytest_karenina.llm.model_config import ModelConfig
    from pytest_karenina.pipeline.config import VerificationConfig

AdapterFactory = Callable[["ModelConfig"], RawModel]
"""Builds the raw model for a model config (a hook for custom adapters)."""


def default_adapter(model: ModelConfig) -> RawModel:
    """The built-in adapter for ``model.interface``."""
    if model.interface == "manual":
        traces = model.manual_traces
        if isinstance(traces, str | Path):
            return ManualModel.from_file(traces)
        if isinstance(traces, Mapping):
            return ManualModel(traces)
        raise ValueError("a manual model needs manual_traces: a JSON file path or a mapping")
    return LangChainModel(model)


def model_secrets(model: ModelConfig) -> list[str]:
    """The secret values of ``model`` (to keep them out of logs and recordings)."""
    values = [model.endpoint_api_key, model.anthropic_api_key]
    return [secret.get_secret_value() for secret in values if secret is not None]


class LLMFactory:
    """Builds, caches and hands out the LLM services of one run."""

    def __init__(
        self,
        config: VerificationConfig,
        *,
        replay: ReplayStore | None = None,
        adapter_factory: AdapterFactory | None = None,
    ) -> None:
        self.config = config
        self.replay = replay
        self.adapter_factory = adapter_factory or default_adapter
        self._lock = threading.Lock()
        self._models: dict[str, RawModel] = {}

    def raw(self, model: ModelConfig) -> RawModel:
        """The shared raw-model stack of ``model`` (built on first use)."""
        key = model.model_dump_json(exclude={"manual_traces"})
        with self._lock:
            stack = self._models.get(key)
            if stack is None:
                stack = self._build(model)
                self._models[key] = stack
            return stack

    def _build(self, model: ModelConfig) -> RawModel:
        adapter = self.adapter_factory(model)
        # Manual answers are local already, and they depend on the question id,
        # which is not part of a replay key.
        replayable = model.interface != "manual"
        replay = self.replay if self.replay is not None and self.replay.mode != "off" else None
        if replay is not None and replayable:
            replay.add_secrets(model_secrets(model))
            if replay.mode == "strict":
                # No transport at all: strict replay cannot open a connection, and a miss
                # is a ReplayMiss naming the question and the call kind.
                return ReplayingModel(None, replay, identity=adapter.replay_identity)
        limit = model.max_concurrent_requests or self.config.max_concurrent_requests
        rate = model.requests_per_minute or self.config.requests_per_minute
        stack: RawModel = RetryingModel(
            adapter,
            model.retry_policy,
            timeout=model.request_timeout,
            max_total_seconds=self.config.max_call_seconds,
            limiter=ConcurrencyLimiter(limit),
            rate_limiter=RateLimiter(rate),
            secrets=model_secrets(model),
            on_retry=record_retry,
        )
        if replay is not None and replayable:
            stack = ReplayingModel(stack, replay)
        return stack

    def answering(self, model: ModelConfig, question_id: str) -> LLMService:
        return LLMService(self.raw(model), native_structured=False, question_id=question_id)

    def judge(self, model: ModelConfig, question_id: str) -> LLMService:
        native = model.interface in ("langchain", "openai_endpoint")
        return LLMService(self.raw(model), native_structured=native, question_id=question_id)

    def judge_checks(self, model: ModelConfig, question_id: str) -> LLMService:
        """The judge at temperature 0, for abstention and sufficiency checks."""
        return self.judge(model.model_copy(update={"temperature": 0.0}), question_id)

    def stats(self) -> dict[str, Any]:
        return self.replay.stats() if self.replay is not None else {}
