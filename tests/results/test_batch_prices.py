"""Batch prices in the price table: a factor, explicit prices, the default half price."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_karenina.results.cost import Price, PriceError, PriceTable


def table(tmp_path: Path, entries: dict[str, object]) -> PriceTable:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(entries))
    return PriceTable.from_file(path)


def test_batch_prices_by_factor_explicit_and_default(tmp_path: Path) -> None:
    found = table(tmp_path, {
        "a": {"input": 2.0, "output": 8.0, "batch": 0.4},
        "b": {"input": 2.0, "output": 8.0, "batch": {"input": 1.5, "output": 3.0}},
        "c": [2.0, 8.0],
    }).batched()  # fmt: skip
    # 1M input and 1M output tokens: a 0.4 x (2 + 8); b 1.5 + 3; c half of 2 + 8.
    assert found.prices["a"].of(1_000_000, 1_000_000) == pytest.approx(4.0)
    assert found.prices["b"].of(1_000_000, 1_000_000) == pytest.approx(4.5)
    assert found.prices["c"].of(1_000_000, 1_000_000) == pytest.approx(5.0)
    assert Price(2.0, 8.0).batched() == Price(1.0, 4.0)


def test_a_bad_batch_entry_names_the_file_and_model(tmp_path: Path) -> None:
    with pytest.raises(PriceError, match=r"prices.json: m: batch factor must be >= 0"):
        table(tmp_path, {"m": {"input": 1, "output": 1, "batch": -1}})
    with pytest.raises(PriceError, match=r"prices.json \(batch\): m: expected an input"):
        table(tmp_path, {"m": {"input": 1, "output": 1, "batch": {"input": "x"}}})
