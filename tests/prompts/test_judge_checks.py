"""Abstention, sufficiency and equivalence prompts; PromptConfig instruction lookup."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from pydantic import ValidationError

from pytest_karenina.llm.ports import ChatMessage
from pytest_karenina.prompts import (
    AbstentionVerdict,
    SufficiencyVerdict,
    abstention_messages,
    append_instructions,
    equivalence_messages,
    instructions_for,
    is_equivalent,
    sufficiency_messages,
)
from pytest_karenina.prompts.abstention import ABSTENTION_SYSTEM
from pytest_karenina.prompts.equivalence import EQUIVALENCE_SYSTEM
from pytest_karenina.prompts.sufficiency import SUFFICIENCY_SYSTEM

SCHEMA = {"properties": {"count": {"type": "integer"}}, "required": ["count"], "title": "Answer"}


def test_abstention_messages() -> None:
    system, user = abstention_messages("Q {x}?", "I cannot answer {that}.")
    assert system == ChatMessage("system", ABSTENTION_SYSTEM)
    assert "<original_question>\nQ {x}?\n</original_question>" in user.content
    assert "<model_response>\nI cannot answer {that}.\n</model_response>" in user.content
    assert "<output_format>" in system.content and '"abstention_detected"' in system.content
    assert system.content.index('"reasoning"') < system.content.index('"abstention_detected"')


def test_abstention_verdict_keeps_reasoning_first() -> None:
    assert list(AbstentionVerdict.model_fields) == ["reasoning", "abstention_detected"]
    verdict = AbstentionVerdict.model_validate({"abstention_detected": True, "reasoning": "r"})
    assert verdict.abstention_detected is True
    with pytest.raises(ValidationError):
        AbstentionVerdict.model_validate({"reasoning": "r"})


def test_sufficiency_messages_show_the_schema_with_indent_2() -> None:
    system, user = sufficiency_messages("Q?", "About 46.", SCHEMA)
    assert system.content == SUFFICIENCY_SYSTEM
    block = f"<template_schema>\n{json.dumps(SCHEMA, indent=2)}\n</template_schema>"
    assert block in user.content
    assert "<original_question>\nQ?\n</original_question>" in user.content
    assert "<model_response>\nAbout 46.\n</model_response>" in user.content
    assert list(SufficiencyVerdict.model_fields) == ["reasoning", "sufficient"]


@pytest.mark.parametrize("build", ["abstention", "sufficiency"])
def test_instructions_are_appended_to_the_system_text(build: str) -> None:
    if build == "abstention":
        plain = abstention_messages("Q?", "A.")
        extended = abstention_messages("Q?", "A.", instructions="Be strict.")
    else:
        plain = sufficiency_messages("Q?", "A.", SCHEMA)
        extended = sufficiency_messages("Q?", "A.", SCHEMA, instructions="Be strict.")
    assert extended[0].content == plain[0].content + "\n\nBe strict."
    assert extended[1] == plain[1]
    blank = abstention_messages("Q?", "A.", instructions="   ")
    assert blank[0].content == ABSTENTION_SYSTEM


def test_equivalence_messages_use_sorted_key_json() -> None:
    system, user = equivalence_messages("Which gene?", {"b": 2, "a": "x"}, {"a": "X", "b": 2})
    assert system.content == EQUIVALENCE_SYSTEM and "YES" in system.content
    expected_json = json.dumps({"a": "x", "b": 2}, indent=2, sort_keys=True)
    assert user.content.startswith("Question:\nWhich gene?\n\n")
    assert expected_json in user.content
    assert user.content.index("Expected response") < user.content.index("Model response")
    without = equivalence_messages(None, [1], [1])[1].content
    assert "Question:" not in without.split("Expected response")[0]


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [("YES", True), ("  yes, they match", True), ("Yes.", True), ("NO", False), ("", False)],
)
def test_is_equivalent(reply: str, verdict: bool) -> None:
    assert is_equivalent(reply) is verdict


def test_instructions_for_prefers_the_exact_task_then_the_family() -> None:
    config = SimpleNamespace(
        parsing="P",
        rubric_evaluation="R",
        rubric_llm_trait_batch="  ",
        deep_judgment="D",
        agentic_parsing=None,
    )
    assert instructions_for(config, "parsing") == "P"
    assert instructions_for(config, "rubric_llm_trait_batch") == "R"
    assert instructions_for(config, "dj_template_reasoning") == "D"
    assert instructions_for(config, "agentic_parsing_extraction") is None
    assert instructions_for(config, "abstention_detection") is None
    assert instructions_for(None, "parsing") is None


def test_append_instructions() -> None:
    assert append_instructions("S", "I") == "S\n\nI"
    assert append_instructions("", "I") == "I"
    assert append_instructions("S", None) == "S"
