"""``VerificationConfig``: one verification run's configuration, with Karenina's 60 fields.

Field names, types and defaults follow Karenina (spec 4.1), so a Karenina preset
loads with :func:`load_preset` or ``VerificationConfig.model_validate_json``.
Validation applies Karenina's constructor side effects (4.2) and rules (4.3) on
every path (constructor, ``model_validate``, ``model_validate_json``), then
refuses settings that ask for features pytest-karenina cannot run yet
(:meth:`VerificationConfig.check_supported`) with a :class:`ConfigError`, so a
configuration that would silently do less than it says can never be built.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, NamedTuple, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PositiveInt,
    ValidationError,
    computed_field,
    field_serializer,
    model_validator,
)

from pytest_karenina.config.choices import (
    DeepJudgmentMode,
    DeepJudgmentRubricMode,
    EvaluationMode,
    RubricStrategy,
)
from pytest_karenina.config.model import ErrorPatternConfig, ModelConfig, RetryPolicy
from pytest_karenina.config.rules import (
    RUBRIC_MODES,
    prepare_input,
    rule_violations,
    unsupported_features,
)
from pytest_karenina.config.sections import (
    DEFAULT_EMBEDDING_MODEL,
    DEFAULT_EMBEDDING_THRESHOLD,
    ConfigError,
    DeepJudgmentRubricCustomConfig,
    FewShotConfig,
    PromptConfig,
)

__all__ = ["StampedModels", "VerificationConfig"]

SearchTool = str | Callable[..., Any]


class StampedModels(NamedTuple):
    """The run's models with its ``request_timeout`` and ``retry_policy`` filled in."""

    answering: list[ModelConfig]
    parsing: list[ModelConfig]


@contextmanager
def _unsupported_as_config_error() -> Iterator[None]:
    # pydantic wraps a ValueError raised by a validator (ConfigError is one) in
    # a ValidationError; callers of VerificationConfig get the ConfigError itself.
    try:
        yield
    except ValidationError as err:
        for detail in err.errors():
            cause = (detail.get("ctx") or {}).get("error")
            if not detail["loc"] and isinstance(cause, ConfigError):
                raise cause from None
        raise


class VerificationConfig(BaseModel):
    """How to run a verification: models, replicates, evaluation mode and options.

    Answering and parsing (judge) models are lists: every question runs for each
    answering model x parsing model x replicate.
    """

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    answering_models: list[ModelConfig] = Field(default_factory=list)
    """Models under test; those without a system prompt get ``DEFAULT_ANSWERING_SYSTEM_PROMPT``."""
    parsing_models: list[ModelConfig]
    """Judge models (at least one)."""
    replicate_count: int = Field(default=1, ge=1)
    """Times each question x model pair runs."""
    parsing_only: bool = False
    """Karenina TaskEval: judge existing answers (not supported by pytest-karenina)."""
    rubric_trait_names: list[str] | None = None
    """Only evaluate these rubric traits (None: all)."""
    rubric_evaluation_strategy: RubricStrategy | None = "batch"
    """LLM rubric traits in one judge call (``batch``) or one call per trait."""
    evaluation_mode: EvaluationMode = "template_only"
    use_full_trace_for_template: bool = False
    """The judge sees the whole trace instead of the final AI message only."""
    use_full_trace_for_rubric: bool = True
    """Rubric evaluation sees the whole trace instead of the final AI message only."""
    allow_partial_trace_scoring: bool = True
    """Score answers that a generation timeout cut short."""
    abstention_enabled: bool = False
    """Ask the judge whether the model refused to answer (a refusal fails)."""
    sufficiency_enabled: bool = False
    """Ask the judge whether the answer holds enough to fill the template."""
    include_extraction_hints: bool = True
    """Append the template's extraction hints to the parsing prompt."""
    embedding_check_enabled: bool = False
    """Semantic-similarity fallback when ``verify()`` fails (env ``EMBEDDING_CHECK``)."""
    embedding_check_model: str = DEFAULT_EMBEDDING_MODEL
    """SentenceTransformer model name (env ``EMBEDDING_CHECK_MODEL``)."""
    embedding_check_threshold: float = Field(default=DEFAULT_EMBEDDING_THRESHOLD, ge=0.0, le=1.0)
    """Similarity at or above which the fallback passes (env ``EMBEDDING_CHECK_THRESHOLD``)."""
    async_enabled: bool = True
    """Run questions concurrently (env ``KARENINA_ASYNC_ENABLED``)."""
    async_max_workers: int = Field(default=2, ge=1)
    """Concurrent questions (env ``KARENINA_ASYNC_MAX_WORKERS``)."""
    max_concurrent_requests: int | None = Field(default=None, ge=1)
    """Process-wide cap on LLM requests in flight (env ``KARENINA_MAX_CONCURRENT_LLM_REQUESTS``)."""
    batch_timeout_seconds: float | None = Field(default=None, gt=0)
    """Wall-clock limit of a whole concurrent batch."""
    task_ordering: Literal[
        "auto", "prefix_cache", "distribute_answerers", "generation_order", "random"
    ] = "auto"
    """Order of the task queue (``auto``: grouped for one answerer, round-robin for several)."""
    answerer_concurrency_limits: PositiveInt | dict[str, PositiveInt] | None = None
    """Concurrent tasks per answering model: one cap for all, or per ``ModelConfig.id``."""
    deep_judgment_mode: DeepJudgmentMode = "disabled"
    """Template deep judgment: ``full`` quotes evidence per attribute, reasons from it and parses
    from the reasoning; ``reasoning_only`` reasons from the response (docs/deep-judgment.md)."""
    deep_judgment_max_excerpts_per_attribute: int = 3
    deep_judgment_fuzzy_match_threshold: float = 0.8
    deep_judgment_excerpt_retry_attempts: int = 2
    deep_judgment_search_enabled: bool = False
    """Check excerpts against a search tool (needs ``full`` deep judgment)."""
    deep_judgment_search_tool: SearchTool = "tavily"
    """``"tavily"`` or a callable ``(query or queries) -> result(s)``."""
    deep_judgment_rubric_max_excerpts_default: int = 7
    deep_judgment_rubric_fuzzy_match_threshold_default: float = 0.8
    deep_judgment_rubric_excerpt_retry_attempts_default: int = 2
    deep_judgment_rubric_search_tool: SearchTool = "tavily"
    deep_judgment_rubric_mode: DeepJudgmentRubricMode = "disabled"
    """Which LLM traits are deep-judged: ``disabled`` (only traits that ask for it),
    ``enable_all``, ``use_checkpoint`` (the traits' stored settings) or ``custom``
    (``deep_judgment_rubric_config``); see docs/deep-judgment.md."""
    deep_judgment_rubric_global_excerpts: bool = True
    """Excerpts on or off for every trait in ``enable_all`` mode."""
    deep_judgment_rubric_config: DeepJudgmentRubricCustomConfig | None = None
    few_shot_config: FewShotConfig | None = None
    prompt_config: PromptConfig | None = None
    agentic_parsing: bool = False
    """The judge (a deep agent) investigates the answer's workspace before parsing (seed 004)."""
    agentic_parsing_trigger: Literal["always", "dynamic"] = "always"
    """``dynamic``: investigate only when a plain parse of the final answer is insufficient."""
    agentic_judge_context: Literal["workspace_only", "trace_and_workspace", "trace_only"] = (
        "workspace_only"
    )
    agentic_parsing_max_turns: int = Field(default=15, ge=1)
    agentic_parsing_timeout: float = Field(default=120.0, ge=0.0)
    agentic_parsing_materialize_trace: bool = False
    """Write the answering trace to a file for the investigating judge."""
    agentic_parsing_persist_trace: bool = False
    """Keep that file after the run."""
    agentic_rubric_strategy: Literal["individual", "shared"] = "individual"
    """Agentic rubric traits: one agent session per trait or one for all."""
    agentic_rubric_parallel: bool = False
    """``individual`` strategy: investigate a question's agentic traits at once."""
    workspace_copy: bool = True
    """Work on a copy of a question's workspace, keeping the original intact."""
    workspace_cleanup: bool = True
    """Delete working copies after the run."""
    workspace_output_mode: Literal["none", "full", "produced"] = "none"
    """Save final workspaces: not at all, whole, or only new and changed files."""
    workspace_output_dir: Path | None = None
    workspace_output_exclude_patterns: list[str] = Field(default_factory=list)
    """fnmatch patterns left out of saved workspaces."""
    db_config: Any | None = None
    """Karenina's SQL persistence (not supported by pytest-karenina)."""
    request_timeout: float = Field(default=120.0, gt=0)
    """Seconds per LLM request, for models without their own ``request_timeout``."""
    scenario_turn_limit: int = Field(default=20, ge=1)
    """Turns before a multi-turn scenario is stopped."""
    replay_store: Any = Field(default=None, exclude=True, repr=False)
    """Recorded answers to replay instead of calling the answering model; never dumped."""
    replay_parse_on_hydration_mismatch: Literal["fall_through", "strict"] = "fall_through"
    """When recorded parse fields no longer fit the template: run live, or fail."""
    skip_triples: frozenset[tuple[str, str, str, int | None]] | None = Field(
        default=None, exclude=True, repr=False
    )
    """(question id, answering key, parsing key, replicate) already done (resuming a run)."""
    retry_policy: RetryPolicy = Field(default_factory=RetryPolicy)
    """Retry budgets, for models without their own ``retry_policy``."""
    custom_error_patterns: list[ErrorPatternConfig] = Field(default_factory=list)
    """Extra error-classification rules for retrying."""
    max_requeue_count: int = Field(default=5, ge=1)
    """Times a task may wait for another task's answer before generating its own."""
    # pytest-karenina's own settings (Karenina presets never hold them):
    requests_per_minute: float | None = Field(default=None, gt=0)
    """Request starts per minute to each model, for models without their own (ours)."""
    max_call_seconds: float | None = Field(default=600.0, gt=0)
    """Total seconds one LLM call may take, retries and back-off waits included (ours)."""
    template_time_limit: float | None = Field(default=10.0, gt=0)
    """Seconds template code may run per step: compiling, building, verify() (ours)."""
    judge_replicate_count: int = Field(default=1, ge=1)
    """Times each answer is judged by each parsing model, the answer generated once (ours)."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def rubric_enabled(self) -> bool:
        """Whether rubrics are evaluated: true in the two rubric evaluation modes."""
        return self.evaluation_mode in RUBRIC_MODES

    def __init__(self, /, **data: Any) -> None:
        with _unsupported_as_config_error():
            super().__init__(**data)

    @classmethod
    def model_validate(cls, obj: Any, *args: Any, **kwargs: Any) -> Self:
        """Validate ``obj``; unsupported features raise :class:`ConfigError`."""
        with _unsupported_as_config_error():
            return super().model_validate(obj, *args, **kwargs)

    @classmethod
    def model_validate_json(cls, json_data: Any, *args: Any, **kwargs: Any) -> Self:
        """Validate JSON text; unsupported features raise :class:`ConfigError`."""
        with _unsupported_as_config_error():
            return super().model_validate_json(json_data, *args, **kwargs)

    @classmethod
    def model_validate_strings(cls, obj: Any, *args: Any, **kwargs: Any) -> Self:
        """Validate string data; unsupported features raise :class:`ConfigError`."""
        with _unsupported_as_config_error():
            return super().model_validate_strings(obj, *args, **kwargs)

    @field_serializer(
        "deep_judgment_search_tool", "deep_judgment_rubric_search_tool", when_used="json"
    )
    def _search_tool_name(self, tool: SearchTool) -> str:
        """A search function has no JSON form: exports and presets get its name."""
        if callable(tool):
            return f"<callable {getattr(tool, '__qualname__', type(tool).__name__)}>"
        return tool

    @model_validator(mode="before")
    @classmethod
    def _karenina_side_effects(cls, data: Any) -> Any:
        return prepare_input(data) if isinstance(data, dict) else data

    @model_validator(mode="after")
    def _rules_then_support(self) -> Self:
        problems = rule_violations(self)
        if problems:
            raise ValueError("; ".join(problems))
        self.check_supported()
        return self

    def check_supported(self) -> None:
        """Raise :class:`ConfigError` if a setting asks for a feature not built yet.

        Runs at the end of every validation; call it again after ``model_copy``
        or ``model_construct``, which skip validation.
        """
        found = unsupported_features(self)
        if not found:
            return
        if len(found) == 1:
            raise ConfigError(str(found[0]), problems=found)
        lines = "".join(f"\n  {item}" for item in found)
        raise ConfigError(
            f"{len(found)} settings need features not supported yet by pytest-karenina:{lines}",
            problems=found,
        )

    def stamp(self, model: ModelConfig) -> ModelConfig:
        """``model`` with this run's ``request_timeout``, ``retry_policy`` and request limits
        where it has none of its own."""
        update: dict[str, Any] = {}
        if model.request_timeout is None:
            update["request_timeout"] = self.request_timeout
        if model.retry_policy is None:
            update["retry_policy"] = self.retry_policy
        if model.max_concurrent_requests is None and self.max_concurrent_requests is not None:
            update["max_concurrent_requests"] = self.max_concurrent_requests
        if model.requests_per_minute is None and self.requests_per_minute is not None:
            update["requests_per_minute"] = self.requests_per_minute
        return model.model_copy(update=update) if update else model

    def stamped_models(self) -> StampedModels:
        """Copies of all models, stamped (spec 5.2); the configuration itself is unchanged."""
        return StampedModels(
            [self.stamp(model) for model in self.answering_models],
            [self.stamp(model) for model in self.parsing_models],
        )

    def is_few_shot_enabled(self) -> bool:
        """Whether few-shot prompting is on: a ``few_shot_config`` not ``disabled``."""
        return self.few_shot_config is not None and self.few_shot_config.enabled
