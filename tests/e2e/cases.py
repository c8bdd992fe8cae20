"""Scripted answers and judge extractions for the fixture checkpoints in tests/data.

Each checkpoint's cases are its finished questions in file order (``minimal.jsonld``
has none finished: its case is run by explicit id). Some answers are right and some
wrong, so every run has passes and content failures.
"""

from __future__ import annotations

from pathlib import Path

from pytest_karenina import load_checkpoint
from pytest_karenina.checkpoint import Benchmark
from tests.e2e.scripting import Case
from tests.helpers import DATA

MQ = "urn:karenina:test:mq00"
RQ = "urn:karenina:test:rq00"

CHECKPOINT_CASES: dict[str, list[Case]] = {
    "minimal.jsonld": [
        Case("urn:karenina:test:q001", "What is 2+2?", "2 + 2 equals 4.", {"result": 4}, True),
    ],
    "multi_question.jsonld": [
        Case(f"{MQ}1", "boiling point of water in Celsius", "Water boils at 100 °C.",
             {"temperature": 100}, True),
        Case(f"{MQ}2", "three primary colors", "Red, yellow and blue are primary.",
             {"colors": ["red", "yellow", "blue"]}, False),
        Case(f"{MQ}3", "Romeo and Juliet", "It was written by William Shakespeare.",
             {"author": "William Shakespeare"}, True),
        Case(f"{MQ}4", "chemical symbol for gold", "The symbol for gold is Ag.",
             {"symbol": "Ag"}, False),
    ],
    "with_results.jsonld": [
        Case("urn:karenina:test:q002", "capital of France", "It is Paris.",
             {"capital": " PARIS "}, True),
    ],
    "with_rubrics.jsonld": [
        Case(f"{RQ}1", "What is BCL2", "BCL2 is an anti-apoptotic proto-oncogene.",
             {"gene_name": "bcl2", "gene_function": "Anti-apoptotic regulator"}, True),
        Case(f"{RQ}2", "boiling point of water at sea level", "About 90 degrees (194 °F).",
             {"celsius": 90, "fahrenheit": 194}, False),
        Case(f"{RQ}3", "capital of France", "The capital of France is Lyon.",
             {"capital": "Lyon"}, False),
    ],
}  # fmt: skip
"""Per fixture checkpoint: the cases of the questions a run verifies, in task order."""

EXPLICIT_IDS: dict[str, list[str]] = {"minimal.jsonld": ["urn:karenina:test:q001"]}
"""Checkpoints whose questions must be named (none is finished)."""

MULTI = "multi_question.jsonld"


def checkpoint(name: str) -> Benchmark:
    return load_checkpoint(DATA / name)


def checkpoint_path(name: str) -> Path:
    return DATA / name
