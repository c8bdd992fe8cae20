"""Agent adapters (the ``agents`` extra): LangChain tool loops with MCP tools, ``deepagents``
workspace agents and recorded traces. Modules here import LangChain's agent runtime lazily,
so importing the package costs nothing without the extra."""
