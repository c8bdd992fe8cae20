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
