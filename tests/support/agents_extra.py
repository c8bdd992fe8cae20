"""Skipping agent tests where the ``agents`` extra is not installed."""

from __future__ import annotations

from importlib.util import find_spec

import pytest

needs_agents_extra = pytest.mark.skipif(
    any(find_spec(name) is None for name in ("langchain_mcp_adapters", "mcp", "deepagents")),
    reason="agent tests need the agents extra: pip install -e '.[dev]'",
)
"""Mark for modules and tests that run agents (real MCP servers, deepagents)."""
