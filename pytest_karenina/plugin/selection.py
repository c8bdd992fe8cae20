"""What a run selected of its benchmark: the question items collected and selected, and an
order-free digest of the question ids.

Whole-run decisions need it on the reporting process: a baseline is only written from a run
that selected everything, and merging refuses shards of different benchmarks. The process
that collects records it (the only process, or each xdist worker, which sends it back in
``workeroutput``; xdist's controller collects nothing).
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_karenina.plugin.collect import question_items
from pytest_karenina.plugin.stash import (
    COLLECTED_KEY,
    QUESTIONS_DIGEST_KEY,
    SELECTION_KEY,
    SELECTION_OUTPUT,
    UNCHANGED_ITEMS_KEY,
)


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
            "selected": len(question_items(session.items)),
            "digest": stash.get(QUESTIONS_DIGEST_KEY, 0),
            "unchanged": stash.get(UNCHANGED_ITEMS_KEY, 0),
        }

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        workeroutput = getattr(self.config, "workeroutput", None)
        if isinstance(workeroutput, dict) and SELECTION_KEY in self.config.stash:
            workeroutput[SELECTION_OUTPUT] = self.config.stash[SELECTION_KEY]

    def pytest_testnodedown(self, node: Any, error: object) -> None:
        sent = getattr(node, "workeroutput", {}).get(SELECTION_OUTPUT)
        if isinstance(sent, dict) and SELECTION_KEY not in self.config.stash:
            self.config.stash[SELECTION_KEY] = sent
