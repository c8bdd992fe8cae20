"""``ModelConfig``: one answering or parsing (judge) model, with Karenina's fields (spec 4.4).

Field names, types and defaults follow Karenina so that the model entries of a
Karenina preset load unchanged (``extra="forbid"`` catches typos). API keys are
``SecretStr``: they never appear in ``repr``, ``str`` or dumps unless a dump is
asked for them with ``context={REVEAL_SECRETS: True}``; adapters read them with
``.get_secret_value()``. Dumps also mask URL credentials (``user:password@``, ``?token=``...
in base URLs and ``mcp_urls_dict``) and secrets in ``extra_kwargs`` (:mod:`.secrets`).
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    SerializationInfo,
    field_serializer,
    field_validator,
    model_validator,
)

from pytest_karenina.config.model_sections import (
    AgentLimitConfig,
    AgentMiddlewareConfig,
    AgentRuntimeConfig,
    CategoryRetryConfig,
    ErrorPatternConfig,
    RetryPolicy,
    TimeoutEscalationConfig,
)
from pytest_karenina.config.secrets import masked_settings, masked_url
from pytest_karenina.results.identity import ModelIdentity

__all__ = [
    "INTERFACES",
    "REVEAL_SECRETS",
    "AgentLimitConfig",
    "AgentMiddlewareConfig",
    "AgentRuntimeConfig",
    "CategoryRetryConfig",
    "ErrorPatternConfig",
    "Interface",
    "ModelConfig",
    "RetryPolicy",
    "TimeoutEscalationConfig",
]

Interface = Literal[
    "langchain",
    "openrouter",
    "openai_endpoint",
    "claude_tool",
    "claude_agent_sdk",
    "langchain_deep_agents",
    "manual",
]
"""The adapter interfaces Karenina registers (those pytest-karenina runs are
``config.choices.SupportedInterface``; see ``VerificationConfig.check_supported``)."""

INTERFACES: tuple[str, ...] = get_args(Interface)
REVEAL_SECRETS = "reveal_secrets"
"""Serialization context key: ``model_dump(context={REVEAL_SECRETS: True})`` writes API keys."""

_MASK = "**********"
"""What pydantic writes for a SecretStr in a JSON dump, hence in every Karenina preset."""


class ModelConfig(BaseModel):
    """The configuration of one model (Karenina's ``ModelConfig``).

    ``id`` and ``model_name`` are required except for the ``manual`` interface,
    where both default to ``"manual"`` and MCP tools are refused.
    """

    model_config = ConfigDict(
        extra="forbid", protected_namespaces=(), use_attribute_docstrings=True
    )

    id: str | None = None
    """Names the configuration in results, identities and answer-cache keys."""
    model_provider: str | None = None
    """LangChain ``init_chat_model`` provider (``openai``, ``anthropic``, ``google_genai``...)."""
    model_name: str | None = None
    temperature: float = 0.1
    max_tokens: int = 16384
    interface: Interface = "langchain"
    system_prompt: str | None = None
    """Answering models only: the judge's system prompt is never sent (spec 4.2)."""
    max_retries: int = 2
    """Accepted for compatibility; unused (``retry_policy`` governs retries)."""
    mcp_urls_dict: dict[str, str] | None = None
    """MCP server name -> URL; tools make the answering model an agent."""
    mcp_tool_filter: list[str] | None = None
    mcp_tool_description_overrides: dict[str, str] | None = None
    mcp_http_timeout: float | None = None
    mcp_sse_read_timeout: float | None = None
    endpoint_base_url: str | None = None
    """Base URL of the OpenAI-compatible server (``openai_endpoint``)."""
    endpoint_api_key: SecretStr | None = None
    anthropic_base_url: str | None = None
    anthropic_api_key: SecretStr | None = None
    agent_runtime: AgentRuntimeConfig | None = None
    extra_kwargs: dict[str, Any] | None = Field(default=None, repr=False)
    """Passed to the chat model constructor; hidden from ``repr`` as it may hold keys."""
    manual_traces: Any = Field(default=None, exclude=True, repr=False)
    """Pre-recorded answers for the ``manual`` interface; never dumped."""
    agent_middleware: AgentMiddlewareConfig | None = None
    max_context_tokens: int | None = None
    agent_timeout: int | None = None
    """Seconds for an agent (MCP) answer; Karenina's default is 180."""
    request_timeout: float | None = Field(default=None, gt=0)
    """Seconds per LLM request; None takes the run's ``VerificationConfig.request_timeout``."""
    retry_policy: RetryPolicy | None = None
    """None takes the run's ``VerificationConfig.retry_policy``."""
    max_concurrent_requests: int | None = Field(default=None, ge=1)
    """Requests in flight to this model at once (pytest-karenina; None takes the run's)."""
    requests_per_minute: float | None = Field(default=None, gt=0)
    """Request starts per minute to this model (pytest-karenina; None takes the run's)."""

    @field_validator("endpoint_api_key", "anthropic_api_key", mode="before")
    @classmethod
    def _masked_key_is_no_key(cls, value: Any) -> Any:
        # Karenina saves presets with model_dump(mode="json"), which writes the
        # mask instead of the key; sending the mask as a key can only fail.
        return None if value == _MASK else value

    @field_serializer("endpoint_base_url", "anthropic_base_url")
    def _dump_url(self, value: str | None, info: SerializationInfo) -> str | None:
        if value is None or (isinstance(info.context, dict) and info.context.get(REVEAL_SECRETS)):
            return value
        return masked_url(value)

    @field_serializer("mcp_urls_dict")
    def _dump_mcp_urls(
        self, value: dict[str, str] | None, info: SerializationInfo
    ) -> dict[str, str] | None:
        if value is None or (isinstance(info.context, dict) and info.context.get(REVEAL_SECRETS)):
            return value
        return {name: masked_url(url) for name, url in value.items()}

    @field_serializer("extra_kwargs")
    def _dump_extra(self, value: dict[str, Any] | None, info: SerializationInfo) -> Any:
        if value is None or (isinstance(info.context, dict) and info.context.get(REVEAL_SECRETS)):
            return value
        return masked_settings(value)

    @field_serializer("endpoint_api_key", "anthropic_api_key")
    def _dump_secret(self, value: SecretStr | None, info: SerializationInfo) -> Any:
        if value is None:
            return None
        if isinstance(info.context, dict) and info.context.get(REVEAL_SECRETS):
            return value.get_secret_value()
        return value if info.mode == "python" else str(value)

    @model_validator(mode="after")
    def _interface_defaults(self) -> ModelConfig:
        if self.interface == "manual":
            if self.mcp_urls_dict is not None:
                raise ValueError(
                    "MCP tools (mcp_urls_dict) are not allowed with interface 'manual': "
                    "manual answers are recorded in advance"
                )
            if self.id is None:
                self.id = "manual"
            if self.model_name is None:
                self.model_name = "manual"
            return self
        for name in ("id", "model_name"):
            if getattr(self, name) is None:
                raise ValueError(f"{name} is required for interface {self.interface!r}")
        return self

    def identity(self, role: Literal["answering", "parsing"]) -> ModelIdentity:
        """How this model is named in results and cache/replay keys (spec 4.4).

        Tools (the sorted MCP server names) count for the answering role only.
        """
        tools = sorted(self.mcp_urls_dict) if role == "answering" and self.mcp_urls_dict else None
        return ModelIdentity.of(self.interface, self.model_name, config_id=self.id, tools=tools)

    def answer_cache_key(self, question_id: str, replicate: int | None = None) -> str:
        """The key one generated answer is shared under by all judges (spec 5.3).

        Karenina keys on ``id`` alone, not the full identity:
        ``<question_id>_<id>`` plus ``_rep<n>`` when there are replicates.
        """
        key = f"{question_id}_{self.id}"
        return key if replicate is None else f"{key}_rep{replicate}"
