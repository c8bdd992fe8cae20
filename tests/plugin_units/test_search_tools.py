"""``with_search_tools``: named search tools resolved through the conftest hook, once."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from pytest_karenina.plugin.options.run_config import with_search_tools
from tests.support.fake_llm import fake_config


def our_index(queries: list[str]) -> list[list[dict[str, str]]]:
    return [[] for _ in queries]


def config_asking(known: dict[str, Any]) -> tuple[Any, list[str]]:
    """A stand-in pytest config whose hook knows ``known`` names; and the names it was asked."""
    asked: list[str] = []

    def pytest_karenina_search_tool(config: Any, name: str) -> Any:
        asked.append(name)
        return known.get(name)

    hook = SimpleNamespace(pytest_karenina_search_tool=pytest_karenina_search_tool)
    return SimpleNamespace(hook=hook), asked


def test_names_other_than_the_built_in_one_are_asked_for_and_replaced() -> None:
    pytest_config, asked = config_asking({"our-index": our_index})
    vconfig = fake_config(
        deep_judgment_search_tool="our-index", deep_judgment_rubric_search_tool="unknown"
    )

    resolved = with_search_tools(pytest_config, vconfig)

    assert asked == ["our-index", "unknown"]
    assert resolved.deep_judgment_search_tool is our_index
    assert resolved.deep_judgment_rubric_search_tool == "unknown"  # errors only when used


def test_the_built_in_tool_and_callables_are_left_alone() -> None:
    pytest_config, asked = config_asking({})
    vconfig = fake_config(deep_judgment_rubric_search_tool=our_index)
    assert with_search_tools(pytest_config, vconfig) is vconfig
    assert asked == []
