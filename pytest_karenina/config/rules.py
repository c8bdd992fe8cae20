"""What ``VerificationConfig`` does around pydantic's own validation.

* :func:`prepare_input` (before validation, spec 4.2): environment variables for
  absent fields, the default answering system prompt, keys Karenina accepts and
  drops, and the instruction shortcuts folded into ``prompt_config``.
* :func:`rule_violations` (after validation, spec 4.3): the cross-field rules.
* :func:`unsupported_features`: settings asking for features not built yet (the
  :data:`NOT_BUILT` table: any value but the default is refused).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, get_args

from pydantic import BaseModel

from pytest_karenina.config.choices import EvaluationMode, SupportedInterface
from pytest_karenina.config.model import ModelConfig
from pytest_karenina.config.sections import (
    DEFAULT_ANSWERING_SYSTEM_PROMPT,
    PromptTaskField,
    UnsupportedFeature,
)

if TYPE_CHECKING:
    from pytest_karenina.config.verification import VerificationConfig

RUBRIC_MODES: tuple[EvaluationMode, ...] = ("template_and_rubric", "rubric_only")
SUPPORTED_INTERFACES: tuple[SupportedInterface, ...] = get_args(SupportedInterface)
PROVIDER_INTERFACES = ("langchain", "langchain_deep_agents")
DEEP_AGENT_INTERFACES = ("claude_agent_sdk", "langchain_deep_agents")
SHORTCUTS = {f"{slot}_instructions": slot for slot in get_args(PromptTaskField)}
"""Shortcut key -> the ``prompt_config`` slot it fills when that slot is empty."""


def _env_bool(raw: str) -> bool:
    lowered = raw.strip().lower()
    if lowered in ("true", "1", "yes", "on"):
        return True
    if lowered in ("false", "0", "no", "off"):
        return False
    raise ValueError("not a boolean (true/false, 1/0, yes/no, on/off)")


ENVIRONMENT: tuple[tuple[str, str, Callable[[str], Any]], ...] = (
    ("embedding_check_enabled", "EMBEDDING_CHECK", _env_bool),
    ("embedding_check_model", "EMBEDDING_CHECK_MODEL", str.strip),
    ("embedding_check_threshold", "EMBEDDING_CHECK_THRESHOLD", float),
    ("async_enabled", "KARENINA_ASYNC_ENABLED", _env_bool),
    ("async_max_workers", "KARENINA_ASYNC_MAX_WORKERS", int),
    ("max_concurrent_requests", "KARENINA_MAX_CONCURRENT_LLM_REQUESTS", int),
)
"""(field, environment variable, parser): read only when the field is absent (spec 4.11)."""


def prepare_input(data: dict[str, Any]) -> dict[str, Any]:
    """A copy of the constructor input with Karenina's side effects applied (spec 4.2)."""
    data = dict(data)
    for field, variable, parse in ENVIRONMENT:
        raw = os.environ.get(variable, "")
        if field in data or not raw.strip():
            continue
        try:
            data[field] = parse(raw)
        except ValueError as exc:
            raise ValueError(f"environment variable {variable}={raw!r}: {exc}") from None
    _check_rubric_enabled(data)
    _fold_deep_judgment_enabled(data)
    data.pop("deep_judgment_rubric_search_enabled", None)
    _fold_shortcuts(data)
    models = data.get("answering_models")
    if isinstance(models, list | tuple):
        data["answering_models"] = [_with_system_prompt(model) for model in models]
    return data


def _fold_deep_judgment_enabled(data: dict[str, Any]) -> None:
    # Seed 000's flag: True means deep_judgment_mode="full" unless a mode is given; a mode
    # that contradicts it is refused rather than one of the two silently winning.
    if "deep_judgment_enabled" not in data:
        return
    enabled = data.pop("deep_judgment_enabled")
    mode = data.get("deep_judgment_mode")
    if mode is None:
        data["deep_judgment_mode"] = "full" if enabled else "disabled"
    elif bool(enabled) != (mode != "disabled"):
        raise ValueError(
            f"deep_judgment_enabled={enabled!r} contradicts deep_judgment_mode={mode!r}"
        )


def _check_rubric_enabled(data: dict[str, Any]) -> None:
    # rubric_enabled is derived from evaluation_mode; a contradicting value
    # would silently not do what it says, so it is refused rather than dropped.
    given = data.pop("rubric_enabled", None)
    mode = data.get("evaluation_mode", "template_only")
    if given is None or mode not in ("template_only", *RUBRIC_MODES):
        return
    if bool(given) != (mode in RUBRIC_MODES):
        raise ValueError(
            f"rubric_enabled={given!r} contradicts evaluation_mode={mode!r}: rubric_enabled "
            "is derived from evaluation_mode (use 'template_and_rubric' or 'rubric_only' "
            "for rubric evaluation)"
        )


def _fold_shortcuts(data: dict[str, Any]) -> None:
    given = {slot: data.pop(key) for key, slot in SHORTCUTS.items() if key in data}
    given = {slot: text for slot, text in given.items() if text is not None}
    if not given:
        return
    current = data.get("prompt_config")
    if isinstance(current, BaseModel):
        current = current.model_dump()
    slots = dict(current) if isinstance(current, dict) else {}
    for slot, text in given.items():
        if slots.get(slot) is None:
            slots[slot] = text
    data["prompt_config"] = slots


def _with_system_prompt(model: Any) -> Any:
    if isinstance(model, ModelConfig) and not model.system_prompt:
        return model.model_copy(update={"system_prompt": DEFAULT_ANSWERING_SYSTEM_PROMPT})
    if isinstance(model, dict) and not model.get("system_prompt"):
        return {**model, "system_prompt": DEFAULT_ANSWERING_SYSTEM_PROMPT}
    return model


def roles(config: VerificationConfig) -> Iterator[tuple[str, ModelConfig]]:
    """``(path, model)`` for every answering then parsing model, e.g. ``parsing_models[0]``."""
    for group in ("answering_models", "parsing_models"):
        for index, model in enumerate(getattr(config, group)):
            yield f"{group}[{index}]", model


def rule_violations(config: VerificationConfig) -> list[str]:
    """Every broken cross-field rule of spec 4.3 (plus ``openai_endpoint`` needing a URL)."""
    found: list[str] = []
    if not config.parsing_models:
        found.append("parsing_models: at least one parsing (judge) model is required")
    if not config.answering_models and not config.parsing_only:
        found.append("answering_models: at least one answering model is required")
    for path, model in roles(config):
        if not model.model_name:
            found.append(f"{path}.model_name is required")
        if model.interface in PROVIDER_INTERFACES and not model.model_provider:
            found.append(f"{path}.model_provider is required for interface {model.interface!r}")
        if model.interface == "openai_endpoint" and not model.endpoint_base_url:
            found.append(f"{path}.endpoint_base_url is required for interface 'openai_endpoint'")
        if model.interface == "langchain_deep_agents" and model.endpoint_base_url:
            if model.endpoint_api_key is None:  # else the provider's own key goes there
                found.append(f"{path}.endpoint_api_key is required with endpoint_base_url for "
                             "interface 'langchain_deep_agents'")  # fmt: skip
        if path.startswith("answering") and not model.system_prompt:
            found.append(f"{path}.system_prompt is required for an answering model")
    found.extend(_few_shot_violations(config))
    found.extend(_deep_judgment_violations(config))
    found.extend(_agentic_violations(config))
    if config.workspace_output_mode != "none" and config.workspace_output_dir is None:
        found.append(
            f"workspace_output_mode={config.workspace_output_mode!r} needs "
            "workspace_output_dir (the directory saved workspaces go to)"
        )
    return found


def _few_shot_violations(config: VerificationConfig) -> Iterator[str]:
    few_shot = config.few_shot_config
    if few_shot is None or not few_shot.enabled:
        return
    if few_shot.pool_mode == "k-shot" and few_shot.pool_k < 1:
        yield "few_shot_config.pool_k must be at least 1 in 'k-shot' mode"
    for question_id, own in few_shot.question_configs.items():
        if own.mode == "k-shot" and own.k is not None and own.k < 1:
            yield f"few_shot_config.question_configs[{question_id!r}].k must be at least 1"


def _deep_judgment_violations(config: VerificationConfig) -> Iterator[str]:
    if config.deep_judgment_search_enabled:
        if config.deep_judgment_mode == "reasoning_only":
            yield (
                "deep_judgment_search_enabled=True needs excerpts, which "
                "deep_judgment_mode='reasoning_only' does not extract (use 'full')"
            )
    if config.deep_judgment_rubric_mode == "custom" and config.deep_judgment_rubric_config is None:
        yield "deep_judgment_rubric_mode='custom' needs deep_judgment_rubric_config"


def _agentic_violations(config: VerificationConfig) -> Iterator[str]:
    if config.agentic_parsing_trigger == "dynamic" and not config.agentic_parsing:
        yield "agentic_parsing_trigger='dynamic' needs agentic_parsing=True"
    if not config.agentic_parsing:
        return
    for index, model in enumerate(config.parsing_models):
        if model.interface not in DEEP_AGENT_INTERFACES:
            yield (
                f"agentic_parsing=True needs a deep-agent judge {DEEP_AGENT_INTERFACES}, but "
                f"parsing_models[{index}].interface is {model.interface!r}"
            )
    if config.evaluation_mode == "rubric_only":
        yield "agentic_parsing=True cannot be used with evaluation_mode='rubric_only'"
    if config.agentic_parsing_materialize_trace and config.agentic_judge_context == (
        "workspace_only"
    ):
        yield (
            "agentic_parsing_materialize_trace=True needs a trace, which "
            "agentic_judge_context='workspace_only' leaves out"
        )


NOT_BUILT: tuple[tuple[str, str, str], ...] = (
    ("batch_timeout_seconds", "a time limit on a whole batch",
     "request_timeout and max_call_seconds bound each call"),
    ("task_ordering", "a task order other than 'auto'",
     "tasks run in question order, each question's answering models in turn"),
    ("answerer_concurrency_limits", "a task cap per answering model",
     "cap a model's requests with its max_concurrent_requests"),
    ("agentic_parsing_trigger", "dynamic agentic parsing (investigate only when needed)", ""),
    ("replay_store", "Karenina's replay of earlier results",
     "record and replay LLM calls with --karenina-replay"),
    ("replay_parse_on_hydration_mismatch", "Karenina's replay of earlier results", ""),
    ("skip_triples", "resuming a run", ""),
)  # fmt: skip
"""(field, feature, extra hint): ``VerificationConfig`` settings whose default is all
pytest-karenina runs; any other value is refused (docs/configuration.md lists every field)."""
MODEL_NOT_BUILT: tuple[tuple[str, str, str], ...] = (
    ("agent_runtime", "an agent runtime setting (backend, sandbox)", ""),
    ("max_context_tokens", "summarizing long agent conversations", ""),
)
"""The same for ``ModelConfig`` fields, checked on every answering and parsing model."""


def _not_built(
    model: BaseModel, table: tuple[tuple[str, str, str], ...], prefix: str = ""
) -> Iterator[UnsupportedFeature]:
    fields = type(model).model_fields
    for name, feature, extra in table:
        value = getattr(model, name)
        default = fields[name].get_default(call_default_factory=True)
        if value == default:
            continue
        hint = f"leave it {json.dumps(default)}" + (f"; {extra}" if extra else "")
        yield UnsupportedFeature(f"{prefix}{name}", _shown(value), feature, hint)


def _shown(value: Any) -> Any:
    """``value`` as an error message shows it: scalars and lists of strings as they are."""
    if value is None or isinstance(value, str | int | float):
        return value
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return value
    return str(value) if isinstance(value, PurePath) else "<set>"


def unsupported_features(config: VerificationConfig) -> list[UnsupportedFeature]:
    """Every setting that would switch on a feature pytest-karenina cannot run yet."""
    found: list[UnsupportedFeature] = []
    if config.parsing_only:
        found.append(
            UnsupportedFeature(
                "parsing_only", True, "parsing-only (TaskEval) runs", "set it to false"
            )
        )
    if config.db_config is not None:
        found.append(
            UnsupportedFeature(
                "db_config", "<set>", "database persistence of results", "leave it null"
            )
        )
    found.extend(_not_built(config, NOT_BUILT))
    for path, model in roles(config):
        if model.interface not in SUPPORTED_INTERFACES:
            found.append(
                UnsupportedFeature(
                    f"{path}.interface",
                    model.interface,
                    f"the {model.interface!r} interface",
                    f"use one of {', '.join(map(repr, SUPPORTED_INTERFACES))}",
                )
            )
        found.extend(_not_built(model, MODEL_NOT_BUILT, f"{path}."))
        if model.interface == "claude_agent_sdk" and model.mcp_tool_description_overrides:
            found.append(
                UnsupportedFeature(
                    f"{path}.mcp_tool_description_overrides",
                    "<set>",
                    "MCP tool descriptions of a claude_agent_sdk model (the Claude Code CLI "
                    "describes the tools itself)",
                    "leave it null",
                )
            )
    return found
