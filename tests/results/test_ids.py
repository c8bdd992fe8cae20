"""Result ids and timestamps (spec 5.8)."""

from __future__ import annotations

import hashlib
import json
import re
import time

import pytest

from pytest_karenina.results import (
    ModelIdentity,
    compute_result_id,
    export_timestamp,
    pipeline_timestamp,
)
from tests.results.builders import GPT4O

FIXTURE_TIMESTAMP = "2026-04-21T12:00:00+00:00"


@pytest.mark.parametrize(
    ("question_id", "expected"),
    [("q-unicode", "ccb35805790e357a"), ("q-timeout", "b60b6a00a978f080")],
)
def test_export_fixture_ids_reproduce(question_id: str, expected: str) -> None:
    assert GPT4O.canonical_key == "langchain:gpt-4o:"
    assert compute_result_id(GPT4O, GPT4O, question_id, None, FIXTURE_TIMESTAMP) == expected


def test_id_is_the_hash_of_the_sorted_json() -> None:
    answering = ModelIdentity.of("langchain", "claude", tools=["web"])
    payload = {
        "timestamp": "2026-01-01 00:00:00",
        "question_id": "q",
        "answering": answering.canonical_key,
        "parsing": GPT4O.canonical_key,
        "replicate": 2,
        "scenario_id": "s",
        "scenario_node": "n",
        "scenario_turn": 0,
    }
    text = json.dumps(payload, sort_keys=True, ensure_ascii=True)
    expected = hashlib.sha256(text.encode()).hexdigest()[:16]
    got = compute_result_id(answering, GPT4O, "q", 2, "2026-01-01 00:00:00", "s", "n", 0)
    assert got == expected


def test_every_input_changes_the_id() -> None:
    base = compute_result_id(GPT4O, GPT4O, "q", None, "t")
    other = ModelIdentity.of("langchain", "gpt-4o-mini")
    variants = [
        compute_result_id(other, GPT4O, "q", None, "t"),
        compute_result_id(GPT4O, other, "q", None, "t"),
        compute_result_id(GPT4O, GPT4O, "q2", None, "t"),
        compute_result_id(GPT4O, GPT4O, "q", 1, "t"),
        compute_result_id(GPT4O, GPT4O, "q", None, "t2"),
        compute_result_id(GPT4O, GPT4O, "q", None, "t", scenario_id="s"),
        compute_result_id(GPT4O, GPT4O, "q", None, "t", scenario_node="n"),
        compute_result_id(GPT4O, GPT4O, "q", None, "t", scenario_turn=1),
    ]
    assert len({base, *variants}) == len(variants) + 1
    assert all(re.fullmatch(r"[0-9a-f]{16}", v) for v in variants)


def test_pipeline_timestamp_is_local_time_without_zone() -> None:
    when = 1_714_000_000.0
    assert pipeline_timestamp(when) == time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(when))
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", pipeline_timestamp())


def test_export_timestamp_is_utc() -> None:
    assert export_timestamp(1_714_000_000.0) == "2024-04-24 23:06:40 UTC"
