"""``ModelIdentity``: how a model is named in results, cache keys and replay keys."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

_DISPLAY = re.compile(
    r"^(?P<interface>[^:]*):(?P<name>.*?)(?: \((?P<config_id>[^()]*)\))?(?: \+\[(?P<tools>.*)\])?$"
)


class ModelIdentity(BaseModel):
    """The identity of an answering or parsing model (Karenina's layout).

    ``tools`` are the sorted MCP server names (answering models only);
    ``config_id`` is the model config's ``id`` when it differs from ``model_name``.
    """

    model_config = ConfigDict(frozen=True)

    interface: str
    model_name: str
    tools: list[str] = Field(default_factory=list)
    config_id: str | None = None

    @property
    def display_string(self) -> str:
        """``interface:model_name``, plus `` (config_id)`` and `` +[tools]`` when present."""
        text = f"{self.interface}:{self.model_name}"
        if self.config_id:
            text += f" ({self.config_id})"
        if self.tools:
            text += f" +[{', '.join(self.tools)}]"
        return text

    @property
    def canonical_key(self) -> str:
        """Karenina's key: ``interface:model_name:config_id:tools`` (tools joined by ``|``),
        or ``interface:model_name:tools`` without a config id (so ``langchain:gpt-4o:``)."""
        tools = "|".join(self.tools)
        if self.config_id:
            return f"{self.interface}:{self.model_name}:{self.config_id}:{tools}"
        return f"{self.interface}:{self.model_name}:{tools}"

    @classmethod
    def of(
        cls,
        interface: str,
        model_name: str | None,
        config_id: str | None = None,
        tools: list[str] | None = None,
    ) -> ModelIdentity:
        """Build an identity the way Karenina derives it from a model config."""
        name = model_name or "unknown"
        return cls(
            interface=interface,
            model_name=name,
            tools=sorted(tools or []),
            config_id=config_id if config_id and config_id != name else None,
        )

    @classmethod
    def from_display_string(cls, text: str) -> ModelIdentity:
        """Invert :attr:`display_string` (used for legacy exports that stored only it).

        Text without an ``interface:`` prefix becomes ``interface="unknown"``.
        """
        match = _DISPLAY.match(text)
        if match is None:
            return cls(interface="unknown", model_name=text)
        tools = match["tools"]
        return cls(
            interface=match["interface"],
            model_name=match["name"],
            config_id=match["config_id"],
            tools=[t for t in tools.split(", ") if t] if tools else [],
        )
