"""A static partition under pytest-xdist, so every worker knows its items in advance.

With ``-n N`` (``--dist load``, the default) the controller sends item ``i`` of the common
collection to the worker with partition index ``i % N``, all at once, and tells each worker
its index through ``workerinput``; each worker queues exactly those pipelines when its run
loop starts and so runs them concurrently, and no question runs twice. Other ``--dist``
modes keep xdist's own scheduling; their workers, and replacements of crashed workers, run
each item's pipeline when the item starts (correct, but without look-ahead).

Only xdist's hooks and its documented ``workerinput`` are used; the scheduler extends
``xdist.scheduler.LoadScheduling``, so pyproject pins ``pytest-xdist<4``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import pytest

from pytest_karenina.plugin.report.payload import ItemPayload
from pytest_karenina.plugin.settings import Settings
from pytest_karenina.plugin.stash import PARTITION_INPUT

ItemT = TypeVar("ItemT", bound=pytest.Item)


def partition_index(workerinput: dict[str, Any]) -> int | None:
    """A worker's index in the partition, or None when it has no share of its own."""
    index = workerinput.get(PARTITION_INPUT)
    return index if isinstance(index, int) else None


def worker_share(config: pytest.Config, items: Sequence[ItemT]) -> list[ItemT]:
    """The items this process will run, as far as it can know in advance."""
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    if workerinput is None:
        return list(items)
    index = partition_index(workerinput)
    if index is None:
        return []  # a replacement worker or another --dist mode: no look-ahead
    count = int(workerinput["workercount"])
    return [item for position, item in enumerate(items) if position % count == index]


def make_partition_scheduler(config: pytest.Config, log: Any) -> Any:
    """The scheduler of an xdist controller (only ever called by xdist, so xdist is there)."""
    # Imported here: this module loads in runs without xdist too.
    from xdist.scheduler import LoadScheduling  # type: ignore[import-untyped]

    class PartitionScheduling(LoadScheduling):  # type: ignore[misc]
        """Item ``i`` to the worker of partition index ``i % N``, sent at once; a crashed
        worker's unstarted items go to the workers still running (or to a replacement)."""

        def schedule(self) -> None:
            assert self.collection_is_completed
            if self.collection is not None:  # type: ignore[has-type]
                for node in self.nodes:
                    self.check_schedule(node)
                return
            if not self._check_nodes_have_same_collection():
                self.log("**Different tests collected, aborting run**")
                return
            collection: list[str] = next(iter(self.node2collection.values()))
            self.collection = collection
            # The workers' own modulus (they pick their share with it), not the nodes alive.
            count = int(self.nodes[0].workerinput["workercount"])
            owned = set()
            for node in self.nodes:
                index = partition_index(node.workerinput)
                share = [i for i in range(len(collection)) if i % count == index]
                if share:
                    owned.add(index)
                    self.node2pending[node].extend(share)
                    node.send_runtest_some(share)
            # The shares of workers that died before this point: to the nodes without a
            # share (replacements) first; nodes left without work shut down.
            self.pending[:] = [i for i in range(len(collection)) if i % count not in owned]
            for node in sorted(self.nodes, key=lambda n: bool(self.node2pending[n])):
                self.check_schedule(node)

        def check_schedule(self, node: Any, duration: float = 0) -> None:
            # Nodes stay up until their own share is done, so the unstarted items of a
            # crashed worker (put back into self.pending) can still go somewhere.
            if node.shutting_down:
                return
            if self.pending:
                share, self.pending[:] = list(self.pending), []
                self.node2pending[node].extend(share)
                node.send_runtest_some(share)
            elif not self.node2pending[node]:
                node.shutdown()

    return PartitionScheduling(config, log)


class XdistControllerPlugin:
    """Registered on the xdist controller: the partition scheduler, each worker's partition
    index, and crashed items as errors."""

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        self.enabled = config.getoption("dist", "load") == "load"

    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched: Any) -> None:
        """A question whose worker died is an error of that item (infrastructure, not a wrong
        answer), counted as ``error:worker_crashed`` in the summary and the pass rate."""
        checkpoints = self.settings.checkpoints
        if (self.config.rootpath / crashitem.split("::")[0]).resolve() not in checkpoints:
            return
        report.when = "setup"
        report.karenina = ItemPayload.worker_crashed(crashitem).to_json()  # type: ignore[attr-defined]

    def pytest_configure_node(self, node: Any) -> None:
        """The first ``workercount`` workers (gw0, gw1, ...) get their index; replacements
        of crashed workers (higher ids) get none."""
        worker_id = str(node.workerinput["workerid"])
        index = int(worker_id.removeprefix("gw")) if worker_id.startswith("gw") else None
        count = int(node.workerinput["workercount"])
        in_partition = self.enabled and index is not None and index < count
        node.workerinput[PARTITION_INPUT] = index if in_partition else None

    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        return make_partition_scheduler(config, log) if self.enabled else None
