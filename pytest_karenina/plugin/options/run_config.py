"""The run's VerificationConfig, built from the plugin's :class:`~.settings.Settings`.

Model strings: with ``--karenina-endpoint`` (or interface ``openai_endpoint``) a string is the
server's model name as is (``llama3:8b``), and so with interfaces ``claude_tool`` and
``openrouter`` (``--karenina-endpoint`` then names their server); with interface ``manual``
it is the JSON file of recorded answers; otherwise ``provider:model`` as ``init_chat_model``
takes it. A string equal
to the ``id`` of a preset model picks that model. Without ``--karenina-parsing-model`` the
preset's parsing models are used, else the answering models judge their own answers. With
``--karenina-judge-check`` no model answers: the labels file's answers stand in for the
answering models (which still judge when no parsing model is given).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.config.model import ModelConfig, RetryPolicy
from pytest_karenina.config.presets import load_preset
from pytest_karenina.config.sections import ConfigError
from pytest_karenina.config.verification import VerificationConfig
from pytest_karenina.llm.providers import provider_problem
from pytest_karenina.pipeline.agent_stack import agents_unavailable
from pytest_karenina.plugin.options.settings import Settings
from pytest_karenina.plugin.options.workspace_output import check_workspace_output
from pytest_karenina.plugin.verdict.replicates import ReplicatePolicyError


def _model(text: str, settings: Settings, known: dict[str, ModelConfig]) -> ModelConfig:
    if text in known:
        return known[text]
    interface = settings.interface or ("openai_endpoint" if settings.endpoint else "langchain")
    if interface == "manual":
        path = Path(text)
        if not path.is_file():
            raise pytest.UsageError(f"--karenina-answering-model: no manual answers file {text}")
        return ModelConfig(id=f"manual-{path.stem}", interface="manual", manual_traces=path)
    if interface == "openai_endpoint":
        if not settings.endpoint:
            raise pytest.UsageError(
                "--karenina-interface openai_endpoint needs --karenina-endpoint"
            )
        return ModelConfig(
            id=text, model_name=text, interface="openai_endpoint",
            endpoint_base_url=settings.endpoint,
        )  # fmt: skip
    if interface in ("claude_tool", "claude_agent_sdk", "openrouter"):  # the API's model name
        field = "endpoint_base_url" if interface == "openrouter" else "anthropic_base_url"
        server = {field: settings.endpoint} if settings.endpoint else {}
        return ModelConfig(id=text, model_name=text, interface=interface, **server)
    provider, sep, name = text.partition(":")
    if not sep or not provider or not name:
        raise pytest.UsageError(
            f"model {text!r}: expected provider:model (e.g. openai:gpt-4.1-mini), "
            "or the id of a model in the --karenina-config preset"
        )
    chosen = "langchain_deep_agents" if interface == "langchain_deep_agents" else "langchain"
    return ModelConfig(id=text, model_provider=provider, model_name=name, interface=chosen)


LABELS_MODEL_ID = "labels"
"""The answering model of a ``--karenina-judge-check`` run: the labels file's answers."""


def labelled_answers(labels: Path) -> ModelConfig:
    """The answering model of a judge-check run: manual, never asked (each item hands its
    labelled answer to the pipeline), named after the labels file."""
    return ModelConfig(
        id=LABELS_MODEL_ID, model_name=labels.name, interface="manual", manual_traces={}
    )


def _base(settings: Settings) -> VerificationConfig | None:
    if settings.preset is None:
        return None
    try:
        return load_preset(settings.preset)
    except (ConfigError, OSError, ValueError) as exc:
        raise pytest.UsageError(f"--karenina-config {settings.preset}: {exc}") from None


def build_config(settings: Settings) -> VerificationConfig:
    """The run's config: the preset (if any) with every option given on top (raises
    ``pytest.UsageError`` on bad input)."""
    base = _base(settings)
    known: dict[str, ModelConfig] = {}
    if base is not None:
        for model in [*base.answering_models, *base.parsing_models]:
            if model.id:
                known.setdefault(model.id, model)
    answering = [_model(text, settings, known) for text in settings.answering_models]
    parsing = [_model(text, settings, known) for text in settings.parsing_models]
    if not answering:
        answering = list(base.answering_models) if base is not None else []
    if not answering and settings.judge_check is None:
        raise pytest.UsageError(
            "pytest-karenina: no answering model; give --karenina-answering-model "
            "(e.g. openai:gpt-4.1-mini) or a preset with --karenina-config"
        )
    if not parsing:
        parsing = list(base.parsing_models) if base is not None else []
    if not parsing:
        parsing = [model for model in answering if model.interface != "manual"]
    if not parsing:
        raise pytest.UsageError(
            "pytest-karenina: manual answers need a judge; give --karenina-parsing-model"
        )
    values: dict[str, Any] = {}
    if base is not None:
        values = {name: getattr(base, name) for name in VerificationConfig.model_fields}
    if settings.judge_check is not None:  # the labels hold the answers: nothing answers
        answering = [labelled_answers(settings.judge_check)]
    values.update(answering_models=answering, parsing_models=parsing)
    updates = {
        "evaluation_mode": settings.mode,
        "replicate_count": settings.replicates,
        "judge_replicate_count": settings.judge_replicates,
        "abstention_enabled": settings.abstention,
        "sufficiency_enabled": settings.sufficiency,
        "embedding_check_enabled": settings.embedding_check,
        "embedding_check_model": settings.embedding_check_model,
        "embedding_check_threshold": settings.embedding_check_threshold,
        "rubric_evaluation_strategy": settings.rubric_strategy,
        "deep_judgment_mode": settings.deep_judgment,
        "deep_judgment_rubric_mode": settings.deep_judgment_rubric,
        "max_call_seconds": settings.llm_timeout,
        "request_timeout": settings.request_timeout,
        "template_time_limit": settings.template_timeout,
        "max_concurrent_requests": settings.max_concurrent_requests,
        "requests_per_minute": settings.requests_per_minute,
    }
    values.update({name: value for name, value in updates.items() if value is not None})
    values.update(_request_limits(settings, values))
    try:
        return VerificationConfig(**values)
    except (ConfigError, ValueError) as exc:
        raise pytest.UsageError(f"pytest-karenina: invalid configuration: {exc}") from None


def _capped(policy: RetryPolicy | None, retries: int | None) -> RetryPolicy | None:
    if policy is None or retries is None:
        return policy
    update = {
        name: getattr(policy, name).model_copy(
            update={"max_attempts": min(getattr(policy, name).max_attempts, retries)}
        )
        for name in ("connection", "timeout", "rate_limit", "server_error")
    }
    return policy.model_copy(update=update)


def _request_limits(settings: Settings, values: dict[str, Any]) -> dict[str, Any]:
    """Retry caps, and each xdist worker's share of every request limit.

    A worker gets ``limit // workers`` concurrent requests (at least 1) and
    ``rate / workers`` requests a minute, so ``-n N`` keeps the provider's load at the limit.
    """
    workers = settings.workers

    def share_slots(limit: int | None) -> int | None:
        return None if limit is None else max(1, limit // workers)

    def share_rate(rate: float | None) -> float | None:
        return None if rate is None else rate / workers

    def adjust(model: ModelConfig) -> ModelConfig:
        return model.model_copy(update={
            "retry_policy": _capped(model.retry_policy, settings.max_retries),
            "max_concurrent_requests": share_slots(model.max_concurrent_requests),
            "requests_per_minute": share_rate(model.requests_per_minute),
        })  # fmt: skip

    return {
        "retry_policy": _capped(values.get("retry_policy") or RetryPolicy(), settings.max_retries),
        "max_concurrent_requests": share_slots(values.get("max_concurrent_requests")),
        "requests_per_minute": share_rate(values.get("requests_per_minute")),
        "answering_models": [adjust(model) for model in values["answering_models"]],
        "parsing_models": [adjust(model) for model in values["parsing_models"]],
    }


SEARCH_TOOL_SETTINGS = ("deep_judgment_search_tool", "deep_judgment_rubric_search_tool")
BUILT_IN_SEARCH_TOOL = "tavily"


def with_search_tools(config: pytest.Config, vconfig: VerificationConfig) -> VerificationConfig:
    """``vconfig`` with each search tool named other than ``"tavily"`` replaced by the
    function a ``pytest_karenina_search_tool`` hook returns for it (none: the name stays,
    and a question that searches with it errors)."""
    found = {}
    for setting in SEARCH_TOOL_SETTINGS:
        name = getattr(vconfig, setting)
        if isinstance(name, str) and name.strip().lower() != BUILT_IN_SEARCH_TOOL:
            tool = config.hook.pytest_karenina_search_tool(config=config, name=name)
            if tool is not None:
                found[setting] = tool
    return vconfig.model_copy(update=found) if found else vconfig


def check_run(settings: Settings, vconfig: VerificationConfig) -> None:
    """Usage errors the built configuration reveals: a model LangChain cannot build, agents
    without their extra, a replicate policy's K above the replicates, a comparison reference
    that is no answering model, a ``workspace_output_dir`` saves must not go to."""
    check_providers(vconfig)
    check_workspace_output(settings, vconfig)
    missing = agents_unavailable(vconfig)
    if missing is not None:
        raise pytest.UsageError(f"karenina: {missing}")
    try:
        settings.replicate_policy.check(vconfig.replicate_count)
    except ReplicatePolicyError as exc:
        raise pytest.UsageError(f"--karenina-replicate-policy: {exc}") from None
    known = [model.id for model in vconfig.answering_models]
    if settings.compare_to is not None and settings.compare_to not in known:
        raise pytest.UsageError(
            f"--karenina-compare-to: {settings.compare_to!r} is not an answering model "
            f"(the run has {', '.join(map(repr, known))})"
        )


def check_providers(vconfig: VerificationConfig) -> None:
    """One usage error for every model whose LangChain provider is unknown (with the closest
    known name) or whose provider package is missing, before any question runs."""
    found: dict[str, tuple[list[str], str]] = {}
    roles = [("answering", vconfig.answering_models), ("parsing", vconfig.parsing_models)]
    for role, models in roles:
        for model in models:
            problem = provider_problem(model)
            if problem is not None:
                found.setdefault(str(model.id), ([], problem))[0].append(role)
    lines = [f"model {name!r} ({', '.join(used)}): {why}" for name, (used, why) in found.items()]
    if len(lines) == 1:
        raise pytest.UsageError(f"pytest-karenina: {lines[0]}")
    if lines:
        raise pytest.UsageError(
            "\n".join(
                ["pytest-karenina: models LangChain cannot build:"]
                + [f"  - {line}" for line in lines]
            )
        )
