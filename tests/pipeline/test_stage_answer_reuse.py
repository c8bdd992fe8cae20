"""Answer reuse across judges (seed stage 2 "cache shortcut"; spec 5.2, 5.3): one answer
per question x answering model x replicate, shared by every parsing model, results in a
stable order.
"""

from __future__ import annotations

import itertools
import re

import pytest

from pytest_karenina.checkpoint import Benchmark
from pytest_karenina.llm.ports import ModelRequest
from pytest_karenina.pipeline import Task, run_question, run_verification
from pytest_karenina.results import VerificationResult
from tests.pipeline.pipeline_helpers import CLASSIC
from tests.support.fake_llm import FakeLLM, fake_config, fake_factory, judge_model, question

PARIS = {"capital": "Paris"}
JUDGES = [
    judge_model(id="judge-a", model_name="judge-a"),
    judge_model(id="judge-b", model_name="judge-b"),
]
Q1 = question(CLASSIC)
Q2 = question(CLASSIC, text="Which city is the capital of France?")
BENCHMARK = Benchmark(name="reuse", questions=[Q1, Q2])


def numbered_answers() -> FakeLLM:
    """A fake whose every generated answer is different ("Paris (answer 1)", ...)."""
    counter = itertools.count(1)

    def answer(request: ModelRequest) -> str:
        return f"Paris (answer {next(counter)})"

    return FakeLLM().on("answer_generation", reply=answer).parse_as(PARIS)


def key(result: VerificationResult) -> tuple[str, int | None, str]:
    """(question id, replicate, judge model name) of a result."""
    metadata = result.metadata
    return (metadata.question_id, metadata.replicate, metadata.parsing.model_name)


def raw(result: VerificationResult) -> str:
    assert result.template is not None
    return result.template.raw_llm_response


EXPECTED_ORDER = [
    (q.id, replicate, judge.model_name)
    for q in (Q1, Q2)
    for replicate in (1, 2)
    for judge in JUDGES
]


@pytest.mark.parametrize("workers", [1, 4])
def test_one_answer_per_question_and_replicate(workers: int) -> None:
    config = fake_config(judges=JUDGES, replicate_count=2)
    fake = numbered_answers()

    results = run_verification(
        BENCHMARK, config, llm=fake_factory(config, fake), max_workers=workers
    ).results

    assert fake.count("answer_generation") == 4  # 2 questions x 2 replicates
    assert fake.count("parsing") == 8
    assert len(results) == 8
    assert [key(r) for r in results] == EXPECTED_ORDER
    for q in (Q1, Q2):
        mine = [r for r in results if r.metadata.question_id == q.id]
        assert len(mine) == 4
        assert sorted({r.metadata.replicate for r in mine}) == [1, 2]  # type: ignore[type-var]
        by_replicate = {
            replicate: {raw(r) for r in mine if r.metadata.replicate == replicate}
            for replicate in (1, 2)
        }
        # Both judges of a replicate read the same answer; replicates differ.
        assert all(len(answers) == 1 for answers in by_replicate.values())
        assert by_replicate[1] != by_replicate[2]
    assert all(r.verify_result is True for r in results)
    fake.assert_all_scripted()


def test_reused_answer_has_the_same_artifacts_and_usage() -> None:
    config = fake_config(judges=JUDGES, replicate_count=2)
    fake = numbered_answers()
    results = run_verification(BENCHMARK, config, llm=fake_factory(config, fake)).results
    first, second = results[0], results[1]
    assert key(first)[:2] == key(second)[:2] and key(first)[2] != key(second)[2]
    assert first.template is not None and second.template is not None
    for name in ("raw_llm_response", "trace_messages", "agent_metrics", "recursion_limit_reached"):
        assert getattr(first.template, name) == getattr(second.template, name), name
    assert first.template.usage_metadata is not None
    assert second.template.usage_metadata is not None
    generated = first.template.usage_metadata["answer_generation"]
    assert second.template.usage_metadata["answer_generation"] == generated


def test_single_replicate_has_no_replicate_number() -> None:
    config = fake_config(judges=JUDGES)
    fake = numbered_answers()
    results = run_verification(BENCHMARK, config, llm=fake_factory(config, fake)).results
    assert fake.count("answer_generation") == 2
    assert [key(r) for r in results] == [
        (q.id, None, j.model_name) for q in (Q1, Q2) for j in JUDGES
    ]


def test_run_name_is_shared_and_defaults_to_run_hex() -> None:
    config = fake_config(judges=JUDGES, replicate_count=2)
    fake = numbered_answers()
    results = run_verification(BENCHMARK, config, llm=fake_factory(config, fake)).results
    names = {r.metadata.run_name for r in results}
    assert len(names) == 1
    (name,) = names
    assert name is not None and re.fullmatch(r"run_[0-9a-f]{8}", name)
    named = run_verification(BENCHMARK, config, run_name="nightly", llm=fake_factory(config, fake))
    assert {r.metadata.run_name for r in named.results} == {"nightly"}


def test_result_ids_differ_per_judge_and_replicate() -> None:
    config = fake_config(judges=JUDGES, replicate_count=2)
    fake = numbered_answers()
    results = run_verification(BENCHMARK, config, llm=fake_factory(config, fake)).results
    assert len({r.metadata.result_id for r in results}) == len(results)


def test_cached_answer_skips_the_answering_model() -> None:
    config = fake_config()
    answering, parsing = (models[0] for models in config.stamped_models())
    task = Task(Q1, answering, parsing, None)
    fake = numbered_answers()
    factory = fake_factory(config, fake)
    live, generated = run_question(task, config, factory)
    assert generated is not None
    cached, regenerated = run_question(task, config, factory, cached_answer=generated)
    assert fake.count("answer_generation") == 1
    assert fake.count("parsing") == 2
    assert regenerated is None
    assert live.template is not None and cached.template is not None
    for name in ("raw_llm_response", "trace_messages", "conversation_context", "agent_metrics"):
        assert getattr(cached.template, name) == getattr(live.template, name), name
    assert cached.template.usage_metadata is not None
    assert live.template.usage_metadata is not None
    assert (
        cached.template.usage_metadata["answer_generation"]
        == live.template.usage_metadata["answer_generation"]
    )
