"""A static partition under pytest-xdist, so every worker knows its items in advance.

With ``-n N`` (``--dist load``, the default) the controller sends item ``i`` of the common
collection to the worker with partition index ``i % N``, all at once, and tells each worker
its index through ``workerinput``; each worker queues exactly those pipelines when its run
loop starts and so runs them concurrently, and no question runs twice. Other ``--dist``
modes keep xdist's own scheduling; their workers, and replacements of crashed workers, run
each item's pipeline when the item starts (correct, but without look-ahead).

When a worker dies, the items it had not finished are split by its flight journal
(:mod:`flight_journal`): the pipelines in flight are errors (``error:worker_crashed``),
never run again; the others run on another worker; reports already received stand.

Only xdist's hooks and its documented ``workerinput`` are used; the scheduler extends
``xdist.scheduler.LoadScheduling``, so pyproject pins ``pytest-xdist<4``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest

from pytest_karenina.plugin.options.settings import Settings
from pytest_karenina.plugin.payload import ItemPayload
from pytest_karenina.plugin.run.batch_run import BatchTotals
from pytest_karenina.plugin.run.flight_journal import (
    CrashSplit,
    FlightJournal,
    JournalDirectory,
    in_flight,
    split_crashed,
)
from pytest_karenina.plugin.stash import JOURNAL_INPUT, PARTITION_INPUT

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


def worker_journal(config: pytest.Config) -> FlightJournal | None:
    """This worker's flight journal, when its controller keeps them."""
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    directory = workerinput.get(JOURNAL_INPUT) if workerinput is not None else None
    if not isinstance(directory, str):
        return None
    try:
        return FlightJournal(Path(directory), str(workerinput["workerid"]))  # type: ignore[index]
    except OSError:
        return None  # e.g. a remote worker: the controller falls back to xdist's guess


def make_partition_scheduler(config: pytest.Config, log: Any, crashes: CrashTriage) -> Any:
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

        def remove_node(self, node: Any) -> str | None:
            # xdist's own version blames the first unfinished item and re-queues the rest,
            # the pipeline that killed the worker included.
            pending = self.node2pending.pop(node)
            if not pending:
                return None
            position = {nodeid: index for index, nodeid in enumerate(self.collection)}
            split = crashes.split(node, [self.collection[index] for index in pending])
            self.pending.extend(position[nodeid] for nodeid in split.rerun)
            for other in self.node2pending:
                self.check_schedule(other)
            for nodeid in split.crashed[1:]:
                crashes.report_crash(nodeid, node)
            return split.crashed[0] if split.crashed else None

    return PartitionScheduling(config, log)


def crash_location(nodeid: str) -> tuple[str, int | None, str]:
    """A crashed question's report location, headed like its item's would be."""
    path, _, name = nodeid.partition("::")
    return path, None, f"question {name}"


class CrashTriage:
    """What the controller knows when a worker dies: its journal, and which items have
    reported already. Reports the pipelines a crash took down."""

    def __init__(self, config: pytest.Config, journals: JournalDirectory) -> None:
        self.config = config
        self.journals = journals
        self.reported: set[str] = set()
        self.flying: dict[str, list[str]] = {}  # crashed item -> pipelines in flight with it

    def note_report(self, report: pytest.TestReport) -> None:
        if report.when == "call" or (report.when == "setup" and not report.passed):
            self.reported.add(report.nodeid)

    def split(self, node: Any, pending: list[str]) -> CrashSplit:
        flying = in_flight(self.journals.journal_of(str(node.workerinput["workerid"])))
        split = split_crashed(pending, flying, self.reported)
        for nodeid in split.crashed:
            self.flying[nodeid] = split.crashed
        return split

    def message(self, nodeid: str, worker: str) -> str:
        text = f"worker {worker!r} crashed while running {nodeid!r}"
        others = [other for other in self.flying.get(nodeid, ()) if other != nodeid]
        if others:
            text += (
                f"; its pipeline was in flight with {len(others)} other(s), reported as"
                f" crashed too: {', '.join(others)}"
            )
        return text

    def report_crash(self, nodeid: str, node: Any) -> None:
        """Report ``nodeid`` as crashed with ``node`` (xdist reports one item itself)."""
        report = pytest.TestReport(
            nodeid=nodeid,
            location=crash_location(nodeid),
            keywords={},
            outcome="failed",
            longrepr=self.message(nodeid, str(node.gateway.id)),
            when="setup",
        )
        report.node = node  # type: ignore[attr-defined]
        report.karenina = ItemPayload.worker_crashed(nodeid).to_json()  # type: ignore[attr-defined]
        self.config.hook.pytest_runtest_logreport(report=report)


class XdistControllerPlugin:
    """Registered on the xdist controller: the partition scheduler, each worker's partition
    index, and crashed items as errors."""

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        self.enabled = config.getoption("dist", "load") == "load"
        self.journals = JournalDirectory() if self.enabled else None
        self.crashes = CrashTriage(config, self.journals) if self.journals is not None else None
        if settings.batch:  # the workers' batch figures, added up for the summary
            config.pluginmanager.register(BatchTotals(config, settings.live_prices))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.crashes is not None:
            self.crashes.note_report(report)

    def pytest_unconfigure(self) -> None:
        if self.journals is not None:
            self.journals.remove()

    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched: Any) -> None:
        """A question whose worker died is an error of that item (infrastructure, not a wrong
        answer), counted as ``error:worker_crashed`` in the summary and the pass rate."""
        checkpoints = self.settings.checkpoints
        if (self.config.rootpath / crashitem.split("::")[0]).resolve() not in checkpoints:
            return
        report.when = "setup"
        report.location = crash_location(crashitem)
        report.karenina = ItemPayload.worker_crashed(crashitem).to_json()  # type: ignore[attr-defined]
        gateway = getattr(getattr(report, "node", None), "gateway", None)
        if self.crashes is not None and gateway is not None:
            report.longrepr = self.crashes.message(crashitem, str(gateway.id))

    def pytest_configure_node(self, node: Any) -> None:
        """The first ``workercount`` workers (gw0, gw1, ...) get their index; replacements
        of crashed workers (higher ids) get none."""
        worker_id = str(node.workerinput["workerid"])
        index = int(worker_id.removeprefix("gw")) if worker_id.startswith("gw") else None
        count = int(node.workerinput["workercount"])
        in_partition = self.enabled and index is not None and index < count
        node.workerinput[PARTITION_INPUT] = index if in_partition else None
        if self.journals is not None:
            node.workerinput[JOURNAL_INPUT] = str(self.journals.path)

    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        if self.crashes is None:
            return None
        return make_partition_scheduler(config, log, self.crashes)
