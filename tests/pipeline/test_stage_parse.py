"""ParseTemplate's judge calls (seed stage 7; spec 2.8, 5.5, 6.3): native structured output
first, a plain retry with a correction after a malformed reply, and no ground truth ever
shown to any model.
"""

from __future__ import annotations

from tests.pipeline.pipeline_helpers import ANSWER, CANARY, CANARY_TEMPLATE, CLASSIC
from tests.support.fake_llm import FakeLLM, fake_config, question, request_text, run_one

PARIS = {"capital": "Paris"}


def test_first_parse_attempt_asks_for_native_structured_output() -> None:
    config = fake_config()
    fake = FakeLLM().answer(ANSWER).parse_as(PARIS)
    result = run_one(question(CLASSIC), config, fake)
    (request,) = fake.calls("parsing")
    assert request.json_schema is not None
    assert "capital" in request.json_schema["properties"]
    assert request.schema_name is not None
    # The answering model is never asked for structured output.
    (generation,) = fake.calls("answer_generation")
    assert generation.json_schema is None
    assert result.verify_result is True


def test_malformed_reply_triggers_a_plain_retry_with_a_correction() -> None:
    config = fake_config()
    bad = "Here you go: capital = Paris"
    fake = FakeLLM().answer(ANSWER).malformed("parsing", bad, times=1).parse_as(PARIS)

    result = run_one(question(CLASSIC), config, fake)

    first, second = fake.calls("parsing")
    assert first.json_schema is not None
    assert second.json_schema is None
    # The retry carries the conversation so far: the bad reply, then a correction.
    assert second.messages[0] == first.messages[0]
    assert second.messages[-2].role == "assistant"
    assert second.messages[-2].content == bad
    assert second.messages[-1].role == "user"
    assert second.messages[-1].content not in {m.content for m in first.messages}
    # The plain retry asks for JSON in the text, as it cannot rely on the schema option.
    assert '"capital"' in "\n".join(m.content for m in second.messages[:-2])
    assert result.verify_result is True
    assert result.metadata.error is None
    # Usage of both attempts is counted under "parsing".
    usage = result.template.usage_metadata if result.template else None
    assert usage is not None
    assert usage["parsing"]["total_tokens"] == 2 * usage["answer_generation"]["total_tokens"]


def test_json_that_does_not_validate_is_also_retried() -> None:
    config = fake_config()
    fake = FakeLLM().answer(ANSWER).on_json("parsing", {"capital": ["not", "a", "string"]}, times=1)
    fake.parse_as(PARIS)
    result = run_one(question(CLASSIC), config, fake)
    assert fake.count("parsing") == 2
    assert result.verify_result is True


def test_no_model_ever_sees_the_ground_truth() -> None:
    config = fake_config(abstention_enabled=True, sufficiency_enabled=True)
    item = question(
        CANARY_TEMPLATE,
        text="Which town was founded by the otters?",
        raw_answer=f"{CANARY}, founded 1771",
    )
    fake = FakeLLM().answer(f"{CANARY} was founded in 1771.")
    fake.abstention(False).sufficiency(True)
    fake.malformed("parsing", times=1).parse_as({"capital": CANARY, "founded": 1771})

    result = run_one(item, config, fake)

    assert result.verify_result is True
    judge_kinds = ("abstention_check", "sufficiency_check", "parsing")
    judge_requests = [request for kind in judge_kinds for request in fake.calls(kind)]
    assert len(judge_requests) == 4
    for request in judge_requests:
        # The canary only reaches the judge inside the answer text it must read.
        shown = request_text(request)
        shown = shown.replace(f"{CANARY} was founded in 1771.", "<answer>")
        assert CANARY not in shown, request.call_kind
        assert "1771" not in shown, request.call_kind
        assert CANARY not in str(request.json_schema or "")
    # Nor does the answering model see the reference answer.
    (generation,) = fake.calls("answer_generation")
    assert CANARY not in request_text(generation)
