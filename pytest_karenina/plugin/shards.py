"""``--karenina-shard I/N``: a stable 1/N of the questions, for a CI matrix of N jobs.

A question belongs to shard ``1 + int(sha256(question id)) % N``: independent of file order,
of the other questions and of the machine, so N jobs cover the benchmark exactly once, and
every answering model and replicate of a question stays in the same shard. Items of other
shards are deselected (pytest's ``deselected`` count); plain tests are kept. It composes with
``-n``: every xdist worker deselects the same items.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from pytest_karenina.plugin.collect import QuestionItem
from pytest_karenina.plugin.question_hash import question_hash
from pytest_karenina.plugin.stash import SELECTION_KEY

_FORM = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/4"`` -> ``(2, 4)``; raises ValueError naming the form."""
    match = _FORM.match(text)
    if match is None or not 1 <= int(match.group(1)) <= int(match.group(2)):
        raise ValueError(f"expected I/N with 1 <= I <= N (e.g. 2/4), got {text!r}")
    return int(match.group(1)), int(match.group(2))


def shard_of(question_id: str, shards: int) -> int:
    """The shard (1-based) of a question among ``shards``."""
    return 1 + question_hash(question_id) % shards


class ShardPlugin:
    """Deselects the question items of the other shards."""

    def __init__(self, index: int, shards: int) -> None:
        self.index, self.shards = index, shards
        self.empty = False

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        kept: list[pytest.Item] = []
        dropped: list[pytest.Item] = []
        for item in items:
            other = isinstance(item, QuestionItem) and (
                shard_of(item.question.id, self.shards) != self.index
            )
            (dropped if other else kept).append(item)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept

    def pytest_report_header(self) -> list[str]:
        return [f"karenina: shard {self.index}/{self.shards} (questions by id hash)"]

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """A shard that holds none of the questions (more shards than questions) has run
        all it had: exit 0, not pytest's "no tests collected" (5), so the matrix job passes."""
        selection = session.config.stash.get(SELECTION_KEY, None) or {}
        empty = selection.get("collected", 0) > 0 and selection.get("selected", 0) == 0
        if empty and session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            self.empty = True
            session.exitstatus = pytest.ExitCode.OK

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.empty:
            terminalreporter.write_line(
                f"karenina: shard {self.index}/{self.shards} holds none of the questions"
            )
