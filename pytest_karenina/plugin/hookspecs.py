"""Hooks pytest-karenina calls; implement them in a ``conftest.py`` or in a plugin.

Per-item hooks are called through ``item.ihook``, so a ``conftest.py`` only affects the
checkpoints in its directory tree. Implementations may take any subset of the arguments.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_karenina.config.model import ModelConfig
    from pytest_karenina.llm.ports import RawModel
    from pytest_karenina.pipeline.stage import VerificationStage
    from pytest_karenina.plugin.collect.items import QuestionItem
    from pytest_karenina.plugin.collect.scenario_items import ScenarioItem
    from pytest_karenina.results import VerificationResult


@pytest.hookspec
def pytest_karenina_modify_stages(item: QuestionItem, stages: list[VerificationStage]) -> None:
    """Insert, remove or reorder the pipeline stages of ``item``, in place.

    Called once per item in the main thread before its pipeline is scheduled. The final
    list is checked with ``StageRegistry.validate_dependencies``; a list that fails the
    check errors the item with the problems listed. ``FinalizeResult`` must stay last.

    Example::

        def pytest_karenina_modify_stages(item, stages):
            at = next(i for i, s in enumerate(stages) if s.name == "VerifyTemplate")
            stages.insert(at + 1, WordCountCheckStage(min_words=20))
    """


@pytest.hookspec(firstresult=True)
def pytest_karenina_make_adapter(config: pytest.Config, model: ModelConfig) -> RawModel | None:
    """Return the raw model (a ``pytest_karenina.llm.ports.RawModel``) for ``model``, or
    None to use the built-in adapter of ``model.interface``.

    Called once per model and process, possibly from a worker thread. Retries, timeouts
    and record/replay are layered on top of what you return.

    Example::

        def pytest_karenina_make_adapter(config, model):
            if model.model_provider == "mycorp":
                return MyCorpModel(model)
    """


@pytest.hookspec(firstresult=True)
def pytest_karenina_search_tool(config: pytest.Config, name: str) -> Any:
    """Return the search function for deep judgment's search tool ``name``
    (``deep_judgment_search_tool`` or ``deep_judgment_rubric_search_tool``), or None when
    this conftest does not know the name.

    A search function takes the list of queries (the accepted quotes) and returns, per
    query, a list of ``{"title", "content", "url"}`` results. Called once per process for
    each of the two settings that names a tool other than the built-in ``"tavily"``.

    Example::

        def pytest_karenina_search_tool(config, name):
            if name == "our-index":
                return lambda queries: [our_index.lookup(q) for q in queries]
    """


@pytest.hookspec
def pytest_karenina_verification_result(
    item: QuestionItem | ScenarioItem, result: VerificationResult
) -> None:
    """Observe each finished VerificationResult of ``item`` (in the process that ran it),
    before its outcome is decided: a question's results, or each turn of a scenario's
    executions. Do not mutate ``result``."""
