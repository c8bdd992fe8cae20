"""Parsed checkpoint JSON -> ``Benchmark``, checking shape and types as it goes."""

from __future__ import annotations

from typing import Any

from pytest_karenina.checkpoint.access import (
    as_object,
    at,
    check_type_tag,
    join,
    opt_list,
    opt_str,
    property_values,
    req_list,
    req_object,
    req_str,
    str_list,
    wrong_type,
)
from pytest_karenina.checkpoint.errors import DecodeFailure
from pytest_karenina.checkpoint.ids import generate_question_id
from pytest_karenina.checkpoint.models import Benchmark, JsonLdIds, Person, Question
from pytest_karenina.checkpoint.ratings_decode import (
    LEGACY_TRAIT_PROPERTIES,
    TraitScope,
    decode_legacy_traits,
    decode_question_ratings,
    decode_root_ratings,
)
from pytest_karenina.rubrics.rules import json_or_raw

#: Question properties stored as JSON-encoded strings.
JSON_STRING_PROPERTIES = ("author", "sources", "few_shot_examples")
# Every question sets all its fields, so all questions share one fields set: pydantic would
# build a set of 20 names per question (2.2 KB each, 110 MB at 50,000 questions). The models
# are frozen, and model_copy copies the set before it adds to it, so no one mutates it.
_QUESTION_FIELDS = set(Question.model_fields)
_IDS_FIELDS = set(JsonLdIds.model_fields)


def decode_document(document: Any, source: str, *, consume: bool = False) -> Benchmark:
    """The Benchmark described by a parsed checkpoint; ``CheckpointError`` names ``source``.

    With ``consume`` the questions' entries of ``document`` are dropped (set to None) as they
    are decoded, so that a large file's parsed tree is let go while its questions are built
    (the caller owns the document and reads nothing more from it)."""
    try:
        return _decode_root(document, consume)
    except DecodeFailure as failure:
        raise failure.for_file(source) from None


def _decode_root(document: Any, consume: bool = False) -> Benchmark:
    root = as_object(document, "", "a JSON object (a Karenina checkpoint)")
    req_object(root, "@context", "", "an object: the JSON-LD context")
    check_type_tag(root, "", "DataFeed")
    global_scope, dynamic_scope = TraitScope(), TraitScope()
    decode_root_ratings(opt_list(root, "rating", ""), "rating", global_scope, dynamic_scope)
    properties: dict[str, Any] = {}
    for index, (name, value) in enumerate(property_values(root, "")):
        legacy_type = LEGACY_TRAIT_PROPERTIES.get(name)
        if legacy_type is None:
            properties[name] = value
        else:
            path = f"additionalProperty[{index}].value"
            decode_legacy_traits(legacy_type, value, path, global_scope)
    scenarios = root.get("hasPart")
    if scenarios is not None and not isinstance(scenarios, list):
        raise wrong_type("hasPart", "an array of scenarios", scenarios)
    return Benchmark.model_construct(
        id=opt_str(root, "@id", ""),
        name=req_str(root, "name", "", "a string: the benchmark name"),
        description=opt_str(root, "description", ""),
        version=opt_str(root, "version", ""),
        creator=_creator(root),
        date_created=req_str(root, "dateCreated", "", "a string: the creation date"),
        date_modified=req_str(root, "dateModified", "", "a string: the modification date"),
        global_rubric=global_scope.rubric(),
        global_dynamic_rubric=dynamic_scope.rubric(),
        questions=_decode_questions(
            req_list(root, "dataFeedElement", "", "an array of DataFeedItem objects"), consume
        ),
        properties=properties,
        scenarios=scenarios,
    )


def _creator(root: dict[str, Any]) -> str | Person | None:
    value = root.get("creator")
    if value is None or isinstance(value, str):
        return value
    if not isinstance(value, dict):
        raise wrong_type("creator", "a string or a Person object", value)
    check_type_tag(value, "creator", "Person")
    return Person.model_construct(
        name=req_str(value, "name", "creator", "a string: the creator's name"),
        url=opt_str(value, "url", "creator"),
        email=opt_str(value, "email", "creator"),
    )


def _decode_questions(elements: list[Any], consume: bool = False) -> list[Question]:
    questions: list[Question] = []
    id_paths: dict[str, str] = {}
    for index, element in enumerate(elements):
        path = at("dataFeedElement", index)
        question = _decode_question(element, path)
        has_own_id = bool(element.get("@id"))
        if consume:
            elements[index] = None
        id_path = join(path, "@id") if has_own_id else join(path, "item.text")
        earlier = id_paths.get(question.id)
        if earlier is not None:
            raise DecodeFailure(
                id_path,
                f"duplicate question id {question.id!r}, already used at {earlier} "
                "(question ids must be unique)",
                question.id,
            )
        id_paths[question.id] = id_path
        questions.append(question)
    return questions


def _decode_question(element: Any, path: str) -> Question:
    feed = as_object(element, path, "a DataFeedItem object")
    question_id = opt_str(feed, "@id", path)
    try:
        item_path = join(path, "item")
        item = req_object(feed, "item", path, "a Question object")
        text = req_str(item, "text", item_path, "a string: the question text")
        if not question_id:
            # Karenina uses `@id or generated`, so an empty @id counts as absent.
            question_id = generate_question_id(text)
        return _build_question(feed, item, text, question_id, path, item_path)
    except DecodeFailure as failure:
        if failure.question_id is None:
            failure.question_id = question_id
        raise


def _build_question(
    feed: dict[str, Any],
    item: dict[str, Any],
    text: str,
    question_id: str,
    path: str,
    item_path: str,
) -> Question:
    check_type_tag(feed, path, "DataFeedItem")
    check_type_tag(item, item_path, "Question")
    answer_path = join(item_path, "acceptedAnswer")
    answer = req_object(item, "acceptedAnswer", item_path, "an Answer object")
    check_type_tag(answer, answer_path, "Answer")
    code_path = join(item_path, "hasPart")
    code = req_object(item, "hasPart", item_path, "a SoftwareSourceCode object: the template")
    check_type_tag(code, code_path, "SoftwareSourceCode")
    language = code.get("programmingLanguage")
    if language is not None and language != "Python":
        raise wrong_type(join(code_path, "programmingLanguage"), "'Python'", language)
    keywords = _keywords(item.get("keywords"), join(item_path, "keywords"))
    if not keywords:
        keywords = _keywords(feed.get("keywords"), join(path, "keywords"))
    rubric, ignored = decode_question_ratings(
        opt_list(item, "rating", item_path), join(item_path, "rating")
    )
    return Question.model_construct(
        _QUESTION_FIELDS,
        id=question_id,
        text=text,
        raw_answer=req_str(answer, "text", answer_path, "a string: the reference answer"),
        template_code=req_str(code, "text", code_path, "a string: the template's Python source"),
        template_name=req_str(code, "name", code_path, "a string: the template's name"),
        keywords=keywords,
        rubric=rubric,
        ignored_ratings=ignored,
        date_created=req_str(feed, "dateCreated", path, "a string: the creation date"),
        date_modified=req_str(feed, "dateModified", path, "a string: the modification date"),
        code_repository=opt_str(code, "codeRepository", code_path),
        jsonld_ids=JsonLdIds.model_construct(
            _IDS_FIELDS,
            question=opt_str(item, "@id", item_path),
            answer=opt_str(answer, "@id", answer_path),
            template=opt_str(code, "@id", code_path),
        ),
        **_question_properties(item, item_path),
    )


def _keywords(value: Any, path: str) -> list[str]:
    return [] if value is None else str_list(value, path)


def _question_properties(item: dict[str, Any], item_path: str) -> dict[str, Any]:
    """Question fields stored in ``additionalProperty`` (Karenina's names, spec 1.6)."""
    fields: dict[str, Any] = {
        "finished": False,
        "author": None,
        "sources": None,
        "few_shot_examples": None,
        "answer_notes": None,
        "workspace_path": None,
    }
    custom: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for index, (name, value) in enumerate(property_values(item, item_path)):
        if name == "finished":
            if value is not None and not isinstance(value, bool):
                value_path = f"{item_path}.additionalProperty[{index}].value"
                raise wrong_type(value_path, "a boolean (true or false)", value)
            fields["finished"] = bool(value)
        elif name in JSON_STRING_PROPERTIES:
            fields[name] = json_or_raw(value)
        elif name in ("answer_notes", "workspace_path"):
            if value is not None and not isinstance(value, str):
                value_path = f"{item_path}.additionalProperty[{index}].value"
                raise wrong_type(value_path, "a string", value)
            fields[name] = value
        elif name.startswith("custom_"):
            # Karenina removes every occurrence of "custom_", not just the prefix.
            custom[name.replace("custom_", "")] = value
        else:
            extra[name] = value
    fields["custom_metadata"] = custom
    fields["extra_properties"] = extra
    return fields
