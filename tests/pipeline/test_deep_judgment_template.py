"""Template deep judgment's calls with a scripted judge: excerpts, retries with feedback,
reasoning, and the attributes a template offers."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from pytest_karenina.llm.ports import (
    ChatMessage,
    ChatResponse,
    LLMCallError,
    StructuredResponse,
    Usage,
)
from pytest_karenina.pipeline.deep_judgment.calls import (
    DeepJudgmentCalls,
    ExcerptSettings,
    excerpt_attributes,
    gather_excerpts,
    reason,
)
from pytest_karenina.pipeline.deep_judgment.template import deep_parse
from pytest_karenina.templates import compile_template
from pytest_karenina.templates.extraction import relaxed_class

QUESTION = "When was the first moon landing and who commanded the mission?"
RESPONSE = (
    "The first moon landing occurred on July 20, 1969, as part of NASA's Apollo 11 mission. "
    "The mission was commanded by Neil Armstrong."
)
ATTRIBUTES = {"year": "The year of the landing", "commander": "Who commanded the mission"}


class ScriptedJudge:
    """A chat port answering from a list, recording every request."""

    def __init__(self, *replies: Any) -> None:
        self.replies = list(replies)
        self.requests: list[tuple[str, list[ChatMessage]]] = []

    def parse(
        self,
        messages: Sequence[ChatMessage],
        schema: type[Any],
        *,
        call_kind: str,
        json_schema: dict[str, Any] | None = None,
    ) -> StructuredResponse[Any]:
        self.requests.append((call_kind, list(messages)))
        data = self.replies.pop(0)
        value = schema.model_validate(data)
        return StructuredResponse(value, json.dumps(data), Usage(input_tokens=7, output_tokens=3))

    def chat(self, messages: Sequence[ChatMessage], *, call_kind: str) -> ChatResponse:
        self.requests.append((call_kind, list(messages)))
        reply = self.replies.pop(0)
        text = reply if isinstance(reply, str) else json.dumps(reply)
        return ChatResponse(text=text, usage=Usage(input_tokens=10, output_tokens=5))


def _quote(text: str, confidence: str = "high") -> dict[str, str]:
    return {"text": text, "confidence": confidence}


def test_the_attributes_are_the_judge_schema_fields_but_id_correct_and_regex() -> None:
    code = """
class Answer(BaseAnswer):
    year: int = Field(description="The year of the landing")
    commander: str = Field(description="Who commanded the mission")
    used_search: bool = VerifiedField(description="searched", ground_truth=True,
                                      verify_with=TraceContains(substring="search("))

    def model_post_init(self, __context):
        self.correct = {"year": 1969, "commander": "Neil Armstrong"}
        self.regex = {"mission": {"pattern": r"Apollo \\d+", "expected": 1, "match_type": "count"}}

    def verify(self) -> bool:
        return True
"""
    assert excerpt_attributes(compile_template(code)) == ATTRIBUTES


def test_rejected_quotes_are_sent_back_and_the_retry_is_counted() -> None:
    judge = ScriptedJudge(
        {"year": [_quote("It happened in 1972")], "commander": [_quote("Neil Armstrong")]},
        {"year": [_quote("July 20, 1969")], "commander": [_quote("Neil Armstrong")]},
    )
    calls = DeepJudgmentCalls()

    gathered = gather_excerpts(judge, QUESTION, RESPONSE, ATTRIBUTES, ExcerptSettings(), calls)

    assert gathered.retries == 1 and gathered.check.missing == []
    assert [e.text for e in gathered.check.accepted["year"]] == ["July 20, 1969"]
    assert calls.count == 2
    assert calls.usage["deep_judgment_excerpts"] == Usage(input_tokens=20, output_tokens=10)
    (_, first), (_, second) = judge.requests
    assert second[: len(first)] == first and second[-2].role == "assistant"
    assert "<error>" in second[-1].content
    assert '- year: "It happened in 1972" (similarity' in second[-1].content
    assert "<response_to_analyze>\n" + RESPONSE in first[1].content
    assert "- year: The year of the landing" in first[0].content
    assert "up to 3 quotes" in first[0].content


def test_missing_attributes_come_from_the_final_attempt_only() -> None:
    judge = ScriptedJudge(
        {"year": [_quote("1969")], "commander": [_quote("Buzz Aldrin led it")]},
        {"year": [_quote("in 1972")], "commander": [_quote("Neil Armstrong")]},
    )
    gathered = gather_excerpts(
        judge, QUESTION, RESPONSE, ATTRIBUTES, ExcerptSettings(retry_attempts=1),
        DeepJudgmentCalls(),
    )  # fmt: skip
    assert gathered.check.missing == ["year"]  # year was fine on the first attempt only
    assert [e.text for e in gathered.check.rejected["year"]] == ["in 1972"]


def test_a_reply_that_is_not_json_is_asked_again_and_fails_on_the_last_attempt() -> None:
    judge = ScriptedJudge("I cannot do that.", {"year": [_quote("1969")], "commander": []})
    gathered = gather_excerpts(
        judge, QUESTION, RESPONSE, ATTRIBUTES, ExcerptSettings(retry_attempts=1),
        DeepJudgmentCalls(),
    )  # fmt: skip
    assert gathered.check.missing == ["commander"]
    assert "not a JSON object" in judge.requests[1][1][-1].content

    with pytest.raises(LLMCallError, match="not a JSON object"):
        gather_excerpts(
            ScriptedJudge("no", "still no"), QUESTION, RESPONSE, ATTRIBUTES,
            ExcerptSettings(retry_attempts=1), DeepJudgmentCalls(),
        )  # fmt: skip


def test_reasoning_from_excerpts_and_from_the_response() -> None:
    calls = DeepJudgmentCalls()
    excerpts = {"year": [{"text": "1969", "confidence": "high", "similarity_score": 1.0}],
                "commander": []}  # fmt: skip
    judge = ScriptedJudge(
        {"year": "The response dates it to 1969.", "commander": {"reasoning": "Not quoted."}},
        '```json\n{"year": "1969, stated plainly."}\n```',
        "unreadable",
    )

    found, warnings = reason(judge, QUESTION, ATTRIBUTES, calls, excerpts=excerpts)
    assert found == {"year": "The response dates it to 1969.", "commander": "Not quoted."}
    assert warnings == []
    assert 'Excerpt 1: "1969" (confidence high, similarity 1.00)' in judge.requests[0][1][1].content
    assert "(no evidence in the response)" in judge.requests[0][1][1].content

    found, _ = reason(judge, QUESTION, ATTRIBUTES, calls, response=RESPONSE)
    assert found == {"year": "1969, stated plainly."}
    assert RESPONSE in judge.requests[1][1][1].content

    found, warnings = reason(judge, QUESTION, ATTRIBUTES, calls, response=RESPONSE)
    assert found == {} and "not a JSON object" in warnings[0]
    assert calls.count == 3 and calls.usage["deep_judgment_reasoning"].input_tokens == 30


MOON = """
class Answer(BaseAnswer):
    year: int = Field(description="The year of the landing")
    commander: str = Field(description="Who commanded the mission")

    def model_post_init(self, __context):
        self.correct = {"year": 1969, "commander": "Neil Armstrong"}

    def verify(self) -> bool:
        return self.year == self.correct["year"]
"""


def test_a_full_deep_parse_quotes_reasons_then_parses_from_the_reasoning() -> None:
    answer = compile_template(MOON)
    judge = ScriptedJudge(
        {"year": [_quote("July 20, 1969")], "commander": [_quote("Neil Armstrong")]},
        {"year": "Dated July 20, 1969.", "commander": "Armstrong commanded."},
        {"year": 1969, "commander": "Neil Armstrong"},
    )

    outcome = deep_parse(
        judge, judge, QUESTION, RESPONSE, answer, relaxed_class(answer),
        mode="full", settings=ExcerptSettings(),
    )  # fmt: skip

    assert [kind for kind, _ in judge.requests] == [
        "deep_judgment_excerpts", "deep_judgment_reasoning", "parsing",
    ]  # fmt: skip
    assert outcome.reply.model_dump()["year"] == 1969
    section = outcome.section_fields()
    assert section["deep_judgment_stages_completed"] == ["excerpts", "reasoning", "parameters"]
    assert section["deep_judgment_model_calls"] == 3
    assert section["attributes_without_excerpts"] == []
    assert section["extracted_excerpts"]["year"] == [
        {"text": "July 20, 1969", "confidence": "high", "similarity_score": 1.0}
    ]
    final = judge.requests[2][1][1].content
    assert "Reasoning Traces" in final and "- year: Dated July 20, 1969." in final
    assert RESPONSE not in final  # the parse reads the reasoning, not the response
    assert outcome.calls.usage["parsing"] == Usage(input_tokens=7, output_tokens=3)


def test_reasoning_only_makes_two_calls_and_quotes_nothing() -> None:
    answer = compile_template(MOON)
    judge = ScriptedJudge(
        {"year": "1969.", "commander": "Neil Armstrong."},
        {"year": 1969, "commander": "Neil Armstrong"},
    )
    outcome = deep_parse(
        judge, judge, QUESTION, RESPONSE, answer, relaxed_class(answer),
        mode="reasoning_only", settings=ExcerptSettings(),
    )  # fmt: skip
    section = outcome.section_fields()
    assert section["deep_judgment_stages_completed"] == ["reasoning", "parameters"]
    assert section["deep_judgment_model_calls"] == 2
    assert section["extracted_excerpts"] == {} and section["attributes_without_excerpts"] == []


def test_search_rates_every_quote_and_an_attribute_takes_its_worst_risk() -> None:
    answer = compile_template(MOON)
    judge = ScriptedJudge(
        {
            "year": [_quote("July 20, 1969"), _quote("1969")],
            "commander": [_quote("Neil Armstrong")],
        },
        {
            "excerpt_assessments": [
                {"excerpt_id": "year-1", "hallucination_risk": "none", "justification": "ok"},
                {"excerpt_id": "year-2", "hallucination_risk": "LOW", "justification": "fine"},
            ]  # commander-1 is not rated: high
        },
        {"year": "1969.", "commander": "Armstrong."},
        {"year": 1969, "commander": "Neil Armstrong"},
    )
    searched: list[list[str]] = []

    def search(queries: list[str]) -> list[list[dict[str, str]]]:
        searched.append(queries)
        return [[{"title": "NASA", "content": f"About {q}", "url": "https://nasa.gov"}]
                for q in queries]  # fmt: skip

    outcome = deep_parse(
        judge, judge, QUESTION, RESPONSE, answer, relaxed_class(answer),
        mode="full", settings=ExcerptSettings(), search=search,
    )  # fmt: skip

    assert searched == [["July 20, 1969", "1969", "Neil Armstrong"]]
    section = outcome.section_fields()
    assert section["deep_judgment_search_enabled"] is True
    assert section["hallucination_risk_assessment"] == {"year": "low", "commander": "high"}
    assert section["deep_judgment_stages_completed"] == [
        "excerpts", "excerpt_hallucination_assessment", "reasoning", "parameters",
    ]  # fmt: skip
    first = section["extracted_excerpts"]["year"][0]
    assert first["search_results"][0]["content"] == "About July 20, 1969"
    assert (first["hallucination_risk"], first["hallucination_justification"]) == ("none", "ok")
    prompt = judge.requests[1][1][1].content
    assert '<excerpt id="year-2" attribute="year">' in prompt and "About 1969" in prompt
    assert outcome.calls.usage["deep_judgment_hallucination_assessment"].input_tokens == 10


def test_a_failing_search_is_a_warning_and_unknown_tools_are_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pytest_karenina.pipeline.deep_judgment.search import (
        SearchUnavailable,
        attach_search_results,
        resolve_search_tool,
    )

    def broken(queries: list[str]) -> list[object]:
        raise TimeoutError("search backend down")

    excerpts = {"year": [{"text": "1969", "confidence": "high", "similarity_score": 1.0}]}
    (warning,) = attach_search_results(broken, excerpts)
    assert "TimeoutError: search backend down" in warning
    assert "search_results" not in excerpts["year"][0]
    with pytest.raises(SearchUnavailable, match="pytest_karenina_search_tool"):
        resolve_search_tool("our-index")
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    with pytest.raises(SearchUnavailable, match=r"tavily-python|TAVILY_API_KEY"):
        resolve_search_tool("Tavily")
