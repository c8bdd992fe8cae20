"""The run history file and what is read of it: records, torn and damaged lines, shard records
joined, appends from many threads at once beside a prune, failing streaks and flakiness."""

from __future__ import annotations

import threading
from pathlib import Path

import orjson
import pytest

from pytest_karenina.plugin.payload import ItemPayload
from pytest_karenina.plugin.report.history import History, record_run, run_history_record
from pytest_karenina.plugin.report.history_file import (
    append_record,
    prune_history,
    read_history,
)
from pytest_karenina.plugin.report.history_html import history_cell, summary_html
from pytest_karenina.plugin.report.history_keeper import HistoryKeeper
from pytest_karenina.plugin.verdict.outcome import Outcome

BENCH = ["capitals.jsonld"]


def record(
    verdicts: dict[str, Outcome], commit: str = "c0", shard: tuple[int, int] | None = None
) -> dict[str, object]:
    payloads = [
        ItemPayload(nodeid=f"x::{q}", category=v, question_id=q, answering_model="m",
                    score=1.0 if v is Outcome.PASS else 0.0, seconds=0.5, cost=[0.001, 0.002])
        for q, v in verdicts.items()
    ]  # fmt: skip
    return run_history_record(payloads, BENCH, "s", (commit, "main"), shard, now=0)


P, F, E = Outcome.PASS, Outcome.VERIFY_FAIL, Outcome.TIMEOUT_ERROR


def test_a_record_is_one_line_of_columns(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    append_record(path, record({"q1": P, "q2": F, "q3": E}))
    (line,) = path.read_bytes().splitlines()
    data = orjson.loads(line)
    assert data["time"] == "1970-01-01T00:00:00Z"
    assert data["models"]["m"] == {
        "ids": ["q1", "q2", "q3"], "verdict": "pfe", "score": [1.0, 0.0, 0.0],
        "cost": [0.003, 0.003, 0.003], "seconds": [0.5, 0.5, 0.5],
        "category": {"1": "verify_fail", "2": "error:timeout"},
    }  # fmt: skip


def test_an_append_ends_a_torn_last_line_first(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    path.write_bytes(orjson.dumps(record({"q1": P})) + b'\n{"format": "pytest-kar')
    assert len(read_history(path, BENCH).runs) == 1  # the torn line: skipped, not reported
    assert read_history(path, BENCH).problems == []
    append_record(path, record({"q1": F}))
    read = read_history(path, BENCH)
    assert [run.models["m"].verdict for run in read.runs] == ["p", "f"]
    assert [(p.line, p.why.split(" (")[0]) for p in read.problems] == [(2, "not JSON")]


def test_a_record_of_the_wrong_shape_is_a_damaged_record(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    bad = record({"q1": P, "q2": P})
    bad["models"]["m"]["verdict"] = "p"  # type: ignore[index]
    append_record(path, bad)
    (problem,) = read_history(path, BENCH).problems
    assert str(problem) == (
        'h.jsonl line 1: a damaged record ("ids" and "verdict" must be a list and a string of '
        "one length)"
    )


def test_shard_records_of_one_run_are_joined(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    append_record(path, record({"q1": P}, shard=(2, 2)))
    append_record(path, record({"q2": F, "q3": P}, shard=(1, 2)))
    append_record(path, record({"q1": F}, shard=(2, 2)))  # shard 2 again: the next run
    runs = read_history(path, BENCH).runs
    assert [(r.models["m"].ids, r.models["m"].verdict, r.lines) for r in runs] == [
        (["q1", "q2", "q3"], "pfp", [1, 2]), (["q1"], "f", [3]),
    ]  # fmt: skip
    assert runs[0].models["m"].category == {"1": "verify_fail"}


def test_appends_from_many_threads_and_a_prune_lose_no_line(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    path.write_text('{"format": "someone else\'s"}\n')

    def append(count: int) -> None:
        for _ in range(count):
            append_record(path, record({"q1": P, "q2": F}))

    threads = [threading.Thread(target=append, args=(25,)) for _ in range(4)]
    for thread in threads:
        thread.start()
    pruned = 0
    while any(thread.is_alive() for thread in threads):
        pruned += prune_history(path, BENCH, 10)
    for thread in threads:
        thread.join()
    read = read_history(path, BENCH)
    assert [(p.line, p.why) for p in read.problems] == [(1, "not a pytest-karenina history record")]
    assert len(read.runs) + pruned == 100
    assert path.read_text().splitlines()[0] == '{"format": "someone else\'s"}'


@pytest.mark.parametrize(
    ("marks", "lines"),
    [
        ("ppp", []),
        ("ppff", ["failing since c2 (2 runs)"]),
        ("fff", ["failing in all 3 runs recorded, since c0"]),
        ("pfpfp", ["flaky in 2 of the last 5 runs"]),
        ("pppf", ["failing since c3 (1 run)"]),  # one change of verdict is not flaky
        ("pfpe", ["failing since c3 (1 run)", "flaky in 2 of the last 4 runs"]),
    ],
)
def test_failing_since_and_flaky(marks: str, lines: list[str]) -> None:
    outcome = {"p": P, "f": F, "e": E}
    history = History(
        [record_run(record({"q1": outcome[m]}, f"c{i}")) for i, m in enumerate(marks)]
    )
    item = history.item("m", "q1")
    assert item is not None and item.marks == marks
    assert item.lines() == lines


def test_an_item_missing_from_the_last_run_keeps_its_history(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    append_record(path, record({"q1": F, "q2": P}, "c0"))
    append_record(path, record({"q2": P}, "c1"))
    keeper = HistoryKeeper(path, BENCH, {}, tmp_path)
    now = ItemPayload(nodeid="x::q1", category=F, question_id="q1", answering_model="m")
    item = keeper.item(now)
    assert item is not None and (item.marks, item.lines()) == (
        "ff",
        ["failing in all 2 runs recorded, since c0"],
    )


def test_the_html_says_it_in_words_and_escapes_names(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    for marks in ("p", "f", "f"):
        append_record(path, record({"q1": {"p": P, "f": F}[marks]}, "c<1>"))
    keeper = HistoryKeeper(path, BENCH, {}, tmp_path)
    item = keeper.past.item("m", "q1")
    cell = history_cell(item)
    assert 'aria-label="last 3 runs, oldest first: pass, fail x2"' in cell
    assert "failing since c&lt;1&gt; (2 runs)" in cell
    html = summary_html(keeper)
    assert "m: pass rate 0% (last 3 runs: 100 0 0), cost $0.0030, 0.5 s" in html
    assert "<figcaption>pass rate (%): 0 (last 3 runs: 100 0 0)</figcaption>" in html
    assert "c<1>" not in html
