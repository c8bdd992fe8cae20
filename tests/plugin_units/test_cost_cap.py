"""The cost cap's admission: spent plus in flight at the finished pipelines' mean cost."""

from __future__ import annotations

import pytest

from pytest_karenina.plugin.cost_cap import SKIP_PREFIX, CostCap, CostCapReached
from pytest_karenina.results.cost import PriceTable
from tests.results.builders import result

PRICES = PriceTable.from_lines(["m = 1000000 0"], "test")  # $1 per input token


def costing(dollars: int) -> list:
    usage = {"parsing": {"input_tokens": dollars, "output_tokens": 0, "model": "x:m"}}
    return [result(usage_metadata=usage)]


def test_pipelines_start_until_spent_and_in_flight_reach_the_cap() -> None:
    cap = CostCap(10.0, PRICES)
    cap.admit()
    cap.admit()  # nothing finished yet: the cost of a pipeline is unknown
    cap.settle(costing(3))  # spent 3, mean 3, one in flight (expected 6)
    cap.admit()  # 6 + 3 = 9 <= 10
    with pytest.raises(CostCapReached, match=f"^{SKIP_PREFIX} \\$10 reached"):
        cap.admit()  # 3 + 2 in flight * 3 + 3 = 12 > 10
    cap.settle(costing(3))
    cap.settle(costing(3))  # spent 9, nothing in flight
    with pytest.raises(CostCapReached):
        cap.admit()  # 9 + 3 > 10
    assert (cap.spent, cap.refused) == (9.0, 2)


def test_workers_share_the_cap() -> None:
    cap = CostCap(10.0, PRICES, workers=4)
    cap.admit()
    cap.settle(costing(3))  # spent 3 of a 2.5 share
    with pytest.raises(CostCapReached):
        cap.admit()
