"""``--karenina-shard I/N``: a stable 1/N of the questions, for a CI matrix of N jobs.

A question belongs to shard ``1 + int(sha256(question id)) % N``, a scenario to that of
``scenario:<name>``: independent of file order, of the other questions and of the machine, so
N jobs cover the benchmark exactly once, and every answering model and replicate of a question
(or scenario) stays in the same shard. Items of other
shards are deselected (pytest's ``deselected`` count); plain tests are kept. It composes with
``-n``: every xdist worker deselects the same items.
"""

from __future__ import annotations

import pytest

from pytest_karenina.plugin.collect.question_hash import question_hash
from pytest_karenina.plugin.collect.selection import deselect


def shard_of(question_id: str, shards: int) -> int:
    """The shard (1-based) of a question among ``shards``."""
    return 1 + question_hash(question_id) % shards


class ShardPlugin:
    """Deselects the question items of the other shards."""

    def __init__(self, index: int, shards: int) -> None:
        self.index, self.shards = index, shards

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        deselect(config, items, lambda item: shard_of(item.selection_id, self.shards) != self.index)

    def pytest_report_header(self) -> list[str]:
        return [f"karenina: shard {self.index}/{self.shards} (questions by id hash)"]

    def empty_note(self) -> str:
        """What the summary says when this shard holds none of the questions."""
        return f"karenina: shard {self.index}/{self.shards} holds none of the questions"
