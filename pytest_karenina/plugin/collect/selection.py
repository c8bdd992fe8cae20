"""What a run selected of its benchmark: the checkpoint items (questions and scenarios)
collected and selected, and an order-free digest of the question ids.

Whole-run decisions need it on the reporting process: a baseline is only written from a run
that selected everything, and merging refuses shards of different benchmarks. The process
that collects records it (the only process, or each xdist worker, which sends it back in
``workeroutput``; xdist's controller collects nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from pytest_karenina.plugin.collect.base import KareninaItem, karenina_items
from pytest_karenina.plugin.stash import (
    COLLECTED_KEY,
    QUESTIONS_DIGEST_KEY,
    SELECTION_KEY,
    SELECTION_OUTPUT,
    UNCHANGED_ITEMS_KEY,
)


def deselect(
    config: pytest.Config, items: list[pytest.Item], drop: Callable[[KareninaItem], bool]
) -> int:
    """Deselect the checkpoint items (questions and scenarios) ``drop`` picks (pytest's
    ``deselected`` count, in place for ``pytest_collection_modifyitems``); returns how many."""
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        (dropped if isinstance(item, KareninaItem) and drop(item) else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
    return len(dropped)


def selected_everything(config: pytest.Config) -> bool:
    """Every question item collected here was selected (True where none was collected)."""
    selection = config.stash.get(SELECTION_KEY, None) or {}
    return bool(selection.get("selected", 0) == selection.get("collected", 0))


def selected_nothing(selection: Mapping[str, int] | None) -> bool:
    """Questions were collected and none of them was selected."""
    found = selection or {}
    return found.get("collected", 0) > 0 and found.get("selected", 0) == 0


class SelectionPlugin:
    """Keeps ``config.stash[SELECTION_KEY]`` on every process that needs it."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        stash = self.config.stash
        if COLLECTED_KEY not in stash:  # no checkpoint collected here (xdist's controller)
            return
        stash[SELECTION_KEY] = {
            "collected": stash[COLLECTED_KEY],
            "selected": len(karenina_items(session.items)),
            "digest": stash.get(QUESTIONS_DIGEST_KEY, 0),
            "unchanged": stash.get(UNCHANGED_ITEMS_KEY, 0),
        }

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        workeroutput = getattr(self.config, "workeroutput", None)
        if isinstance(workeroutput, dict) and SELECTION_KEY in self.config.stash:
            workeroutput[SELECTION_OUTPUT] = self.config.stash[SELECTION_KEY]

    def pytest_testnodedown(self, node: Any, error: object) -> None:
        sent = getattr(node, "workeroutput", {}).get(SELECTION_OUTPUT)
        if isinstance(sent, dict) and SELECTION_KEY not in self.config.stash:
            self.config.stash[SELECTION_KEY] = sent
