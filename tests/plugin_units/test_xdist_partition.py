"""The static xdist partition: worker shares, partition indices, the scheduler, crashed items.

The scheduler is driven the way pytest-xdist's own tests drive ``LoadScheduling``: mock
nodes that record what they are sent, and a config answering ``tx`` and ``maxschedchunk``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from xdist.scheduler import LoadScheduling  # type: ignore[import-untyped]

from pytest_karenina.plugin.options.settings import Settings
from pytest_karenina.plugin.payload import ItemPayload
from pytest_karenina.plugin.run.flight_journal import FlightJournal, JournalDirectory
from pytest_karenina.plugin.run.xdist_partition import (
    CrashTriage,
    XdistControllerPlugin,
    make_partition_scheduler,
    partition_index,
    worker_share,
)
from pytest_karenina.plugin.stash import PARTITION_INPUT

ITEMS: list[Any] = ["q0", "q1", "q2", "q3", "q4"]
"""Stand-ins for items: the partition only counts positions."""


@dataclass(eq=False)
class FakeNode:
    """A worker controller as the scheduler sees it (hashed by identity, like the real one)."""

    workerid: str
    workercount: int = 2
    sent: list[int] = field(default_factory=list)
    shutting_down: bool = False

    def __post_init__(self) -> None:
        self.gateway = SimpleNamespace(id=self.workerid)
        self.workerinput: dict[str, Any] = {
            "workerid": self.workerid,
            "workercount": self.workercount,
        }

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.extend(indices)

    def shutdown(self) -> None:
        self.shutting_down = True


@dataclass
class FakeLog:
    """xdist's log producer: ``log.loadsched(...)`` records its arguments."""

    messages: list[str] = field(default_factory=list)

    @property
    def loadsched(self) -> FakeLog:
        return self

    def __call__(self, *args: object) -> None:
        self.messages.append(" ".join(str(arg) for arg in args))


class FakeConfig:
    """What the plugin and ``LoadScheduling`` read from the controller's config."""

    def __init__(self, dist: str = "load", workers: int = 2, rootpath: Path = Path("/")) -> None:
        self.dist = dist
        self.workers = workers
        self.rootpath = rootpath
        self.collect_reports: list[pytest.CollectReport] = []
        self.test_reports: list[pytest.TestReport] = []
        self.hook = SimpleNamespace(
            pytest_collectreport=lambda report: self.collect_reports.append(report),
            pytest_runtest_logreport=lambda report: self.test_reports.append(report),
        )

    def getoption(self, name: str, default: Any = None) -> Any:
        return {"dist": self.dist, "maxschedchunk": None}.get(name, default)

    def getvalue(self, name: str) -> Any:
        assert name == "tx"
        return [f"{self.workers}*popen"]


def _config(fake: object) -> pytest.Config:
    return cast(pytest.Config, fake)


def _plugin(config: FakeConfig, checkpoints: tuple[Path, ...] = ()) -> XdistControllerPlugin:
    settings = cast(Settings, SimpleNamespace(checkpoints=checkpoints, batch=False))
    return XdistControllerPlugin(_config(config), settings)


def _configured(*worker_ids: str, count: int = 2, dist: str = "load") -> list[FakeNode]:
    plugin = _plugin(FakeConfig(dist=dist, workers=count))
    nodes = [FakeNode(worker_id, count) for worker_id in worker_ids]
    for node in nodes:
        plugin.pytest_configure_node(node)
    plugin.pytest_unconfigure()  # the journal directory
    return nodes


def _triage(config: FakeConfig, parent: Path | None = None) -> CrashTriage:
    """Without ``parent``, no journals: the controller knows nothing of pipelines."""
    return CrashTriage(_config(config), JournalDirectory(parent))


def _scheduled(
    nodes: list[FakeNode],
    collection: list[str] = ITEMS,
    log: FakeLog | None = None,
    triage: CrashTriage | None = None,
) -> Any:
    config = FakeConfig(workers=len(nodes))
    triage = triage or _triage(config)
    sched = make_partition_scheduler(_config(config), log or FakeLog(), triage)
    for node in nodes:
        sched.add_node(node)
    for node in nodes:
        sched.add_node_collection(node, collection)
    assert sched.collection_is_completed
    sched.schedule()
    return sched


@pytest.mark.parametrize(
    ("workerinput", "index"),
    [
        ({PARTITION_INPUT: 0}, 0),
        ({PARTITION_INPUT: 3}, 3),
        ({PARTITION_INPUT: None}, None),
        ({PARTITION_INPUT: "1"}, None),
        ({}, None),
    ],
)
def test_partition_index(workerinput: dict[str, Any], index: int | None) -> None:
    """An int index is taken as is (0 included); anything else means no share."""
    assert partition_index(workerinput) == index


def test_worker_share_of_a_partitioned_worker() -> None:
    """Worker ``k`` of ``N`` runs the items at positions ``k, k+N, ...``."""
    config = SimpleNamespace(workerinput={"workercount": 2, PARTITION_INPUT: 1})
    assert worker_share(_config(config), ITEMS) == ["q1", "q3"]
    config = SimpleNamespace(workerinput={"workercount": 3, PARTITION_INPUT: 0})
    assert worker_share(_config(config), ITEMS) == ["q0", "q3"]


def test_worker_share_without_xdist_is_everything() -> None:
    """A process that is not an xdist worker runs every item."""
    assert worker_share(_config(SimpleNamespace()), ITEMS) == ITEMS


def test_worker_share_of_an_unpartitioned_worker_is_empty() -> None:
    """A replacement worker (or another --dist mode) knows nothing in advance."""
    config = SimpleNamespace(workerinput={"workercount": 2, PARTITION_INPUT: None})
    assert worker_share(_config(config), ITEMS) == []


def test_configure_node_gives_the_first_workers_their_index() -> None:
    """gw0 and gw1 of two get 0 and 1; a replacement gw2 gets None."""
    nodes = _configured("gw0", "gw1", "gw2")
    assert [node.workerinput[PARTITION_INPUT] for node in nodes] == [0, 1, None]


def test_configure_node_ignores_odd_worker_ids() -> None:
    """A worker id without the gw prefix gets no index."""
    (node,) = _configured("w0")
    assert node.workerinput[PARTITION_INPUT] is None


@pytest.mark.parametrize("dist", ["each", "loadscope", "loadfile", "worksteal"])
def test_other_dist_modes_get_no_index_and_no_scheduler(dist: str) -> None:
    """Only ``--dist load`` is partitioned; the others keep xdist's scheduler."""
    nodes = _configured("gw0", "gw1", dist=dist)
    assert [node.workerinput[PARTITION_INPUT] for node in nodes] == [None, None]
    plugin = _plugin(FakeConfig(dist=dist))
    assert plugin.enabled is False
    assert plugin.pytest_xdist_make_scheduler(_config(FakeConfig(dist=dist)), FakeLog()) is None


def test_load_mode_makes_the_partition_scheduler() -> None:
    """Under ``--dist load`` the hook returns a LoadScheduling subclass."""
    plugin = _plugin(FakeConfig())
    sched = plugin.pytest_xdist_make_scheduler(_config(FakeConfig()), FakeLog())
    assert isinstance(sched, LoadScheduling)
    assert type(sched) is not LoadScheduling


def test_schedule_sends_each_share_at_once() -> None:
    """Two workers, five items: gw0 gets 0, 2, 4 and gw1 gets 1, 3, in one send each."""
    gw0, gw1 = _configured("gw0", "gw1")
    sched = _scheduled([gw0, gw1])
    assert (gw0.sent, gw1.sent) == ([0, 2, 4], [1, 3])
    assert (sched.node2pending[gw0], sched.node2pending[gw1]) == ([0, 2, 4], [1, 3])
    assert sched.pending == []
    assert sched.collection == ITEMS
    # Workers stay up while their own share runs (crashed items may still come their way).
    assert not gw0.shutting_down and not gw1.shutting_down


def test_schedule_shuts_down_workers_without_a_share() -> None:
    """Three workers, two items: the third has nothing to do."""
    nodes = _configured("gw0", "gw1", "gw2", count=3)
    _scheduled(nodes, ITEMS[:2])
    assert [node.sent for node in nodes] == [[0], [1], []]
    assert [node.shutting_down for node in nodes] == [False, False, True]


def test_pending_items_go_to_a_live_worker() -> None:
    """Items put back into ``pending`` (a crash) are handed over whole by check_schedule."""
    gw0, gw1 = _configured("gw0", "gw1")
    sched = _scheduled([gw0, gw1])
    sched.pending.extend([3])
    sched.check_schedule(gw0)
    assert gw0.sent == [0, 2, 4, 3]
    assert sched.node2pending[gw0] == [0, 2, 4, 3]
    assert sched.pending == []


def test_a_crashed_workers_unstarted_items_move_over() -> None:
    """gw1 dies running item 1: item 1 is the crash item, item 3 goes to gw0."""
    gw0, gw1 = _configured("gw0", "gw1")
    sched = _scheduled([gw0, gw1])
    crashitem = sched.remove_node(gw1)
    assert crashitem == "q1"
    assert gw0.sent == [0, 2, 4, 3]
    assert sched.pending == []


def test_shutting_down_worker_gets_nothing() -> None:
    """A worker on its way out is skipped; the items stay pending."""
    gw0, gw1 = _configured("gw0", "gw1")
    sched = _scheduled([gw0, gw1])
    gw0.shutting_down = True
    sched.pending.extend([1, 3])
    sched.check_schedule(gw0)
    assert gw0.sent == [0, 2, 4]
    assert sched.pending == [1, 3]


def test_finished_worker_is_shut_down() -> None:
    """A worker whose share is done and with nothing pending is shut down."""
    gw0, gw1 = _configured("gw0", "gw1")
    sched = _scheduled([gw0, gw1])
    for index in (1, 3):
        sched.mark_test_complete(gw1, index)
    assert gw1.shutting_down and not gw0.shutting_down


def test_rescheduling_after_a_replacement_joins() -> None:
    """A replacement added after the first schedule picks up what is pending."""
    gw0, gw1 = _configured("gw0", "gw1")
    sched = _scheduled([gw0, gw1])
    gw0.shutting_down = True
    sched.remove_node(gw1)  # item 3 cannot go to gw0, which is shutting down
    assert sched.pending == [3]
    (gw2,) = _configured("gw2")
    sched.add_node(gw2)
    sched.add_node_collection(gw2, ITEMS)
    sched.schedule()
    assert gw2.sent == [3]
    assert sched.pending == []


def test_a_replacement_before_the_first_schedule_runs_the_orphaned_share() -> None:
    """gw2 of three dies while collecting; its replacement gw3 has no index. Every item must
    still be sent to some worker."""
    nodes = _configured("gw0", "gw1", "gw3", count=3)
    assert [node.workerinput[PARTITION_INPUT] for node in nodes] == [0, 1, None]
    sched = _scheduled(nodes)
    assert sorted(index for node in nodes for index in node.sent) == [0, 1, 2, 3, 4]
    assert sched.pending == []


def test_different_collections_abort() -> None:
    """Workers that collected different items get nothing, and the difference is logged."""
    gw0, gw1 = _configured("gw0", "gw1")
    log = FakeLog()
    sched = make_partition_scheduler(_config(FakeConfig()), log, _triage(FakeConfig()))
    for node in (gw0, gw1):
        sched.add_node(node)
    sched.add_node_collection(gw0, ITEMS)
    sched.add_node_collection(gw1, ITEMS[:4])
    sched.schedule()
    assert (gw0.sent, gw1.sent) == ([], [])
    assert "**Different tests collected, aborting run**" in log.messages


def _crash_report(nodeid: str) -> pytest.TestReport:
    """The report xdist builds for a crashed item."""
    path = nodeid.split("::")[0]
    when: Any = "???"
    return pytest.TestReport(nodeid, (path, None, path), {}, "failed", "worker 'gw1' crashed", when)


def test_crashed_checkpoint_item_is_a_setup_error(tmp_path: Path) -> None:
    """A question whose worker died: a setup report carrying the worker-crashed payload."""
    (tmp_path / "bench.jsonld").write_text("{}", encoding="utf-8")
    plugin = _plugin(FakeConfig(rootpath=tmp_path), ((tmp_path / "bench.jsonld").resolve(),))
    report = _crash_report("bench.jsonld::q1[gpt-4o]")
    plugin.pytest_handlecrashitem("bench.jsonld::q1[gpt-4o]", report, None)
    assert report.when == "setup"
    payload = report.karenina
    assert payload == ItemPayload.worker_crashed("bench.jsonld::q1[gpt-4o]").to_json()
    assert payload["category"] == "error:worker_crashed"


def test_crashed_item_of_another_file_is_left_alone(tmp_path: Path) -> None:
    """Ordinary tests that crash keep xdist's own report."""
    plugin = _plugin(FakeConfig(rootpath=tmp_path), ((tmp_path / "bench.jsonld").resolve(),))
    report = _crash_report("tests/test_other.py::test_it")
    plugin.pytest_handlecrashitem("tests/test_other.py::test_it", report, None)
    when: str = report.when
    assert when == "???"
    assert not hasattr(report, "karenina")


# --- a crashed worker: the journal says which pipelines were in flight ------------------


def _report(nodeid: str, when: str, outcome: str = "passed") -> pytest.TestReport:
    return pytest.TestReport(nodeid, ("f", None, ""), {}, outcome, None, when)  # type: ignore[arg-type]


def test_the_pipeline_in_flight_is_the_crash_not_the_item_pytest_was_on(tmp_path: Path) -> None:
    """gw1 has q1, q3 and (added later) q4; pytest is on q1 (its result already reported),
    q3's pipeline is running when the worker dies. q3 is the crash, q1's report stands,
    and q4, never started, moves to gw0. xdist alone would blame q1 and re-run q3."""
    config = FakeConfig()
    triage = _triage(config, tmp_path)
    gw0, gw1 = _configured("gw0", "gw1")
    sched = _scheduled([gw0, gw1], triage=triage)
    sched.node2pending[gw1].append(4)
    journal = FlightJournal(triage.journals.path, "gw1")
    journal.started("q1")
    journal.started("q3")
    journal.ended("q1")
    journal.close()
    triage.note_report(_report("q1", "setup"))
    triage.note_report(_report("q1", "call", "failed"))

    crashitem = sched.remove_node(gw1)

    assert crashitem == "q3"
    assert gw0.sent == [0, 2, 4, 4]
    assert config.test_reports == []  # one crash: xdist reports it itself
    assert triage.message("q3", "gw1") == "worker 'gw1' crashed while running 'q3'"


def test_every_pipeline_in_flight_is_reported_and_none_runs_again(tmp_path: Path) -> None:
    config = FakeConfig()
    triage = _triage(config, tmp_path)
    gw0, gw1 = _configured("gw0", "gw1")
    sched = _scheduled([gw0, gw1], triage=triage)
    journal = FlightJournal(triage.journals.path, "gw1")
    journal.started("q1")
    journal.started("q3")
    journal.close()

    crashitem = sched.remove_node(gw1)

    assert crashitem == "q1"
    assert gw0.sent == [0, 2, 4]  # nothing re-queued
    (extra,) = config.test_reports
    assert (extra.nodeid, extra.when, extra.failed) == ("q3", "setup", True)
    assert extra.karenina == ItemPayload.worker_crashed("q3").to_json()  # type: ignore[attr-defined]
    assert "in flight with 1 other(s), reported as crashed too: q1" in str(extra.longrepr)
    assert triage.message("q1", "gw1").endswith("crashed too: q3")
