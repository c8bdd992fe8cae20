"""The small models a :class:`~pytest_karenina.config.model.ModelConfig` is built from.

``RetryPolicy`` (Karenina's per-error-category retry budgets, spec 4.5) and
``ErrorPatternConfig`` are fully typed. The agent models accept whatever Karenina writes so
presets load: of ``AgentMiddlewareConfig`` only the call limits are read (the other keys are
carried); an ``AgentRuntimeConfig`` is refused (``config/rules.py``, ``MODEL_NOT_BUILT``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

ErrorCategoryName = Literal["connection", "timeout", "rate_limit", "server_error", "permanent"]
"""Karenina's error categories; only ``permanent`` is never retried."""


class CategoryRetryConfig(BaseModel):
    """Retry budget and back-off of one error category."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    max_attempts: int = Field(default=0, ge=0)
    """Retries after the first call (not total calls); 0 disables retrying."""
    backoff_min: float = Field(default=1.0, ge=0)
    """Seconds: the lower end of the first back-off."""
    backoff_max: float = Field(default=10.0, ge=0)
    """Seconds: no back-off is longer."""
    backoff_multiplier: float = Field(default=2.0, ge=1.0)
    """Growth of the back-off from one retry to the next."""


class TimeoutEscalationConfig(BaseModel):
    """How the request timeout grows on each retry after a timeout.

    ``additive``: base + increment x n; ``multiplicative``: base x multiplier^n
    (both capped by ``max_timeout`` when set); ``linear``: from base to
    ``max_timeout`` over the timeout retry budget.
    """

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    strategy: Literal["additive", "multiplicative", "linear"]
    increment: float = Field(default=0.0, ge=0.0)
    """Seconds added per retry (``additive``)."""
    multiplier: float = Field(default=1.0, ge=1.0)
    """Factor per retry (``multiplicative``)."""
    max_timeout: float | None = Field(default=None, ge=0.0)
    """Cap (``additive``, ``multiplicative``) or end point (``linear``), in seconds."""

    @model_validator(mode="after")
    def _strategy_needs_its_parameter(self) -> TimeoutEscalationConfig:
        if self.strategy == "additive" and self.increment <= 0:
            raise ValueError("timeout escalation 'additive' needs increment > 0")
        if self.strategy == "multiplicative" and self.multiplier <= 1.0:
            raise ValueError("timeout escalation 'multiplicative' needs multiplier > 1.0")
        if self.strategy == "linear" and self.max_timeout is None:
            raise ValueError("timeout escalation 'linear' needs max_timeout")
        return self


def _budget(attempts: int, low: float, high: float) -> Any:
    return Field(
        default_factory=lambda: CategoryRetryConfig(
            max_attempts=attempts, backoff_min=low, backoff_max=high
        )
    )


class RetryPolicy(BaseModel):
    """Retry budgets per error category (Karenina's defaults, spec 4.5).

    Errors outside the four categories are permanent and never retried.
    """

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    connection: CategoryRetryConfig = _budget(3, 1.0, 10.0)
    """Network, DNS and connection failures."""
    timeout: CategoryRetryConfig = _budget(3, 5.0, 30.0)
    """Request timeouts."""
    rate_limit: CategoryRetryConfig = _budget(5, 5.0, 30.0)
    """HTTP 429 and "overloaded" replies."""
    server_error: CategoryRetryConfig = _budget(2, 2.0, 15.0)
    """HTTP 5xx replies."""
    timeout_escalation: TimeoutEscalationConfig | None = None
    """Grow the timeout on timeout retries; None keeps it fixed."""

    def budget(self, category: ErrorCategoryName) -> CategoryRetryConfig:
        """The budget of ``category`` (zero retries for ``permanent``)."""
        if category == "permanent":
            return CategoryRetryConfig(max_attempts=0)
        config: CategoryRetryConfig = getattr(self, category)
        return config

    def derive_sdk_max_retries(self) -> int:
        """The largest budget of any category (for SDKs that take one retry count)."""
        return max(
            self.connection.max_attempts,
            self.timeout.max_attempts,
            self.rate_limit.max_attempts,
            self.server_error.max_attempts,
        )


class ErrorPatternConfig(BaseModel):
    """A user rule classifying errors: by exception type name or message substring."""

    model_config = ConfigDict(extra="forbid")

    pattern: str
    category: ErrorCategoryName
    match_type: Literal["type_name", "message_substring"] = "message_substring"


class _Carried(BaseModel):
    """Accepts unknown keys: settings of features pytest-karenina does not run yet."""

    model_config = ConfigDict(extra="allow")


class AgentLimitConfig(_Carried):
    """Call limits of an agent run (``exit_behavior`` is carried: a limit always ends it)."""

    model_call_limit: int = Field(default=25, ge=1)
    tool_call_limit: int = Field(default=50, ge=1)
    exit_behavior: Literal["end", "continue"] = "end"


class AgentMiddlewareConfig(_Carried):
    """Agent middleware of an agent model: ``limits`` bound its runs; the other keys are
    carried unchanged so that Karenina presets load."""

    limits: AgentLimitConfig = Field(default_factory=AgentLimitConfig)
    model_retry: dict[str, Any] = Field(default_factory=dict)
    tool_retry: dict[str, Any] = Field(default_factory=dict)
    summarization: dict[str, Any] = Field(default_factory=dict)
    prompt_caching: dict[str, Any] = Field(default_factory=dict)


class AgentRuntimeConfig(_Carried):
    """Sandboxing of a deep-agent model: not built yet, so a model that sets one is refused."""
