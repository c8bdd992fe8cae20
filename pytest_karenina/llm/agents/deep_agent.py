"""``langchain_deep_agents``: LangChain's ``deepagents`` harness over the model.

A deep agent brings its own tools: planning, sub-agents and file tools (``ls``,
``read_file``, ``glob``, ``grep``, ``write_file``, ``edit_file``). The file tools are rooted at
the run's workspace (``AgentRunConfig.workspace``; paths cannot leave it), or at an in-memory
filesystem without one. A read-only run (the agentic judge) is refused every write. MCP tools
of the model are added to its own, and the limits of :mod:`.tool_loop` apply the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_karenina.llm.agents.tool_loop import ToolLoopAgent

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from pytest_karenina.llm.agent_ports import AgentRunConfig


class DeepAgent(ToolLoopAgent):
    """An :class:`~...agent_ports.AgentPort` on ``deepagents.create_deep_agent``."""

    def build(self, system: str | None, tools: list[BaseTool], config: AgentRunConfig) -> Any:
        from deepagents import FilesystemPermission, create_deep_agent
        from deepagents.backends import FilesystemBackend, StateBackend

        backend: Any = StateBackend()
        if config.workspace is not None:
            backend = FilesystemBackend(root_dir=config.workspace, virtual_mode=True)
        permissions = (
            [FilesystemPermission(operations=["write"], paths=["/**"], mode="deny")]
            if config.read_only
            else None
        )
        return create_deep_agent(
            self.chat_model(), tools, system_prompt=system, middleware=self.middleware(config),
            backend=backend, permissions=permissions,
        )  # fmt: skip
