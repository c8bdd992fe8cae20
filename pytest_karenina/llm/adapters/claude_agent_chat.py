"""The one-call replies of a ``claude_agent_sdk`` model: straight to the Messages API.

A ``claude_agent_sdk`` model answers and investigates through the Claude Code CLI (its agent
port). Its other calls, those of a judge above all (a report's extraction, the abstention and
sufficiency checks, LLM rubric traits, classic parsing), are single model calls with no tool
to use: they go to the same model, server and key through ``claude_tool``'s adapter, with
native structured output, instead of a CLI process each (about 0.4 s of CPU per start).

Replay keys name ``claude_agent_sdk``; errors name the model as such. The key is an API key
(``anthropic_api_key`` or ``ANTHROPIC_API_KEY``): a Claude subscription's token reaches only
the CLI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_karenina.llm.adapters.claude_tool import ClaudeToolModel
from pytest_karenina.llm.adapters.identity import config_identity
from pytest_karenina.llm.provider_keys import MissingKeyError

if TYPE_CHECKING:
    from pytest_karenina.config.model import ModelConfig

CLI_SETTINGS = frozenset({"cli_path"})
"""``extra_kwargs`` entries that configure the CLI (never sent to the API)."""


def as_messages_api(config: ModelConfig) -> ModelConfig:
    """``config`` as the ``claude_tool`` model that makes its one-call replies."""
    extra = {k: v for k, v in (config.extra_kwargs or {}).items() if k not in CLI_SETTINGS}
    return config.model_copy(update={"interface": "claude_tool", "extra_kwargs": extra or None})


class ClaudeAgentChatModel(ClaudeToolModel):
    """A :class:`~pytest_karenina.llm.ports.RawModel` for a ``claude_agent_sdk`` model's
    one-call replies (see the module docstring)."""

    def __init__(self, config: ModelConfig) -> None:
        self.own = config
        super().__init__(as_messages_api(config))

    @property
    def replay_identity(self) -> dict[str, Any]:
        return config_identity(self.own)

    def prepare(self) -> Any:
        try:
            return super().prepare()
        except MissingKeyError:
            raise MissingKeyError(
                f"claude_agent_sdk model {self.own.id!r} has no API key for its one-call "
                "replies (sent to the Messages API): set ANTHROPIC_API_KEY or the model's "
                "anthropic_api_key"
            ) from None

    def _where(self) -> str:
        return "claude_agent_sdk" + super()._where().removeprefix("claude_tool")
