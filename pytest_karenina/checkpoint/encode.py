"""``Benchmark`` -> checkpoint JSON document, in the layout Karenina writes and reads."""

from __future__ import annotations

import json
from typing import Any

from pytest_karenina.checkpoint.models import Benchmark, Person, Question
from pytest_karenina.checkpoint.ratings_encode import encode_trait, property_value
from pytest_karenina.rubrics.traits import Rubric


def canonical_context() -> dict[str, Any]:
    """The ``@context`` Karenina writes on save (a fresh dict on every call)."""
    return {
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


def encode_benchmark(benchmark: Benchmark) -> dict[str, Any]:
    """The checkpoint document for ``benchmark`` (plain JSON types only)."""
    document: dict[str, Any] = {"@context": canonical_context(), "@type": "DataFeed"}
    if benchmark.id is not None:
        document["@id"] = benchmark.id
    document["name"] = benchmark.name
    for key, value in (("description", benchmark.description), ("version", benchmark.version)):
        if value is not None:
            document[key] = value
    if benchmark.creator is not None:
        document["creator"] = _creator(benchmark.creator)
    document["dateCreated"] = benchmark.date_created
    document["dateModified"] = benchmark.date_modified
    ratings = _ratings(benchmark.global_rubric, "Global")
    if benchmark.global_dynamic_rubric is not None:
        ratings += [
            encode_trait(trait, "Global", dynamic=True)
            for trait in benchmark.global_dynamic_rubric.traits()
        ]
    if ratings:
        document["rating"] = ratings
    document["dataFeedElement"] = [_feed_item(question) for question in benchmark.questions]
    if benchmark.scenarios is not None:
        document["hasPart"] = benchmark.scenarios
    if benchmark.properties:
        document["additionalProperty"] = [
            property_value(name, value) for name, value in benchmark.properties.items()
        ]
    return document


def _creator(creator: str | Person) -> Any:
    if isinstance(creator, str):
        return creator
    person: dict[str, Any] = {"@type": "Person", "name": creator.name}
    for key, value in (("url", creator.url), ("email", creator.email)):
        if value is not None:
            person[key] = value
    return person


def _ratings(rubric: Rubric | None, scope: str) -> list[dict[str, Any]]:
    if rubric is None:
        return []
    return [encode_trait(trait, scope) for trait in rubric.traits()]


def _with_id(node_id: str | None, node: dict[str, Any]) -> dict[str, Any]:
    if node_id is None:
        return node
    return {"@type": node.pop("@type"), "@id": node_id, **node}


def _feed_item(question: Question) -> dict[str, Any]:
    ids = question.jsonld_ids
    answer = _with_id(ids.answer, {"@type": "Answer", "text": question.raw_answer})
    code: dict[str, Any] = {
        "@type": "SoftwareSourceCode",
        "name": question.template_name,
        "text": question.template_code,
        "programmingLanguage": "Python",
    }
    if question.code_repository is not None:
        code["codeRepository"] = question.code_repository
    item: dict[str, Any] = _with_id(ids.question, {"@type": "Question"})
    item["text"] = question.text
    item["acceptedAnswer"] = answer
    item["hasPart"] = _with_id(ids.template, code)
    ratings = _ratings(question.rubric, "QuestionSpecific") + list(question.ignored_ratings)
    if ratings:
        item["rating"] = ratings
    item["additionalProperty"] = _question_properties(question)
    if question.keywords:
        item["keywords"] = list(question.keywords)
    return {
        "@type": "DataFeedItem",
        "@id": question.id,
        "dateCreated": question.date_created,
        "dateModified": question.date_modified,
        "item": item,
    }


def _as_json_string(value: Any) -> Any:
    """Re-encode a JSON-string property so that reading it back gives ``value`` again.

    A string that is not itself valid JSON was kept raw on load, so it is written raw.
    """
    if isinstance(value, str):
        try:
            json.loads(value)
        except json.JSONDecodeError:
            return value
    return json.dumps(value)


def _question_properties(question: Question) -> list[dict[str, Any]]:
    props: list[dict[str, Any]] = [property_value("finished", question.finished)]
    for name, value in (("author", question.author), ("sources", question.sources)):
        if value is not None:
            props.append(property_value(name, _as_json_string(value)))
    for key, value in question.custom_metadata.items():
        props.append(property_value(f"custom_{key}", value))
    examples = question.few_shot_examples
    if examples is not None:
        props.append(property_value("few_shot_examples", _as_json_string(examples)))
    for name, text in (
        ("answer_notes", question.answer_notes),
        ("workspace_path", question.workspace_path),
    ):
        if text is not None:
            props.append(property_value(name, text))
    props.extend(property_value(name, value) for name, value in question.extra_properties.items())
    return props
