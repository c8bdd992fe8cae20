"""Replay by side of the call: answering calls from one store (strictly, when re-judging
recorded answers), judge calls live or through a store of their own, even when one model
config answers and judges."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_karenina.checkpoint import Benchmark
from pytest_karenina.config.verification import VerificationConfig
from pytest_karenina.llm.agent_ports import AgentPort, AgentRunConfig
from pytest_karenina.llm.ports import ChatMessage
from pytest_karenina.llm.replay import ReplayMiss, ReplayStore
from pytest_karenina.pipeline.llm_stack import LLMStack
from pytest_karenina.pipeline.replay_sides import ReplaySides
from pytest_karenina.pipeline.run import run_verification
from pytest_karenina.results import VerificationResult
from tests.pipeline.pipeline_helpers import CLASSIC
from tests.support.fake_llm import FakeLLM, answering_model, fake_config, question

QUESTIONS = {"q1": "What is the capital of France?", "q2": "What is the capital of Italy?"}


def one_model_config(**fields: object) -> VerificationConfig:
    """The same model answers and judges; the abstention check adds a second judge call."""
    model = answering_model()
    return fake_config(
        answering_models=[model], judges=[model], abstention_enabled=True, **fields
    )  # fmt: skip


def benchmark(*ids: str) -> Benchmark:
    items = [question(CLASSIC, text=QUESTIONS[qid], question_id=qid) for qid in ids]
    return Benchmark(name="b", questions=items)


def judge(fake: FakeLLM, capital: str) -> FakeLLM:
    return fake.parse_as({"capital": capital}).abstention(False)


def run(stack: LLMStack, *ids: str) -> list[VerificationResult]:
    return list(run_verification(benchmark(*ids), stack.config, llm=stack).results)


def record(store: Path) -> None:
    fake = judge(FakeLLM().answer("The capital is Paris."), "Paris")
    config = one_model_config()
    stack = LLMStack(config, replay=ReplayStore(store, "record"), adapter_factory=fake.for_model)
    assert [r.verify_result for r in run(stack, "q1")] == [True]
    assert sorted(fake.kinds()) == ["abstention_check", "answer_generation", "parsing"]


def test_answers_come_from_the_store_and_every_judge_call_is_live(tmp_path: Path) -> None:
    store = tmp_path / "calls.jsonl"
    record(store)
    recorded = store.read_bytes()
    fake = judge(FakeLLM(), "Lyon")  # a changed judge; no answering rule at all
    sides = ReplaySides(ReplayStore(store, "strict"), None)
    stack = LLMStack(one_model_config(), replay=sides, adapter_factory=fake.for_model)

    first, second = run(stack, "q1", "q2")

    assert first.verify_result is False  # the live judge's new reading of the recorded answer
    assert first.template is not None and first.template.parsed_llm_response == {"capital": "Lyon"}
    assert "The capital is Paris." in (first.template.raw_llm_response or "")
    assert second.metadata.error is not None
    assert "no recorded reply for question 'q2', call kind 'answer_generation'" in (
        second.metadata.error
    )
    assert sorted(fake.kinds()) == ["abstention_check", "parsing"]  # q1's judge calls only
    assert (stack.live_calls.of("answering"), stack.live_calls.of("judge")) == (0, 2)
    assert store.read_bytes() == recorded


def test_a_judge_store_records_judge_calls_apart_and_replays_them_strictly(
    tmp_path: Path,
) -> None:
    store, judge_store = tmp_path / "calls.jsonl", tmp_path / "judge.jsonl"
    record(store)
    fake = judge(FakeLLM(), "Paris")
    sides = ReplaySides(ReplayStore(store, "strict"), ReplayStore(judge_store, "record"))
    stack = LLMStack(one_model_config(), replay=sides, adapter_factory=fake.for_model)
    assert [r.verify_result for r in run(stack, "q1")] == [True]
    assert len(ReplayStore(judge_store, "strict")) == 2

    silent = FakeLLM()  # any call reaching it would be unscripted
    sides = ReplaySides(ReplayStore(store, "strict"), ReplayStore(judge_store, "strict"))
    stack = LLMStack(one_model_config(), replay=sides, adapter_factory=silent.for_model)

    assert [r.verify_result for r in run(stack, "q1")] == [True]
    assert silent.requests == []
    assert (stack.live_calls.of("answering"), stack.live_calls.of("judge")) == (0, 0)


def test_one_model_on_both_sides_is_split_by_side_over_one_adapter(tmp_path: Path) -> None:
    built: list[str] = []
    fake = FakeLLM()

    def adapters(model: object) -> object:
        built.append(model.model_dump_json())  # type: ignore[attr-defined]
        return fake.for_model(model)  # type: ignore[arg-type]

    # With a system prompt of its own the model is stamped alike on both sides.
    model = answering_model(system_prompt="Answer briefly.")
    config = fake_config(answering_models=[model], judges=[model])
    sides = ReplaySides(ReplayStore(tmp_path / "calls.jsonl", "strict"), None)
    stack = LLMStack(config, replay=sides, adapter_factory=adapters)  # type: ignore[arg-type]
    answering, parsing = stack.answering_models[0], stack.parsing_models[0]
    assert answering.model_dump_json() == parsing.model_dump_json()
    pair = stack.pair(answering, parsing)

    fake.on("parsing", reply="judged live")
    messages = [ChatMessage("user", "What is the capital?")]
    with pytest.raises(ReplayMiss, match="call kind 'answer_generation'"):
        pair.answering.for_question("q1").chat(messages, call_kind="answer_generation")
    assert pair.judge.for_question("q1").chat(messages, call_kind="parsing").text == "judged live"
    assert fake.kinds() == ["parsing"]
    assert len(built) == len(set(built)) == 2  # the model, and the model at temperature 0


def test_an_answering_agent_replays_strictly_and_builds_no_runtime(tmp_path: Path) -> None:
    model = answering_model(mcp_urls_dict={"facts": "http://127.0.0.1:9/mcp"})
    config = fake_config(answering_models=[model])
    started: list[str] = []

    def agents(built: object) -> AgentPort:
        started.append(str(built))
        raise AssertionError("no agent runtime in strict replay")

    sides = ReplaySides(ReplayStore(tmp_path / "calls.jsonl", "strict"), None)
    stack = LLMStack(config, replay=sides, adapter_factory=FakeLLM().for_model,
                     agent_factory=agents)  # fmt: skip
    pair = stack.pair(stack.answering_models[0], stack.parsing_models[0])
    assert pair.answering_agent is not None

    run_config = AgentRunConfig("answer_generation", question_id="q1")
    with pytest.raises(ReplayMiss, match="question 'q1', call kind 'answer_generation'"):
        pair.answering_agent.run([ChatMessage("user", "What is the capital?")], run_config)
    assert started == []
