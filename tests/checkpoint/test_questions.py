"""Questions and benchmark metadata: ids, properties, keywords and what saving writes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_karenina.checkpoint import (
    Benchmark,
    Person,
    Question,
    dump_checkpoint,
    generate_question_id,
    parse_checkpoint,
)
from tests.checkpoint.builders import add_question, document, first_item, prop


def reparsed(benchmark: Benchmark) -> Benchmark:
    return parse_checkpoint(json.dumps(dump_checkpoint(benchmark)))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "What is the capital of France?",
            "urn:uuid:question-what-is-the-capital-of-france-cb0b4aaf",
        ),
        ("What is 2+2?", "urn:uuid:question-what-is-2+2-"),
        ("Hello, World. Ok?", "urn:uuid:question-hello-world-ok-"),
        ("x" * 80, "urn:uuid:question-" + "x" * 50 + "-"),
    ],
)
def test_generated_ids_follow_karenina(text: str, expected: str) -> None:
    generated = generate_question_id(text)
    assert generated.startswith(expected)
    assert len(generated.rsplit("-", 1)[1]) == 8


@pytest.mark.parametrize("own_id", ["absent", "", None])
def test_question_without_id_gets_the_generated_id_and_it_is_saved(own_id: str | None) -> None:
    doc = document()
    if own_id == "absent":
        del doc["dataFeedElement"][0]["@id"]
    else:
        doc["dataFeedElement"][0]["@id"] = own_id
    first_item(doc)["text"] = "What is the capital of France?"
    benchmark = parse_checkpoint(doc)
    expected = "urn:uuid:question-what-is-the-capital-of-france-cb0b4aaf"
    assert benchmark.questions[0].id == expected
    assert dump_checkpoint(benchmark)["dataFeedElement"][0]["@id"] == expected
    assert benchmark.question(expected) is benchmark.questions[0]


def test_question_lookup_names_a_missing_id() -> None:
    benchmark = parse_checkpoint(document())
    with pytest.raises(KeyError, match="urn:nope"):
        benchmark.question("urn:nope")


def test_custom_properties_lose_every_custom_prefix_like_karenina() -> None:
    doc = document()
    first_item(doc)["additionalProperty"] = [
        prop("custom_difficulty", "hard"),
        prop("custom_my_custom_tag", [1, 2]),
        prop("custom_nested", {"a": {"b": None}}),
    ]
    benchmark = parse_checkpoint(doc)
    assert benchmark.questions[0].custom_metadata == {
        "difficulty": "hard",
        "my_tag": [1, 2],
        "nested": {"a": {"b": None}},
    }
    names = [
        p["name"]
        for p in dump_checkpoint(benchmark)["dataFeedElement"][0]["item"]["additionalProperty"]
    ]
    assert names == ["finished", "custom_difficulty", "custom_my_tag", "custom_nested"]
    assert reparsed(benchmark) == benchmark


@pytest.mark.parametrize(
    ("stored", "loaded"),
    [
        (
            json.dumps({"name": "Ada", "email": "ada@example.org"}),
            {"name": "Ada", "email": "ada@example.org"},
        ),
        (
            json.dumps([{"title": "Paper", "url": "https://x"}]),
            [{"title": "Paper", "url": "https://x"}],
        ),
        ("Ada Lovelace", "Ada Lovelace"),
        (json.dumps("42"), "42"),
        ({"already": "an object"}, {"already": "an object"}),
    ],
)
def test_json_string_properties_decode_and_round_trip(stored: Any, loaded: Any) -> None:
    doc = document()
    first_item(doc)["additionalProperty"] = [
        prop("author", stored),
        prop("sources", stored),
        prop("few_shot_examples", stored),
    ]
    benchmark = parse_checkpoint(doc)
    question = benchmark.questions[0]
    assert (question.author, question.sources, question.few_shot_examples) == (loaded,) * 3
    written = {
        p["name"]: p["value"]
        for p in dump_checkpoint(benchmark)["dataFeedElement"][0]["item"]["additionalProperty"]
    }
    assert isinstance(written["author"], str)
    assert reparsed(benchmark) == benchmark


def test_other_question_properties_are_kept_in_order() -> None:
    doc = document()
    first_item(doc)["additionalProperty"] = [
        prop("zeta", 1),
        prop("finished", True),
        prop("answer_notes", "mention units"),
        prop("workspace_path", "ws/q1"),
        prop("alpha", {"x": [1]}),
        {"@type": "PropertyValue", "name": "no_value"},
    ]
    benchmark = parse_checkpoint(doc)
    question = benchmark.questions[0]
    assert question.finished is True
    assert (question.answer_notes, question.workspace_path) == ("mention units", "ws/q1")
    assert list(question.extra_properties.items()) == [
        ("zeta", 1),
        ("alpha", {"x": [1]}),
        ("no_value", None),
    ]
    written = dump_checkpoint(benchmark)["dataFeedElement"][0]["item"]["additionalProperty"]
    assert written[-1] == {"@type": "PropertyValue", "name": "no_value"}
    assert reparsed(benchmark) == benchmark


def test_legacy_item_keywords_are_used_only_when_the_question_has_none() -> None:
    doc = document()
    doc["dataFeedElement"][0]["keywords"] = ["legacy"]
    assert parse_checkpoint(doc).questions[0].keywords == ["arithmetic", "math"]
    first_item(doc)["keywords"] = []
    benchmark = parse_checkpoint(doc)
    assert benchmark.questions[0].keywords == ["legacy"]
    element = dump_checkpoint(benchmark)["dataFeedElement"][0]
    assert "keywords" not in element
    assert element["item"]["keywords"] == ["legacy"]


def test_node_ids_code_repository_and_dates_are_kept() -> None:
    doc = document()
    first_item(doc)["hasPart"]["codeRepository"] = "karenina-benchmarks"
    del first_item(doc)["acceptedAnswer"]["@id"]
    question = parse_checkpoint(doc).questions[0]
    assert question.jsonld_ids.question == "urn:karenina:test:q001-question"
    assert question.jsonld_ids.answer is None
    assert question.code_repository == "karenina-benchmarks"
    assert (question.date_created, question.date_modified) == ("2025-01-11T00:00:00Z",) * 2
    item = dump_checkpoint(parse_checkpoint(doc))["dataFeedElement"][0]["item"]
    assert list(item["hasPart"])[:2] == ["@type", "@id"]
    assert "@id" not in item["acceptedAnswer"]
    assert item["hasPart"]["codeRepository"] == "karenina-benchmarks"


def test_unknown_keys_are_ignored_on_load_and_not_written() -> None:
    doc = document()
    doc["x-root"] = 1
    doc["dataFeedElement"][0]["x-feed"] = 2
    first_item(doc)["x-item"] = 3
    first_item(doc)["hasPart"]["x-code"] = 4
    written = json.dumps(dump_checkpoint(parse_checkpoint(doc)))
    assert "x-root" not in written and "x-feed" not in written
    assert "x-item" not in written and "x-code" not in written


def test_root_metadata_person_creator_properties_and_scenarios() -> None:
    doc = document()
    doc["creator"] = {"@type": "Person", "name": "Ada", "email": "ada@example.org"}
    doc["hasPart"] = [{"@type": "Scenario", "name": "s1"}]
    doc["additionalProperty"] = [prop("benchmark_format_version", "3.0.0-jsonld")]
    del doc["version"]
    benchmark = parse_checkpoint(doc)
    assert benchmark.creator == Person(name="Ada", email="ada@example.org")
    assert benchmark.version is None
    assert benchmark.scenarios == [{"@type": "Scenario", "name": "s1"}]
    assert benchmark.properties == {"benchmark_format_version": "3.0.0-jsonld"}
    saved = dump_checkpoint(benchmark)
    assert saved["creator"] == {"@type": "Person", "name": "Ada", "email": "ada@example.org"}
    assert "version" not in saved
    assert reparsed(benchmark) == benchmark


def test_empty_rating_lists_load_as_no_rubric_and_write_no_rating_key() -> None:
    doc = document()
    doc["rating"] = []
    first_item(doc)["rating"] = []
    benchmark = parse_checkpoint(doc)
    assert benchmark.global_rubric is None and benchmark.questions[0].rubric is None
    saved = dump_checkpoint(benchmark)
    assert "rating" not in saved and "rating" not in saved["dataFeedElement"][0]["item"]


def test_empty_benchmark_and_many_questions_keep_order() -> None:
    doc = document()
    doc["dataFeedElement"] = []
    assert parse_checkpoint(doc).questions == []
    doc = document()
    for number in range(5):
        add_question(doc, f"Question {number}?")
    ids = [question.id for question in parse_checkpoint(doc).questions]
    assert ids[0] == "urn:karenina:test:q001"
    assert ids[1:] == [generate_question_id(f"Question {n}?") for n in range(5)]


def test_constructed_question_defaults_and_save() -> None:
    question = Question(text="What is 2+2?", raw_answer="4", template_code="class Answer: ...")
    assert question.id == generate_question_id("What is 2+2?")
    assert question.template_name == "What is 2+2?... Answer Template"
    assert question.finished is False and question.rubric is None
    benchmark = Benchmark(name="made", questions=[question])
    assert reparsed(benchmark) == benchmark
    with pytest.raises(ValueError, match="used twice"):
        Benchmark(name="dup", questions=[question, question])
    with pytest.raises(ValueError, match="clashes"):
        Question(text="q", raw_answer="a", template_code="", extra_properties={"finished": 1})
