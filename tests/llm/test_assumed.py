"""Assumed replies (``llm/assumed.py``): what an estimate puts in place of an unrecorded call,
through the real structured-output service and a strict replay store."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from pytest_karenina.config.model import ModelConfig
from pytest_karenina.llm.assumed import (
    AnswerMisses,
    AssumedReplies,
    AssumedTally,
    approx_tokens,
    filler_text,
    request_tokens,
    schema_instance,
)
from pytest_karenina.llm.ports import ChatMessage, LLMCallError, ModelReply, ModelRequest, Usage
from pytest_karenina.llm.replay import ReplayingModel, ReplayStore
from pytest_karenina.llm.service import LLMService
from pytest_karenina.prompts.abstention import AbstentionVerdict

MODEL = ModelConfig(id="judge", model_provider="openai", model_name="gpt-4.1-mini",
                    interface="langchain")  # fmt: skip
MESSAGES = [ChatMessage("system", "You grade."), ChatMessage("user", "Is it Paris? It is.")]


class Inner(BaseModel):
    tags: list[str] = Field(min_length=2)
    when: datetime.date


class Reply(BaseModel):
    """Every kind of field a reply schema has."""

    choice: Literal["low", "high"]
    score: int = Field(ge=1, le=5)
    weight: float = Field(gt=0.5)
    maybe: str | None
    flag: bool
    inner: Inner
    items: list[Inner]


def test_counting_is_four_characters_a_token() -> None:
    assert [approx_tokens(text) for text in ("", "a", "abcd", "abcde")] == [0, 1, 1, 2]
    assert [approx_tokens(filler_text(n)) for n in (0, 1, 7, 300)] == [0, 1, 7, 300]
    assert filler_text(300).endswith(".")  # stripping the quoted answer keeps it whole
    request = ModelRequest(tuple(MESSAGES), "parsing", json_schema={"type": "object"})
    schema = approx_tokens('{"type":"object"}')
    assert request_tokens(request) == approx_tokens("You grade.") + 4 + 5 + 4 + schema


def test_a_schema_instance_validates_as_its_model() -> None:
    value = schema_instance(Reply.model_json_schema())
    parsed = Reply.model_validate(value)
    assert (parsed.choice, parsed.score, parsed.flag) == ("low", 1, False)
    assert parsed.weight > 0.5 and parsed.maybe is not None
    assert len(parsed.inner.tags) == 2 and len(parsed.items) == 1


def test_structured_calls_get_the_schema_and_checks_their_ordinary_path() -> None:
    tally = AssumedTally()
    overrides = {"abstention_check": {"abstention_detected": False}}
    judge = LLMService(AssumedReplies(MODEL, False, tally, 300, overrides), native_structured=True)
    judge = judge.for_question("q1", replicate=2)

    verdict = judge.parse(MESSAGES, AbstentionVerdict, call_kind="abstention_check")
    reply = judge.parse(MESSAGES, Reply, call_kind="parsing")

    assert verdict.value.abstention_detected is False and verdict.attempts == 1
    assert reply.value.score == 1
    (first, second) = tally.calls()
    assert (first.answering, first.label, first.key) == (False, "langchain:gpt-4.1-mini (judge)",
                                                         ("q1", 2))  # fmt: skip
    assert second.output_tokens == approx_tokens(reply.raw_text) == reply.usage.output_tokens
    schema = json.dumps(Reply.model_json_schema(), separators=(",", ":"))
    assert second.input_tokens == request_tokens(ModelRequest(tuple(MESSAGES), "parsing")) + (
        approx_tokens(schema)
    )


def test_an_answer_is_filler_of_the_stated_length() -> None:
    tally = AssumedTally()
    answering = LLMService(AssumedReplies(MODEL, True, tally, 120), native_structured=False)
    reply = answering.chat(MESSAGES, call_kind="answer_generation")
    assert reply.text == filler_text(120) and reply.usage.output_tokens == 120
    assert tally.calls()[0].answering


class Strict(BaseModel):
    code: str = Field(pattern=r"^[A-Z]{3}$")


def test_a_reply_that_does_not_fit_ends_the_call_instead_of_retrying() -> None:
    tally = AssumedTally()
    judge = LLMService(AssumedReplies(MODEL, False, tally), native_structured=True)
    with pytest.raises(LLMCallError, match="assumed reply did not fit"):
        judge.parse(MESSAGES, Strict, call_kind="parsing")
    assert len(tally.calls()) == 1 and tally.refused == 1


class Paris:
    """A model that says Paris (to record a reply)."""

    @property
    def replay_identity(self) -> dict[str, Any]:
        return {"model": "paris"}

    def invoke(self, request: ModelRequest) -> ModelReply:
        return ModelReply("It is Paris.", Usage(10, 3))


def test_misses_of_a_strict_store_are_assumed_and_recordings_replayed(tmp_path: Path) -> None:
    store = ReplayStore(tmp_path / "store.jsonl", "record")
    request = ModelRequest(tuple(MESSAGES), "answer_generation", question_id="q1")
    ReplayingModel(Paris(), store).invoke(request)
    strict = ReplayStore(tmp_path / "store.jsonl", "strict")
    tally = AssumedTally()
    model = AnswerMisses(ReplayingModel(None, strict, identity=Paris().replay_identity),
                         AssumedReplies(MODEL, True, tally, 50))  # fmt: skip

    assert model.invoke(request).text == "It is Paris."
    other = ModelRequest((ChatMessage("user", "Is it Rome?"),), "answer_generation")
    assert model.invoke(other).usage.output_tokens == 50
    assert [c.key for c in tally.calls()] == [(None, None)]
    assert strict.stats()["added"] == 0 and len(strict.stored_keys()) == 1
