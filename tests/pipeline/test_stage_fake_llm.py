"""The scripted fake model the stage tests rely on (tests/support/fake_llm.py)."""

from __future__ import annotations

import pytest

from pytest_karenina.checkpoint import Benchmark
from pytest_karenina.llm.ports import ChatMessage, ModelRequest
from pytest_karenina.pipeline import run_verification
from tests.pipeline.pipeline_helpers import CLASSIC
from tests.support.fake_llm import (
    DEFAULT_USAGE,
    FakeLLM,
    UnscriptedCall,
    fake_config,
    fake_factory,
    question,
)


def request(text: str, call_kind: str = "parsing") -> ModelRequest:
    return ModelRequest((ChatMessage("system", "rules"), ChatMessage("user", text)), call_kind)


def test_rules_match_by_call_kind_and_substring_in_order() -> None:
    fake = FakeLLM()
    fake.on("parsing", reply="italy", contains=["Rome", "capital"])
    fake.on("parsing", reply="any parse")
    fake.on(reply="anything else")
    assert fake.invoke(request("the capital is Rome")).text == "italy"
    assert fake.invoke(request("Rome")).text == "any parse"
    assert fake.invoke(request("Rome", "abstention_check")).text == "anything else"
    assert fake.kinds() == ["parsing", "parsing", "abstention_check"]
    assert fake.invoke(request("x")).usage == DEFAULT_USAGE


def test_times_limits_a_rule_then_the_next_one_answers() -> None:
    fake = FakeLLM().malformed("parsing", "bad", times=2).on("parsing", reply="{}")
    assert [fake.invoke(request("x")).text for _ in range(3)] == ["bad", "bad", "{}"]


def test_scripted_exception_is_raised_and_the_request_recorded() -> None:
    fake = FakeLLM().fail("parsing", RuntimeError("boom"))
    with pytest.raises(RuntimeError, match="boom"):
        fake.invoke(request("x"))
    assert fake.count("parsing") == 1


def test_unscripted_request_is_recorded_and_refused() -> None:
    fake = FakeLLM()
    with pytest.raises(UnscriptedCall, match="embedding_check"):
        fake.invoke(request("x", "embedding_check"))
    assert [r.call_kind for r in fake.unscripted] == ["embedding_check"]
    with pytest.raises(AssertionError):
        fake.assert_all_scripted()


def test_unknown_call_kind_is_a_typo() -> None:
    with pytest.raises(ValueError, match="unknown call kind"):
        FakeLLM().on("parse", reply="{}")


def test_replies_routed_by_question_text_in_a_real_run() -> None:
    # Two questions, one judge: the parse is chosen by what the request says, not by order.
    france = question(CLASSIC)
    spain = question(CLASSIC, text="What is the capital of Spain?")
    config = fake_config()
    fake = FakeLLM()
    fake.answer("Paris.", contains="France").answer("Madrid.", contains="Spain")
    fake.parse_as({"capital": "Paris"}, contains="Paris.")
    fake.parse_as({"capital": "Madrid"}, contains="Madrid.")
    results = run_verification(
        Benchmark(name="capitals", questions=[spain, france]),
        config,
        llm=fake_factory(config, fake),
    ).results
    parsed = [r.template.parsed_llm_response if r.template else None for r in results]
    assert parsed == [{"capital": "Madrid"}, {"capital": "Paris"}]
    assert [r.verify_result for r in results] == [False, True]
    fake.assert_all_scripted()
    models = fake.models_for("parsing")
    assert [m.id if m else None for m in models] == ["judge", "judge"]
