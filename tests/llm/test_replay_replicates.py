"""Replicates in the replay store: each replicate's calls are keyed apart, replicate 1 keeps
the key a run without replicates has (so older stores keep answering it), and a strict miss
names the replicate."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import replace
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

IDENTITY = {"adapter": "fake", "model": "m1", "temperature": 0.5}


def legacy_key(identity: dict[str, Any], content: str, call_kind: str) -> str:
    """The key as it was computed before replicates were keyed (written out, not imported)."""
    payload = {
        "identity": identity,
        "messages": [{"role": "user", "content": content}],
        "json_schema": None,
        "schema_name": None,
        "call_kind": call_kind,
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]


def test_replicate_1_and_runs_without_replicates_keep_the_legacy_key() -> None:
    legacy = legacy_key(IDENTITY, "What is 2+2?", "parsing")

    assert replay_key(IDENTITY, req(call_kind="parsing")) == legacy
    assert replay_key(IDENTITY, req(call_kind="parsing", replicate=1)) == legacy


def test_replicates_from_2_on_have_keys_of_their_own() -> None:
    keys = [replay_key(IDENTITY, req(replicate=n)) for n in (1, 2, 3)]

    assert len(set(keys)) == 3
    payload = {
        "identity": IDENTITY,
        "messages": [{"role": "user", "content": "What is 2+2?"}],
        "json_schema": None,
        "schema_name": None,
        "call_kind": "answer_generation",
        "replicate": 2,
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert keys[1] == hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_a_strict_miss_names_question_replicate_and_call_kind(tmp_path: Path) -> None:
    model = ReplayingModel(None, ReplayStore(tmp_path / "s.jsonl", "strict"), identity=IDENTITY)

    with pytest.raises(ReplayMiss) as caught:
        model.invoke(req(call_kind="parsing", question_id="q1", replicate=2))

    assert "question 'q1', replicate 2, call kind 'parsing'" in str(caught.value)
    assert caught.value.replicate == 2


def test_record_on_miss_records_each_replicate_and_the_entry_names_it(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    inner = ScriptedModel("right", "wrong", "right")
    model = ReplayingModel(inner, ReplayStore(path, "replay"))

    answers = [model.invoke(req(replicate=n)).text for n in (1, 2, 3)]

    assert answers == ["right", "wrong", "right"] and len(inner.calls) == 3
    assert sorted(entry["replicate"] for entry in entries(path)) == [1, 2, 3]
    strict = ReplayingModel(None, ReplayStore(path, "strict"), identity=inner.identity)
    assert [strict.invoke(req(replicate=n)).text for n in (1, 2, 3)] == answers
    assert strict.invoke(req()).text == "right"  # a run without replicates: replicate 1's


def test_an_entry_recorded_before_replicates_were_keyed_answers_replicate_1_only(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.jsonl"
    old = {
        "key": legacy_key(IDENTITY, "What is 2+2?", "answer_generation"),
        "call_kind": "answer_generation", "identity": IDENTITY,
        "request": {"messages": [{"role": "user", "content": "What is 2+2?"}],
                    "json_schema": None, "schema_name": None},
        "reply": {"text": "4", "usage": {"input_tokens": 3, "output_tokens": 1}, "model": "m1"},
        "recorded_at": "2026-01-01T00:00:00+00:00",
    }  # fmt: skip
    path.write_text(json.dumps(old) + "\n", "utf-8")
    model = ReplayingModel(None, ReplayStore(path, "strict"), identity=IDENTITY)

    assert model.invoke(req()).text == model.invoke(req(replicate=1)).text == "4"
    with pytest.raises(ReplayMiss, match="replicate 3, call kind 'answer_generation'"):
        model.invoke(req(question_id="q1", replicate=3))


class Choice(BaseModel):
    value: str


def test_the_service_of_a_replicate_puts_it_in_every_request() -> None:
    inner = ScriptedModel("plain", '{"value": "x"}')
    service = LLMService(inner).for_question("q1", 2)

    service.chat([ChatMessage("user", "hi")], call_kind="answer_generation")
    service.parse([ChatMessage("user", "hi")], Choice, call_kind="parsing")

    assert [(r.question_id, r.replicate) for r in inner.calls] == [("q1", 2), ("q1", 2)]


class ScriptedAgent:
    """An agent port answering from a script and recording the run configs it got."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.configs: list[AgentRunConfig] = []

    def run(self, messages: Sequence[ChatMessage], config: AgentRunConfig) -> AgentResult:
        self.configs.append(config)
        return AgentResult(self.answers[len(self.configs) - 1], turns=1)


def test_agent_runs_of_each_replicate_are_recorded_and_replayed_apart(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    agent = ScriptedAgent("right", "wrong")
    pair = ModelPairLLMs(
        LLMService(ScriptedModel()), LLMService(ScriptedModel()), LLMService(ScriptedModel()),
        answering_agent=ReplayingAgent(agent, ReplayStore(path, "replay"), IDENTITY),
    )  # fmt: skip
    messages = [ChatMessage("user", "Find it")]
    config = AgentRunConfig("answer_generation", question_id="q1")

    def answers(ports: ModelPairLLMs) -> list[str]:
        runs = [ports.for_question("q1", n).answering_agent for n in (1, 2)]
        return [run.run(messages, config).final_response for run in runs if run is not None]

    assert answers(pair) == ["right", "wrong"]
    assert [c.replicate for c in agent.configs] == [1, 2]
    strict = replace(
        pair, answering_agent=ReplayingAgent(None, ReplayStore(path, "strict"), IDENTITY)
    )
    assert answers(strict) == ["right", "wrong"]
    third = strict.for_question("q1", 3).answering_agent
    assert third is not None
    with pytest.raises(ReplayMiss, match="question 'q1', replicate 3, call kind 'answer_gen"):
        third.run(messages, config)
