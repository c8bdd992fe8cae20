"""The price table and the cost of an item's results."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_karenina.results.cost import (
    Cost,
    Price,
    PriceError,
    PriceTable,
    results_cost,
    stage_costs,
)
from tests.results.builders import result

TABLE = PriceTable.from_lines(["gpt-4o = 2 8", "judge = 1/1"], "test")


def usage(answer_model: str = "langchain:gpt-4o", judge_model: str = "langchain:judge") -> dict:
    return {
        "answer_generation": {"input_tokens": 1_000_000, "output_tokens": 500_000,
                              "model": answer_model},
        "parsing": {"input_tokens": 2_000_000, "output_tokens": 0, "model": judge_model},
        "total": {"input_tokens": 3_000_000, "output_tokens": 500_000},
    }  # fmt: skip


def test_one_answer_shared_by_two_judges_is_paid_once() -> None:
    both = [result(usage_metadata=usage()), result(usage_metadata=usage())]
    assert results_cost(both, TABLE) == Cost(answerer=6.0, judge=4.0)


def test_each_replicate_pays_its_answer() -> None:
    replicates = [result(meta={"replicate": r}, usage_metadata=usage()) for r in (1, 2)]
    assert results_cost(replicates, TABLE) == Cost(answerer=12.0, judge=4.0)


def test_models_without_a_price_are_named_not_counted() -> None:
    cost = results_cost([result(usage_metadata=usage(judge_model="langchain:other"))], TABLE)
    assert cost == Cost(answerer=6.0, judge=0.0, unpriced=frozenset({"langchain:other"}))
    assert results_cost([result()], TABLE) == Cost()


def test_stage_costs_add_up_to_the_items_cost() -> None:
    """The report's cost per stage: each stage priced, a shared answer once, unpriced
    stages left out."""
    both = [result(usage_metadata=usage()), result(usage_metadata=usage())]
    assert stage_costs(both, TABLE) == {"answer_generation": 6.0, "parsing": 4.0}
    assert sum(stage_costs(both, TABLE).values()) == results_cost(both, TABLE).total
    unpriced = [result(usage_metadata=usage(judge_model="langchain:other"))]
    assert stage_costs(unpriced, TABLE) == {"answer_generation": 6.0}


@pytest.mark.parametrize(
    ("line", "message"),
    [("gpt-4o", "expected MODEL = INPUT OUTPUT"), ("gpt-4o = 1", "expected MODEL"),
     ("gpt-4o = -1 2", "not negative")],
)  # fmt: skip
def test_a_bad_line_names_source_and_line(line: str, message: str) -> None:
    with pytest.raises(PriceError, match=f"ini, line 2: .*{message}"):
        PriceTable.from_lines(["# comment", line], "ini")


@pytest.mark.parametrize("line", ["gpt-4o = nan 2", "gpt-4o = 1 inf", "gpt-4o = 1e999 1"])
def test_a_price_that_is_not_a_finite_number_is_refused(line: str) -> None:
    """Issue 24 (item 9): NaN compares false with everything, so a NaN price turned the
    cost cap off."""
    with pytest.raises(PriceError, match=r"ini, line 1: gpt-4o: .*finite and not negative"):
        PriceTable.from_lines([line], "ini")


@pytest.mark.parametrize(
    "text",
    ['{"m": {"input": "nan", "output": 1}}', '{"m": [NaN, 1]}', '{"m": [1, Infinity]}',
     '{"m": [true, 1]}', '{"m": {"input": 1, "output": "-inf"}}'],
)  # fmt: skip
def test_a_json_price_that_is_not_a_finite_number_is_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "prices.json"
    path.write_text(text)
    with pytest.raises(PriceError, match=re.escape(f"{path}: m: expected an input and an output")):
        PriceTable.from_file(path)


def test_a_price_is_finite_and_not_negative() -> None:
    with pytest.raises(ValueError, match="finite and not negative"):
        Price(float("nan"), 1.0)
    assert Price(0.0, 1.5).of(1_000_000, 2_000_000) == 3.0
