"""Judge replicates (``judge_replicate_count``): each answer is generated once and judged K
times by each parsing model; every judging is a result of its own, numbered by
``judge_replicate``, with an id of its own; a run without them is unchanged."""

from __future__ import annotations

import itertools
import json

from pytest_karenina.checkpoint import Benchmark
from pytest_karenina.llm.ports import ModelRequest
from pytest_karenina.pipeline import run_verification
from pytest_karenina.pipeline.run import expand_tasks
from pytest_karenina.results import VerificationResult
from pytest_karenina.results.result import strip_seed_only
from tests.pipeline.pipeline_helpers import CLASSIC
from tests.support.fake_llm import FakeLLM, fake_config, fake_factory, judge_model, question

Q1 = question(CLASSIC)
BENCHMARK = Benchmark(name="judges", questions=[Q1])
JUDGES = [
    judge_model(id="judge-a", model_name="judge-a"),
    judge_model(id="judge-b", model_name="judge-b"),
]


def flipping_judge() -> FakeLLM:
    """Answers are numbered; the judge reads Paris, except as its third replicate: Lyon."""
    answers = itertools.count(1)

    def answer(request: ModelRequest) -> str:
        return f"Paris (answer {next(answers)})"

    def parse(request: ModelRequest) -> str:
        city = "Lyon" if request.judge_replicate == 3 else "Paris"
        return json.dumps({"capital": city})

    return FakeLLM().on("answer_generation", reply=answer).on("parsing", reply=parse)


def key(result: VerificationResult) -> tuple[int | None, str, int | None]:
    return (result.metadata.replicate, result.metadata.parsing.model_name, result.judge_replicate)


def test_each_answer_is_judged_k_times_by_each_judge_from_one_generation() -> None:
    config = fake_config(judges=JUDGES, replicate_count=2, judge_replicate_count=3)
    fake = flipping_judge()

    results = run_verification(BENCHMARK, config, llm=fake_factory(config, fake)).results

    assert fake.count("answer_generation") == 2  # one answer per replicate
    assert fake.count("parsing") == 12  # 2 replicates x 2 judges x 3 judge replicates
    assert [key(r) for r in results] == [
        (replicate, judge.model_name, judge_replicate)
        for replicate in (1, 2)
        for judge in JUDGES
        for judge_replicate in (1, 2, 3)
    ]
    for replicate in (1, 2):
        answers = {
            r.template.raw_llm_response
            for r in results
            if r.metadata.replicate == replicate and r.template is not None
        }
        assert len(answers) == 1  # every judging of a replicate read its one answer
    assert [r.verify_result for r in results[:3]] == [True, True, False]
    assert len({r.metadata.result_id for r in results}) == len(results)
    parses = fake.calls("parsing")
    assert sorted((r.replicate, r.judge_replicate) for r in parses) == sorted(
        (replicate, judge) for replicate in (1, 2) for judge in (1, 2, 3) for _ in JUDGES
    )
    answers = fake.calls("answer_generation")
    assert [r.judge_replicate for r in answers] == [None, None]


def test_the_export_names_the_judge_replicate_only_when_there_are_several() -> None:
    config = fake_config(judge_replicate_count=2)
    results = run_verification(BENCHMARK, config, llm=fake_factory(config, flipping_judge()))
    exported = [r.export_dict() for r in results.results]
    assert [e["judge_replicate"] for e in exported] == [1, 2]
    assert [strip_seed_only(r.model_dump(mode="json"))["judge_replicate"] for r in results] == [
        1,
        2,
    ]

    single = fake_config()
    plain = run_verification(BENCHMARK, single, llm=fake_factory(single, flipping_judge()))
    (only,) = plain.results
    assert only.judge_replicate is None
    assert "judge_replicate" not in only.export_dict()
    assert "judge_replicate" not in strip_seed_only(only.model_dump(mode="json"))


def test_tasks_without_judge_replicates_are_unchanged() -> None:
    config = fake_config(judges=JUDGES, replicate_count=2)
    tasks = expand_tasks([Q1], config)
    assert [(t.replicate, t.parsing.id, t.judge_replicate) for t in tasks] == [
        (replicate, judge.id, None) for replicate in (1, 2) for judge in JUDGES
    ]
