"""The cost cap's admission: spent plus in flight at the finished pipelines' mean cost, one
pipeline at a time until a first cost is known."""

from __future__ import annotations

import threading

import pytest

from pytest_karenina.plugin.run.cost_cap import SKIP_PREFIX, CostCap, CostCapReached
from pytest_karenina.results.cost import PriceTable
from tests.results.builders import result

PRICES = PriceTable.from_lines(["m = 1000000 0"], "test")  # $1 per input token


def costing(dollars: int) -> list:
    usage = {"parsing": {"input_tokens": dollars, "output_tokens": 0, "model": "x:m"}}
    return [result(usage_metadata=usage)]


def admit_in_thread(cap: CostCap) -> tuple[threading.Thread, list[object]]:
    outcome: list[object] = []

    def admit() -> None:
        try:
            cap.admit()
            outcome.append("admitted")
        except CostCapReached as exc:
            outcome.append(exc)

    thread = threading.Thread(target=admit, daemon=True)
    thread.start()
    return thread, outcome


def test_the_second_pipeline_waits_for_the_first_cost() -> None:
    cap = CostCap(10.0, PRICES)
    cap.admit()
    thread, outcome = admit_in_thread(cap)
    thread.join(0.2)
    assert thread.is_alive() and outcome == []  # no cost known yet: it waits
    cap.settle(costing(3))
    thread.join(10)
    assert outcome == ["admitted"]  # 3 spent + 3 expected <= 10
    cap.admit()  # 3 + 1 in flight x 3 + 3 = 9 <= 10
    with pytest.raises(CostCapReached, match=f"^{SKIP_PREFIX} \\$10 reached"):
        cap.admit()  # 3 + 2 x 3 + 3 = 12 > 10
    cap.settle(costing(3))
    cap.settle([])  # a pipeline that raised: no cost, not in the mean
    assert (cap.spent, cap.finished, cap.in_flight) == (6.0, 2, 0)
    cap.admit()  # 6 + 0 + 3 = 9 <= 10
    with pytest.raises(CostCapReached):
        cap.admit()  # 6 + 3 + 3 = 12 > 10


def test_closing_releases_a_waiting_pipeline() -> None:
    cap = CostCap(10.0, PRICES)
    cap.admit()
    thread, outcome = admit_in_thread(cap)
    cap.close()
    thread.join(10)
    assert len(outcome) == 1 and isinstance(outcome[0], CostCapReached)


def test_workers_share_the_cap() -> None:
    cap = CostCap(10.0, PRICES, workers=4)
    cap.admit()
    cap.settle(costing(3))  # spent 3 of a 2.5 share
    with pytest.raises(CostCapReached):
        cap.admit()


def test_a_cost_that_is_not_a_number_refuses() -> None:
    """Issue 24 (item 9): NaN compares false with everything; the cap must then refuse, not
    admit (prices are checked to be finite, so this guards the cap on its own)."""
    cap = CostCap(0.5, PRICES)
    cap.spent, cap.finished = float("nan"), 1
    with pytest.raises(CostCapReached, match=r"karenina: cost cap \$0.5 reached"):
        cap.admit()
