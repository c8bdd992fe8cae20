"""Batch mode in the live status line and the summary's figures (no servers)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from pytest_karenina.llm.batch.collector import BatchTally
from pytest_karenina.plugin.run.batch_run import (
    BatchProgress,
    added,
    in_flight,
    summary_lines,
    totals,
)
from pytest_karenina.plugin.run.live_status import PipelineCounts, status_line
from pytest_karenina.results.cost import PriceTable


def test_the_status_line_carries_the_latest_line_of_each_wave() -> None:
    progress = BatchProgress()
    progress("answers: submitted batch batch_abc1 of 1000 requests")
    progress("answers: batch abc1, 812/1000 done, 14 min (in_progress)")
    progress("judge: batch 9f00, 3/1000 done, 1 min (in_progress)")
    counts = PipelineCounts(queued=0, running=1000, note=progress.line)
    assert status_line(counts, 0, 0, 60.0) == (
        "karenina: 0 done, 1000 in flight, 0 queued; "
        "answers: batch abc1, 812/1000 done, 14 min (in_progress); "
        "judge: batch 9f00, 3/1000 done, 1 min (in_progress)"
    )


def test_workers_figures_add_up_and_are_priced() -> None:
    one = BatchTally(batches=2, batched_calls=6, batch_ids=["b1", "b2"],
                     tokens={"openai_endpoint:m": [600, 60]})  # fmt: skip
    two = BatchTally(batches=2, batched_calls=4, recovered=2, failed=1, batch_ids=["b3", "b4"],
                     tokens={"openai_endpoint:m": [400, 40]})  # fmt: skip
    found = added(totals(one, 6), totals(two, 7))
    prices = PriceTable.from_lines(["m = 2 8"], "test")
    # 1000 input and 100 output tokens: live 1000 x $2 + 100 x $8 per million = $0.0028.
    assert summary_lines(found, True, prices) == [
        "karenina batch: 10 calls in 4 batches, 2 recovered from earlier batches, 1 failed; "
        "1 calls ran live (not batchable: agent runs, other interfaces)",
        "karenina batch cost: $0.0014 at batch prices; the same calls live: $0.0028",
        "karenina batch ids: b1, b2, b3, b4",
    ]


def test_a_wave_waits_for_the_queued_pipelines_a_thread_is_about_to_start() -> None:
    # Threads start one by one: 99 running and waiting, 101 not started yet, is not a wave.
    settings = cast(Any, SimpleNamespace(concurrency=32))
    assert in_flight(PipelineCounts(queued=101, running=99), settings) == 200
    assert in_flight(PipelineCounts(queued=10_000, running=0), settings) == 4096
    assert in_flight(PipelineCounts(queued=0, running=7), settings) == 7
