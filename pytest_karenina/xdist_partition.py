"""A static partition under pytest-xdist, so every worker knows its items in advance.

With ``-n N`` (``--dist load``, the default) the controller sends item ``i`` of the common
collection to worker ``gw{i % N}`` all at once; each worker queues exactly those pipelines
when its run loop starts and so runs them concurrently, and no question runs twice. Other
``--dist`` modes keep xdist's own scheduling; their workers then run each item's pipeline
when the item starts (correct, but without look-ahead).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

import pytest

_WORKER = re.compile(r"gw(\d+)$")


def worker_slot() -> tuple[int, int] | None:
    """``(index, count)`` of this xdist worker from xdist's environment, else None."""
    match = _WORKER.match(os.environ.get("PYTEST_XDIST_WORKER", ""))
    count = os.environ.get("PYTEST_XDIST_WORKER_COUNT", "")
    if match is None or not count.isdigit():
        return None
    return int(match.group(1)), int(count)


def partitioned(config: pytest.Config) -> bool:
    """Whether this worker's controller uses :class:`PartitionScheduling`."""
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    return bool(workerinput and workerinput.get("karenina_partition"))


def worker_share(config: pytest.Config, items: Sequence[pytest.Item]) -> list[pytest.Item]:
    """The items this process will run, as far as it can know in advance."""
    if getattr(config, "workerinput", None) is None:
        return list(items)
    slot = worker_slot()
    if slot is None or not partitioned(config) or slot[0] >= slot[1]:
        return []  # a restarted worker or another --dist mode: no look-ahead
    index, count = slot
    return [item for position, item in enumerate(items) if position % count == index]


def make_partition_scheduler(config: pytest.Config, log: Any) -> Any:
    from xdist.scheduler import LoadScheduling  # type: ignore[import-untyped]

    class PartitionScheduling(LoadScheduling):  # type: ignore[misc]
        """Item ``i`` to worker ``gw{i % N}``, sent at once; a crashed worker's unstarted
        items go to the workers still running (or to a replacement)."""

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
            count = self.numnodes
            for node in self.nodes:
                match = _WORKER.match(node.gateway.id)
                index = int(match.group(1)) if match else 0
                share = [i for i in range(len(collection)) if i % count == index]
                if share:
                    self.node2pending[node].extend(share)
                    node.send_runtest_some(share)
                else:
                    node.shutdown()
            self.pending[:] = []

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
    """Registered on the xdist controller: the partition scheduler and its flag to workers."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.enabled = config.getoption("dist", "load") == "load"

    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched: Any) -> None:
        """A question whose worker died is an error of that item (infrastructure, not a wrong
        answer), counted as ``error:worker_crashed`` in the summary and the pass rate."""
        from pytest_karenina.settings import SETTINGS_KEY

        checkpoints = self.config.stash[SETTINGS_KEY].checkpoints
        if (self.config.rootpath / crashitem.split("::")[0]).resolve() not in checkpoints:
            return
        report.when = "setup"
        report.karenina = {  # type: ignore[attr-defined]
            "nodeid": crashitem, "category": "error:worker_crashed", "answering_model": None,
            "summaries": [], "results": [], "input_tokens": 0, "output_tokens": 0,
        }  # fmt: skip

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["karenina_partition"] = self.enabled

    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        return make_partition_scheduler(config, log) if self.enabled else None
