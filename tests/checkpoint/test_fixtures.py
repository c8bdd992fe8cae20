"""The four fixture checkpoints load with the facts of spec 1.13 and survive a round trip."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.checkpoint import Benchmark, load_checkpoint, save_checkpoint
from pytest_karenina.rubrics import CallableTrait, LLMRubricTrait, RegexTrait
from tests.checkpoint.builders import FIXTURE_NAMES, fixture_path

CANONICAL_CONTEXT = {
    "@version": 1.1,
    "@vocab": "https://schema.org/",
    "karenina": "urn:karenina:vocab:",
    "dataFeedElement": {"@id": "dataFeedElement", "@container": "@set"},
    "item": {"@id": "item", "@type": "@id"},
    "acceptedAnswer": {"@id": "acceptedAnswer", "@type": "@id"},
    "rating": {"@id": "contentRating", "@container": "@set"},
    "additionalProperty": {"@id": "additionalProperty", "@container": "@set"},
    "hasPart": {"@id": "hasPart", "@container": "@set"},
    "keywords": {"@id": "keywords", "@container": "@set"},
}


def load(name: str) -> Benchmark:
    return load_checkpoint(fixture_path(name))


def test_minimal_has_one_unfinished_question() -> None:
    benchmark = load("minimal")
    assert benchmark.id == "urn:karenina:test:minimal-benchmark"
    assert (benchmark.name, benchmark.version, benchmark.creator) == (
        "minimal-test",
        "0.1.0",
        "Karenina Test Suite",
    )
    assert benchmark.date_created == "2025-01-11T00:00:00Z"
    (question,) = benchmark.questions
    assert question.id == "urn:karenina:test:q001"
    assert question.text == "What is 2+2?"
    assert question.raw_answer == "4"
    assert question.template_name == "Simple Addition Answer Template"
    assert question.template_code.startswith("from karenina.schemas.entities import BaseAnswer")
    assert question.finished is False
    assert question.keywords == ["arithmetic", "math"]
    assert benchmark.finished_questions() == []
    assert benchmark.global_rubric is None and question.rubric is None
    assert question.jsonld_ids.template == "urn:karenina:test:q001-template"


def test_multi_question_keeps_file_order_and_finished_flags() -> None:
    benchmark = load("multi_question")
    ids = [question.id for question in benchmark.questions]
    assert ids == [f"urn:karenina:test:mq00{n}" for n in range(1, 6)]
    assert [q.finished for q in benchmark.questions] == [True, True, True, True, False]
    assert [q.id for q in benchmark.finished_questions()] == ids[:4]
    assert benchmark.global_rubric is not None
    (completeness,) = benchmark.global_rubric.callable_traits
    assert completeness.name == "Completeness"
    assert completeness.callable_code == b""
    assert completeness.kind == "boolean"
    mq004 = benchmark.question("urn:karenina:test:mq004")
    assert mq004.rubric is not None
    assert mq004.rubric.trait_names() == ["Case Sensitivity"]
    assert mq004.rubric.callable_traits[0].callable_code == b""
    assert all(q.rubric is None for q in benchmark.questions if q is not mq004)


def test_with_results_keeps_custom_metadata_and_root_property() -> None:
    benchmark = load("with_results")
    (question,) = benchmark.questions
    assert question.finished is True
    results = question.custom_metadata["verification_results"]
    assert isinstance(results, dict)
    assert results["template_result"] == {"passed": True, "parsed_value": "Paris"}
    assert benchmark.properties == {"last_verification_run": "2025-01-11T12:00:00Z"}
    assert benchmark.global_rubric is not None
    assert benchmark.global_rubric.trait_names() == ["Conciseness"]
    assert question.rubric is not None
    (citations,) = question.rubric.regex_traits
    assert (citations.name, citations.pattern, citations.case_sensitive) == ("Citations", "", True)


def test_with_rubrics_global_traits_have_kinds_bounds_and_payloads() -> None:
    benchmark = load("with_rubrics")
    assert len(benchmark.finished_questions()) == 3
    rubric = benchmark.global_rubric
    assert rubric is not None
    assert rubric.trait_names() == [
        "Clarity",
        "Accuracy",
        "Completeness",
        "HasCitations",
        "HasNumbers",
        "ContainsCitations",
        "ResponseLength",
    ]
    llm = {trait.name: trait for trait in rubric.llm_traits}
    assert (llm["Clarity"].kind, llm["Clarity"].min_score, llm["Clarity"].max_score) == (
        "score",
        1,
        5,
    )
    assert llm["Accuracy"].kind == "boolean"
    assert llm["Completeness"].kind == "score"
    assert llm["Clarity"].deep_judgment_excerpt_enabled is False
    assert [(t.name, t.pattern) for t in rubric.regex_traits] == [
        ("HasCitations", r"\[\d+\]"),
        ("HasNumbers", r"\d+"),
    ]
    citations, length = rubric.callable_traits
    assert citations.kind == "boolean"
    assert citations.callable_code.startswith(b"import re\ndef evaluate(trace: str) -> bool:")
    assert (length.kind, length.min_score, length.max_score) == ("score", 1, 5)
    assert length.callable_code.startswith(b"def evaluate(trace: str) -> int:")
    assert all(question.rubric is None for question in benchmark.questions)


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_load_save_load_gives_an_equal_benchmark(name: str, tmp_path: Path) -> None:
    original = load(name)
    saved = save_checkpoint(original, tmp_path / f"{name}.jsonld")
    assert saved is original
    reloaded = load_checkpoint(tmp_path / f"{name}.jsonld")
    assert reloaded == original


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_second_save_is_byte_identical(name: str, tmp_path: Path) -> None:
    first, second = tmp_path / "first.jsonld", tmp_path / "second.jsonld"
    save_checkpoint(load(name), first)
    save_checkpoint(load_checkpoint(first), second)
    assert first.read_bytes() == second.read_bytes()


def assert_karenina_loadable(document: dict[str, Any]) -> None:
    """Every key Karenina requires (spec 9.2) is present with the right JSON type."""
    assert document["@context"] == CANONICAL_CONTEXT
    assert document["@type"] == "DataFeed"
    for key in ("name", "dateCreated", "dateModified"):
        assert isinstance(document[key], str), key
    assert isinstance(document["dataFeedElement"], list)
    ratings = list(document.get("rating", []))
    properties = list(document.get("additionalProperty", []))
    for element in document["dataFeedElement"]:
        assert element["@type"] == "DataFeedItem"
        assert isinstance(element["@id"], str)
        assert isinstance(element["dateCreated"], str)
        assert isinstance(element["dateModified"], str)
        item = element["item"]
        assert item["@type"] == "Question" and isinstance(item["text"], str)
        assert isinstance(item["acceptedAnswer"]["text"], str)
        assert isinstance(item["hasPart"]["name"], str)
        assert isinstance(item["hasPart"]["text"], str)
        assert item["hasPart"]["programmingLanguage"] == "Python"
        assert "keywords" not in element
        ratings += item.get("rating", [])
        properties += item.get("additionalProperty", [])
    for entry in ratings:
        assert isinstance(entry["name"], str)
        assert isinstance(entry["bestRating"], int | float)
        assert isinstance(entry["worstRating"], int | float)
        assert entry["additionalType"].startswith("karenina:")
        properties += entry.get("additionalProperty", [])
    for entry in properties:
        assert entry["@type"] == "PropertyValue" and isinstance(entry["name"], str)


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_saved_file_is_utf8_json_with_every_required_key(name: str, tmp_path: Path) -> None:
    target = tmp_path / "saved.jsonld"
    save_checkpoint(load(name), target)
    text = target.read_bytes().decode("utf-8")
    assert text.startswith('{\n  "@context": {')
    assert_karenina_loadable(json.loads(text))


def test_saved_llm_traits_state_their_kind_and_keep_deep_judgment(tmp_path: Path) -> None:
    target = tmp_path / "saved.jsonld"
    save_checkpoint(load("with_rubrics"), target)
    ratings = {entry["name"]: entry for entry in json.loads(target.read_text("utf-8"))["rating"]}
    accuracy = {p["name"]: p.get("value") for p in ratings["Accuracy"]["additionalProperty"]}
    assert accuracy["kind"] == "boolean"
    assert accuracy["deep_judgment_excerpt_enabled"] is False
    assert ratings["Accuracy"]["additionalType"] == "karenina:GlobalRubricTrait"
    assert (ratings["Clarity"]["bestRating"], ratings["Clarity"]["worstRating"]) == (5, 1)
    assert ratings["ResponseLength"]["additionalType"] == "karenina:GlobalCallableTrait"


def test_trait_models_are_the_public_classes() -> None:
    rubric = load("with_rubrics").global_rubric
    assert rubric is not None
    kinds = {type(trait) for trait in rubric.traits()}
    assert kinds == {LLMRubricTrait, RegexTrait, CallableTrait}
