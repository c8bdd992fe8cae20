"""A large run freezes its heap, and its session's cleanup unfreezes it again."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from typing import Any, cast

import pytest

from pytest_karenina.plugin.run.heap import SETTLE_FROM_ITEMS, HeapSettler


class FakeConfig:
    def __init__(self) -> None:
        self.cleanups: list[Callable[[], None]] = []

    def add_cleanup(self, func: Callable[[], None]) -> None:
        self.cleanups.append(func)


@pytest.fixture
def settler() -> Iterator[tuple[HeapSettler, FakeConfig]]:
    frozen_before = gc.get_freeze_count()
    config = FakeConfig()
    yield HeapSettler(cast(Any, config)), config
    gc.unfreeze()
    if frozen_before:
        gc.freeze()


def test_a_small_run_leaves_the_heap_alone(settler: tuple[HeapSettler, FakeConfig]) -> None:
    heap, _ = settler
    gc.unfreeze()

    heap.settle(SETTLE_FROM_ITEMS - 1)

    assert gc.get_freeze_count() == 0 and not heap.frozen


def test_a_large_run_freezes_until_its_cleanup(settler: tuple[HeapSettler, FakeConfig]) -> None:
    heap, config = settler
    gc.unfreeze()
    alive = [object() for _ in range(10)]

    heap.settle(SETTLE_FROM_ITEMS)
    assert gc.get_freeze_count() >= len(alive) and heap.frozen

    [cleanup] = config.cleanups
    cleanup()
    assert gc.get_freeze_count() == 0 and not heap.frozen


def test_freezing_fresh_items_starts_no_collector_pass(
    settler: tuple[HeapSettler, FakeConfig],
) -> None:
    heap, config = settler
    gc.unfreeze()
    alive = [object() for _ in range(10)]
    started: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    gc.callbacks.append(count)
    try:
        heap.freeze(SETTLE_FROM_ITEMS - 1)
        assert gc.get_freeze_count() == 0 and not heap.frozen
        heap.freeze(SETTLE_FROM_ITEMS)
        seen = list(started)
    finally:
        gc.callbacks.remove(count)
    assert seen == []
    assert gc.get_freeze_count() >= len(alive) and heap.frozen
    [cleanup] = config.cleanups
    cleanup()
    assert gc.get_freeze_count() == 0 and not heap.frozen
