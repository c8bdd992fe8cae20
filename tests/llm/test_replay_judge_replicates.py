"""Judge replicates in the replay store: a judge call names its judge replicate, keyed from
2 on (judge replicate 1 keeps the key of a run without judge replicates, so older stores keep
answering it); answering calls never carry it; a strict miss names it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from pytest_karenina.llm.agent_ports import AgentResult, AgentRunConfig
from pytest_karenina.llm.agents.replay import ReplayingAgent
from pytest_karenina.llm.ports import ChatMessage
from pytest_karenina.llm.replay import ReplayingModel, ReplayMiss, ReplayStore, replay_key
from pytest_karenina.llm.service import LLMService
from pytest_karenina.pipeline.llm_stack import ModelPairLLMs
from tests.llm.fakes import ScriptedModel, req

IDENTITY = {"adapter": "fake", "model": "judge", "temperature": 0.7}


def written_key(call_kind: str, **extra: int) -> str:
    """The key written out by hand: the payload a run without judge replicates has, plus
    ``extra`` (so the rule is pinned, not re-derived from the code under test)."""
    payload: dict[str, Any] = {
        "identity": IDENTITY,
        "messages": [{"role": "user", "content": "What is 2+2?"}],
        "json_schema": None,
        "schema_name": None,
        "call_kind": call_kind,
        **extra,
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_judge_replicate_1_keeps_the_key_of_a_run_without_judge_replicates() -> None:
    plain = written_key("parsing")

    assert replay_key(IDENTITY, req(call_kind="parsing")) == plain
    assert replay_key(IDENTITY, req(call_kind="parsing", judge_replicate=1)) == plain
    with_replicate = written_key("parsing", replicate=2)
    assert replay_key(IDENTITY, req(call_kind="parsing", replicate=2, judge_replicate=1)) == (
        with_replicate
    )


def test_judge_replicates_from_2_on_have_keys_of_their_own() -> None:
    keys = [replay_key(IDENTITY, req(call_kind="parsing", judge_replicate=n)) for n in (1, 2, 3)]

    assert len(set(keys)) == 3
    assert keys[1] == written_key("parsing", judge_replicate=2)
    # The judge replicate is not the answering replicate: each has its own place in the key.
    assert keys[1] != replay_key(IDENTITY, req(call_kind="parsing", replicate=2))
    both = replay_key(IDENTITY, req(call_kind="parsing", replicate=2, judge_replicate=3))
    assert both == written_key("parsing", replicate=2, judge_replicate=3)


def test_a_strict_miss_names_the_judge_replicate(tmp_path: Path) -> None:
    model = ReplayingModel(None, ReplayStore(tmp_path / "s.jsonl", "strict"), identity=IDENTITY)

    with pytest.raises(ReplayMiss) as caught:
        model.invoke(req(call_kind="parsing", question_id="q1", replicate=2, judge_replicate=3))

    assert "question 'q1', replicate 2, judge replicate 3, call kind 'parsing'" in str(caught.value)
    assert caught.value.judge_replicate == 3


def test_each_judge_replicate_is_recorded_apart_and_the_entry_names_it(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    inner = ScriptedModel("3", "3", "2", identity=IDENTITY)
    recording = ReplayingModel(inner, ReplayStore(path, "replay"))

    said = [recording.invoke(req(call_kind="parsing", judge_replicate=n)).text for n in (1, 2, 3)]

    assert said == ["3", "3", "2"]
    stored = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    assert sorted(entry["judge_replicate"] for entry in stored) == [1, 2, 3]
    strict = ReplayingModel(None, ReplayStore(path, "strict"), identity=IDENTITY)
    replayed = [strict.invoke(req(call_kind="parsing", judge_replicate=n)).text for n in (1, 2, 3)]
    assert replayed == said
    assert strict.invoke(req(call_kind="parsing")).text == "3"  # judge replicate 1's entry


class Count(BaseModel):
    r_count: int


def test_only_the_judge_ports_of_a_pair_carry_the_judge_replicate() -> None:
    answering, judge, checks = (
        ScriptedModel("It is 3."),
        ScriptedModel('{"r_count": 3}'),
        (ScriptedModel('{"r_count": 3}')),
    )
    pair = ModelPairLLMs(LLMService(answering), LLMService(judge), LLMService(checks))
    ports = pair.for_question("q1", 2, 3)
    messages = [ChatMessage("user", "How many r?")]

    ports.answering.chat(messages, call_kind="answer_generation")
    ports.judge.parse(messages, Count, call_kind="parsing")
    ports.judge_checks.parse(messages, Count, call_kind="abstention_check")

    assert [(r.replicate, r.judge_replicate) for r in answering.calls] == [(2, None)]
    assert [(r.replicate, r.judge_replicate) for r in judge.calls] == [(2, 3)]
    assert [(r.replicate, r.judge_replicate) for r in checks.calls] == [(2, 3)]


class ScriptedAgent:
    """An agent port answering from a script and recording the run configs it got."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.configs: list[AgentRunConfig] = []

    def run(self, messages: Sequence[ChatMessage], config: AgentRunConfig) -> AgentResult:
        self.configs.append(config)
        return AgentResult(self.answers[len(self.configs) - 1], turns=1)


def test_the_judge_agent_runs_of_each_judge_replicate_are_replayed_apart(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    judge_agent, answering_agent = ScriptedAgent("3", "2"), ScriptedAgent("It is 3.")
    pair = ModelPairLLMs(
        LLMService(ScriptedModel()), LLMService(ScriptedModel()), LLMService(ScriptedModel()),
        answering_agent=answering_agent,
        judge_agent=ReplayingAgent(judge_agent, ReplayStore(path, "replay"), IDENTITY),
    )  # fmt: skip
    messages = [ChatMessage("user", "Investigate")]
    config = AgentRunConfig("agentic_parsing", question_id="q1")

    def verdicts(ports: ModelPairLLMs) -> list[str]:
        runs = [ports.for_question("q1", None, n).judge_agent for n in (1, 2)]
        return [run.run(messages, config).final_response for run in runs if run is not None]

    assert verdicts(pair) == ["3", "2"]
    assert [c.judge_replicate for c in judge_agent.configs] == [1, 2]
    answering = pair.for_question("q1", None, 2).answering_agent
    assert answering is answering_agent  # no replicate at all: the port itself, unwrapped
    strict_agent = ReplayingAgent(None, ReplayStore(path, "strict"), IDENTITY)
    strict = ModelPairLLMs(pair.answering, pair.judge, pair.judge_checks, None, strict_agent)
    assert verdicts(strict) == ["3", "2"]
    third = strict.for_question("q1", None, 3).judge_agent
    assert third is not None
    with pytest.raises(ReplayMiss, match="question 'q1', judge replicate 3, call kind 'agentic"):
        third.run(messages, config)
