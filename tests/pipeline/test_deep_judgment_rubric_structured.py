"""Rubric deep judgment's JSON calls (excerpts, the hallucination rating, the verdict) ask for
their reply class with native structured output where the judge has it, as Karenina does;
stores recorded while they were plain calls still replay strictly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from pytest_karenina.llm.ports import ChatMessage, ChatResponse, ModelRequest
from pytest_karenina.llm.replay import ReplayingModel, ReplayMiss, ReplayStore, replay_key
from pytest_karenina.llm.service import LLMService
from pytest_karenina.pipeline.deep_judgment.calls import ask_json
from pytest_karenina.pipeline.deep_judgment.rubric_trait import TraitSettings, judge_trait
from pytest_karenina.pipeline.llm_stack import LLMStack
from pytest_karenina.prompts.deep_judgment_rubric import (
    BooleanVerdictReply,
    ExcerptRatingsReply,
    ScoreVerdictReply,
    TraitExcerptsReply,
)
from pytest_karenina.results import VerificationResult
from tests.pipeline.test_stage_deep_judgment_rubric import (
    DEPTH,
    EXCERPTS,
    GROUNDED,
    REASONING,
    VERDICT,
    ask,
    judge,
    script,
)
from tests.support.fake_llm import FakeLLM, fake_config, run_one

RATING = "<excerpt id="


def kind_of(request: ModelRequest) -> str:
    text = "\n".join(m.content for m in request.messages)
    for marker, name in ((EXCERPTS, "excerpts"), (REASONING, "reasoning"),
                         (VERDICT, "verdict"), (RATING, "rating")):  # fmt: skip
        if marker in text:
            return name
    return "other"


def schemas_sent(fake: FakeLLM) -> list[tuple[str, str | None, bool]]:
    """``(call, schema name, has json_schema)`` of every rubric call, in order."""
    return [
        (kind_of(r), r.schema_name, r.json_schema is not None)
        for r in fake.calls("rubric_evaluation")
    ]


def scripted() -> FakeLLM:
    fake = script(judge(), "Grounded", ["capital of France is Paris"], {"result": True})
    fake.on_json(
        "rubric_evaluation",
        {"excerpt_assessments": [
            {"excerpt_id": "Grounded-1", "hallucination_risk": "low", "justification": "ok"},
        ]},
        contains=RATING,
    )  # fmt: skip
    return script(fake, "Depth", ["sits on the river Seine"], {"score": 2})


def run(fake: FakeLLM | LLMStack, config: Any) -> VerificationResult:
    return run_one(ask([GROUNDED, DEPTH]), config, fake)


def config(**fields: Any) -> Any:
    search = {"Grounded": {"search_enabled": True}, "Depth": {}}
    return fake_config(
        evaluation_mode="template_and_rubric",
        deep_judgment_rubric_mode="custom",
        deep_judgment_rubric_config={"global": search},
        deep_judgment_rubric_search_tool=lambda queries: [["Paris is the capital"]] * len(queries),
        **fields,
    )


def test_the_json_calls_ask_for_their_reply_class_natively() -> None:
    fake = scripted()

    result = run(fake, config())

    fake.assert_all_scripted()
    assert result.rubric is not None
    assert result.rubric.llm_trait_scores == {"Grounded": True, "Depth": 2}
    assert schemas_sent(fake) == [
        ("excerpts", "TraitExcerptsReply", True),
        ("rating", "ExcerptRatingsReply", True),
        ("reasoning", None, False),  # free text, as in Karenina
        ("verdict", "BooleanVerdictReply", True),
        ("excerpts", "TraitExcerptsReply", True),
        ("reasoning", None, False),
        ("verdict", "ScoreVerdictReply", True),
    ]
    excerpts = next(r for r in fake.calls("rubric_evaluation") if kind_of(r) == "excerpts")
    assert excerpts.json_schema == TraitExcerptsReply.model_json_schema()
    section = result.deep_judgment_rubric
    assert section is not None and section.total_deep_judgment_model_calls == 7


def test_a_judge_without_native_output_sends_the_same_calls_plain() -> None:
    fake = script(FakeLLM(), "Grounded", ["capital of France is Paris"], {"result": True})
    service = LLMService(fake, native_structured=False)
    answer = "The capital of France is Paris."

    outcome = judge_trait(service, GROUNDED, answer, TraitSettings())

    assert outcome.value is True and outcome.model_calls == 3
    assert all(r.json_schema is None and r.schema_name is None for r in fake.requests)


def plain_json(
    self: LLMService, messages: Any, schema: type[BaseModel], *, call_kind: str
) -> ChatResponse:
    return self.chat(messages, call_kind=call_kind)


def test_a_store_recorded_with_plain_calls_still_replays_strictly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stores recorded before these calls were structured hold them as plain calls: strict
    replay finds them under the plain request's key."""
    store = tmp_path / "calls.jsonl"
    with monkeypatch.context() as before:  # the judge as it was: JSON asked for in words only
        before.setattr(LLMService, "chat_json", plain_json)
        recorded = run(LLMStack(config(), replay=ReplayStore(store, "record"),
                                adapter_factory=scripted().for_model), config())  # fmt: skip
    offline = FakeLLM()  # answers nothing: every call must come from the store

    replayed = run(LLMStack(config(), replay=ReplayStore(store, "strict"),
                            adapter_factory=offline.for_model), config())  # fmt: skip

    assert offline.requests == [] and replayed.metadata.error is None
    assert replayed.rubric is not None and recorded.rubric is not None
    assert replayed.rubric.llm_trait_scores == recorded.rubric.llm_trait_scores
    assert replayed.deep_judgment_rubric == recorded.deep_judgment_rubric


def test_a_miss_of_both_keys_names_the_structured_request(tmp_path: Path) -> None:
    store = ReplayStore(tmp_path / "empty.jsonl", "strict")
    identity = {"adapter": "fake", "model": "judge"}
    service = LLMService(ReplayingModel(None, store, identity=identity))
    messages = [ChatMessage("system", "Reply with JSON."), ChatMessage("user", "Verdict?")]

    with pytest.raises(ReplayMiss) as missed:
        ask_json(service, messages, BooleanVerdictReply, call_kind="rubric_evaluation")

    structured = ModelRequest(
        tuple(messages), "rubric_evaluation",
        json_schema=BooleanVerdictReply.model_json_schema(), schema_name="BooleanVerdictReply",
    )  # fmt: skip
    assert replay_key(identity, structured) in str(missed.value)


def test_the_reply_classes_match_what_the_prompts_ask_for() -> None:
    assert (
        TraitExcerptsReply.model_validate({"excerpts": [{"text": "a quote", "confidence": "high"}]})
        .excerpts[0]
        .confidence
        == "high"
    )
    assert ExcerptRatingsReply.model_validate(
        {"excerpt_assessments": [
            {"excerpt_id": "x-1", "hallucination_risk": "none", "justification": "j"},
        ]}
    ).excerpt_assessments[0].hallucination_risk == "none"  # fmt: skip
    assert BooleanVerdictReply(result=False).result is False
    assert ScoreVerdictReply(score=0).score == 0
