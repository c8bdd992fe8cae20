"""``run_verification`` on a benchmark with multi-turn scenarios logs how many are not run."""

from __future__ import annotations

import logging

import pytest

from pytest_karenina.checkpoint import Benchmark
from pytest_karenina.pipeline import run_verification
from pytest_karenina.pipeline.run import scenarios_not_run
from tests.pipeline.pipeline_helpers import ANSWER, CLASSIC
from tests.support.fake_llm import FakeLLM, fake_config, fake_factory, question


def test_scenarios_are_counted_in_a_logged_warning(caplog: pytest.LogCaptureFixture) -> None:
    config = fake_config()
    fake = FakeLLM().answer(ANSWER).parse_as({"capital": "Paris"})
    benchmark = Benchmark(
        name="triage", questions=[question(CLASSIC)], scenarios=[{"name": "a"}, {"name": "b"}]
    )

    with caplog.at_level(logging.WARNING, logger="pytest_karenina.pipeline.run"):
        results = run_verification(benchmark, config, llm=fake_factory(config, fake))

    assert len(results.results) == 1
    (record,) = [r for r in caplog.records if "scenario" in r.getMessage()]
    assert record.levelno == logging.WARNING
    assert record.getMessage() == (
        "2 multi-turn scenario(s) of benchmark 'triage' are not run (run_verification does "
        "not run them; pytest --karenina and pytest_karenina.scenarios.run_scenarios do): "
        "the results and the pass rate "
        "cover its 1 standalone question(s) only"
    )


def test_no_scenarios_no_warning() -> None:
    assert scenarios_not_run(Benchmark(name="b", questions=[question(CLASSIC)])) is None
    assert scenarios_not_run(Benchmark(name="b", scenarios=[])) is None
