"""``langchain_deep_agents``: LangChain's ``deepagents`` harness over the model.

A deep agent brings its own tools: planning, sub-agents and file tools (``ls``,
``read_file``, ``glob``, ``grep``, ``write_file``, ``edit_file``). The file tools are rooted at
the run's workspace (``AgentRunConfig.workspace``; paths cannot leave it), or at an in-memory
filesystem without one. A read-only run (the agentic judge) is refused every write. MCP tools
of the model are added to its own, and the limits of :mod:`.tool_loop` apply the same way.

A path that leads out of the workspace (through a symbolic link in it) is a failed tool call
the agent can recover from: deepagents' backend raises ValueError there, which its file tools
do not catch (deepagents issue 6329), so the whole run ended. So does a path in a workspace
that was removed meanwhile (the run ending), rather than the directory being made again.
"""

from __future__ import annotations

import errno
import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_karenina.llm.agents.tool_loop import ToolLoopAgent

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from pytest_karenina.llm.agent_ports import AgentRunConfig

OUTSIDE = "the path leads out of the workspace"


@functools.cache
def workspace_backend() -> type[Any]:
    """deepagents' ``FilesystemBackend`` whose out-of-root paths are OSErrors, which every
    file operation returns as its result's error (built on first use: deepagents loads
    lazily)."""
    from deepagents.backends import FilesystemBackend

    class WorkspaceBackend(FilesystemBackend):
        def _resolve_path(self, key: str) -> Path:
            if not self.cwd.is_dir():
                raise FileNotFoundError(errno.ENOENT, "the workspace no longer exists", key)
            try:
                resolved: Path = super()._resolve_path(key)
            except ValueError:
                raise PermissionError(errno.EACCES, OUTSIDE, key) from None
            return resolved

    return WorkspaceBackend


class DeepAgent(ToolLoopAgent):
    """An :class:`~...agent_ports.AgentPort` on ``deepagents.create_deep_agent``."""

    def build(self, system: str | None, tools: list[BaseTool], config: AgentRunConfig) -> Any:
        from deepagents import FilesystemPermission, create_deep_agent
        from deepagents.backends import StateBackend

        backend: Any = StateBackend()
        if config.workspace is not None:
            backend = workspace_backend()(root_dir=config.workspace, virtual_mode=True)
        permissions = (
            [FilesystemPermission(operations=["write"], paths=["/**"], mode="deny")]
            if config.read_only
            else None
        )
        return create_deep_agent(
            self.chat_model(), tools, system_prompt=system, middleware=self.middleware(config),
            backend=backend, permissions=permissions,
        )  # fmt: skip
