"""Bad checkpoints raise CheckpointError naming the file, the JSON path and the expectation."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.checkpoint import CheckpointError, load_checkpoint, parse_checkpoint
from tests.checkpoint.builders import Document, add_question, document, first_item, prop, rating

SOURCE = "bench.jsonld"


def error_for(doc: Any) -> CheckpointError:
    with pytest.raises(CheckpointError) as caught:
        parse_checkpoint(doc, source=SOURCE)
    return caught.value


def load_error(path: Path | str) -> CheckpointError:
    with pytest.raises(CheckpointError) as caught:
        load_checkpoint(path)
    return caught.value


def test_invalid_json_names_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonld"
    path.write_text('{\n  "name": "x"\n  "dateCreated": "y"\n}\n', encoding="utf-8")
    error = load_error(path)
    assert error.file == str(path) and error.json_path == ""
    assert error.reason == "invalid JSON at line 3, column 3: Expecting ',' delimiter"
    assert str(error) == f"{path}: invalid JSON at line 3, column 3: Expecting ',' delimiter"


def test_invalid_utf8_names_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonld"
    path.write_bytes('{"name": "café"}'.encode("latin-1"))
    error = load_error(path)
    assert error.file == str(path)
    assert error.reason.startswith("not UTF-8 text:")
    assert "0xe9" in error.reason and "offset 13" in error.reason


def test_missing_file_is_a_checkpoint_error_with_the_path_as_given(tmp_path: Path) -> None:
    error = load_error("does/not/exist.jsonld")
    assert error.file == "does/not/exist.jsonld" and error.json_path == ""
    assert "cannot read the checkpoint" in str(error)
    assert "cannot read" in load_error(tmp_path).reason


def test_missing_required_template_text() -> None:
    doc = document()
    del first_item(doc)["hasPart"]["text"]
    error = error_for(doc)
    assert error.json_path == "dataFeedElement[0].item.hasPart.text"
    assert error.question_id == "urn:karenina:test:q001"
    assert str(error) == (
        "bench.jsonld: dataFeedElement[0].item.hasPart.text: required key 'text' is missing "
        "(expected a string: the template's Python source) (question urn:karenina:test:q001)"
    )


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda d: d.pop("@context"), "@context"),
        (lambda d: d.pop("name"), "name"),
        (lambda d: d.pop("dateCreated"), "dateCreated"),
        (lambda d: d.pop("dateModified"), "dateModified"),
        (lambda d: d.pop("dataFeedElement"), "dataFeedElement"),
        (lambda d: d["dataFeedElement"][0].pop("dateCreated"), "dataFeedElement[0].dateCreated"),
        (lambda d: d["dataFeedElement"][0].pop("item"), "dataFeedElement[0].item"),
        (lambda d: first_item(d).pop("acceptedAnswer"), "dataFeedElement[0].item.acceptedAnswer"),
        (
            lambda d: first_item(d)["acceptedAnswer"].pop("text"),
            "dataFeedElement[0].item.acceptedAnswer.text",
        ),
        (lambda d: first_item(d)["hasPart"].pop("name"), "dataFeedElement[0].item.hasPart.name"),
    ],
)
def test_every_required_key_is_enforced(mutate: Callable[[Document], object], path: str) -> None:
    doc = document()
    mutate(doc)
    error = error_for(doc)
    assert error.json_path == path
    assert f"required key '{path.rsplit('.', 1)[-1]}' is missing (expected " in error.reason


@pytest.mark.parametrize(
    ("mutate", "path", "reason"),
    [
        (
            lambda d: first_item(d).__setitem__("text", 42),
            "dataFeedElement[0].item.text",
            "expected a string, found a number (42)",
        ),
        (
            lambda d: d.__setitem__("dataFeedElement", {}),
            "dataFeedElement",
            "expected an array, found an object",
        ),
        (
            lambda d: d.__setitem__("@type", "Dataset"),
            "@type",
            "expected @type 'DataFeed', found a string (\"Dataset\")",
        ),
        (
            lambda d: first_item(d)["hasPart"].__setitem__("programmingLanguage", "Java"),
            "dataFeedElement[0].item.hasPart.programmingLanguage",
            "expected 'Python', found a string (\"Java\")",
        ),
        (
            lambda d: first_item(d).__setitem__("keywords", ["a", 1]),
            "dataFeedElement[0].item.keywords[1]",
            "expected a string, found a number (1)",
        ),
        (
            lambda d: first_item(d).__setitem__("additionalProperty", [{"value": 1}]),
            "dataFeedElement[0].item.additionalProperty[0].name",
            "required key 'name' is missing",
        ),
        (
            lambda d: d.__setitem__("creator", ["Ada"]),
            "creator",
            "expected a string or a Person object, found an array",
        ),
    ],
)
def test_wrong_types_name_path_expectation_and_finding(
    mutate: Callable[[Document], object], path: str, reason: str
) -> None:
    doc = document()
    mutate(doc)
    error = error_for(doc)
    assert error.json_path == path
    assert error.reason.startswith(reason)


def test_root_must_be_an_object() -> None:
    error = error_for("[1, 2]")
    assert (
        str(error) == "bench.jsonld: expected a JSON object (a Karenina checkpoint), found an array"
    )


def test_non_boolean_finished() -> None:
    doc = document()
    first_item(doc)["additionalProperty"] = [prop("author", "A"), prop("finished", "yes")]
    error = error_for(doc)
    assert error.json_path == "dataFeedElement[0].item.additionalProperty[1].value"
    assert error.reason == 'expected a boolean (true or false), found a string ("yes")'
    assert error.question_id == "urn:karenina:test:q001"


def test_duplicate_question_ids_name_both_paths() -> None:
    doc = document()
    add_question(doc, "Another question?", question_id="urn:karenina:test:q001")
    error = error_for(doc)
    assert error.json_path == "dataFeedElement[1].@id"
    assert "duplicate question id 'urn:karenina:test:q001'" in error.reason
    assert "dataFeedElement[0].@id" in error.reason


def test_duplicate_generated_ids_are_refused_too() -> None:
    doc = document()
    add_question(doc, "Same text?")
    add_question(doc, "Same text?")
    error = error_for(doc)
    assert error.json_path == "dataFeedElement[2].item.text"
    assert "already used at dataFeedElement[1].item.text" in error.reason


def test_unknown_trait_type_lists_the_accepted_ones() -> None:
    doc = document()
    doc["rating"] = [rating("T", "karenina:GlobalRubricTrait"), rating("U", "karenina:Foo")]
    error = error_for(doc)
    assert error.json_path == "rating[1].additionalType"
    assert error.reason.startswith("unknown trait type 'karenina:Foo' (expected one of: ")
    assert "karenina:QuestionSpecificDynamicRubricTrait" in error.reason


def test_question_specific_type_in_the_root_is_refused() -> None:
    doc = document()
    doc["rating"] = [rating("T", "QuestionSpecificRegexTrait")]
    error = error_for(doc)
    assert error.json_path == "rating[0].additionalType"
    assert "dataset-level rating must be a global trait type" in error.reason


def question_rating_error(entry: dict[str, Any]) -> CheckpointError:
    doc = document()
    first_item(doc)["rating"] = [entry]
    return error_for(doc)


def test_literal_trait_with_one_class() -> None:
    error = question_rating_error(
        rating("L", "QuestionSpecificLLMRubricTrait", {"kind": "literal", "classes": {"a": "x"}})
    )
    assert error.json_path == "dataFeedElement[0].item.rating[0].additionalProperty[1].value"
    assert error.reason == "a literal trait needs 2 to 20 classes, found 1"
    assert error.question_id == "urn:karenina:test:q001"


def test_literal_trait_without_classes_points_at_the_rating() -> None:
    error = question_rating_error(
        rating("L", "QuestionSpecificLLMRubricTrait", {"kind": "literal"})
    )
    assert error.json_path == "dataFeedElement[0].item.rating[0]"
    assert error.reason == "a literal trait needs 'classes'"


def test_metric_trait_with_empty_tp_instructions() -> None:
    error = question_rating_error(
        rating(
            "M",
            "QuestionSpecificMetricRubricTrait",
            {"metrics": ["f1"], "tp_instructions": []},
        )
    )
    assert error.json_path == "dataFeedElement[0].item.rating[0].additionalProperty[1].value"
    assert error.reason == "tp_instructions must not be empty"


@pytest.mark.parametrize(
    ("props", "reason"),
    [
        ({"metrics": ["specificity"], "tp_instructions": ["x"]}, "not available in tp_only"),
        (
            {"metrics": ["f1"], "tp_instructions": ["x"], "evaluation_mode": "full_matrix"},
            "tn_instructions must not be empty in full_matrix mode",
        ),
        ({"tp_instructions": ["x"]}, "at least one metric is required"),
        ({"metrics": "f1"}, "expected an array of strings (or a JSON string of one)"),
    ],
)
def test_metric_configuration_rules(props: dict[str, Any], reason: str) -> None:
    error = question_rating_error(rating("M", "QuestionSpecificMetricRubricTrait", props))
    assert reason in error.reason


@pytest.mark.parametrize(
    ("entry", "path_end", "reason"),
    [
        (rating("a.b", "QuestionSpecificRegexTrait"), "rating[0].name", "must not contain '.'"),
        (
            rating("R", "QuestionSpecificRegexTrait", {"pattern": "("}),
            "rating[0].additionalProperty[0].value",
            "invalid regular expression '('",
        ),
        (
            rating("C", "QuestionSpecificCallableTrait", {"callable_code": "%%%"}),
            "rating[0].additionalProperty[0].value",
            "expected base64 text in callable_code",
        ),
        (
            rating("R", "QuestionSpecificRegexTrait", {"case_sensitive": "no"}),
            "rating[0].additionalProperty[0].value",
            'expected a boolean, found a string ("no")',
        ),
        (
            rating("L", "QuestionSpecificRubricTrait", {"kind": "fuzzy"}),
            "rating[0].additionalProperty[0].value",
            "expected 'boolean', 'score', 'literal' or",
        ),
        (
            rating("A", "QuestionSpecificAgenticRubricTrait", description=None),
            "rating[0].description",
            "an agentic trait needs a non-empty description",
        ),
        (
            rating(
                "A",
                "QuestionSpecificAgenticRubricTrait",
                {"kind": {"type": "template", "schema": {}}, "higher_is_better": True},
            ),
            "rating[0].additionalProperty[1].value",
            "higher_is_better must be null for a template-kind trait",
        ),
        (
            {**rating("R", "QuestionSpecificRegexTrait"), "bestRating": "1"},
            "rating[0].bestRating",
            'expected a number, found a string ("1")',
        ),
    ],
)
def test_trait_rules_point_at_the_offending_key(
    entry: dict[str, Any], path_end: str, reason: str
) -> None:
    error = question_rating_error(entry)
    assert error.json_path == f"dataFeedElement[0].item.{path_end}"
    assert reason in error.reason


def test_trait_names_are_unique_within_a_scope() -> None:
    doc = document()
    doc["rating"] = [rating("X", "GlobalRegexTrait"), rating("X", "GlobalCallableTrait")]
    error = error_for(doc)
    assert error.json_path == "rating[1].name"
    assert "already used by rating[0]" in error.reason
    doc["rating"][1]["additionalType"] = "GlobalDynamicRubricTrait"
    assert parse_checkpoint(doc).global_dynamic_rubric is not None


def test_dynamic_member_needs_summary_or_description() -> None:
    doc = document()
    doc["rating"] = [rating("D", "GlobalDynamicRubricTrait", description=None)]
    error = error_for(doc)
    assert error.json_path == "rating[0]"
    assert "needs a 'summary' property or a description" in error.reason


def test_errors_pickle_with_their_attributes() -> None:
    doc = document()
    del first_item(doc)["hasPart"]["text"]
    error = error_for(doc)
    clone = pickle.loads(pickle.dumps(error))
    assert (clone.file, clone.json_path, clone.reason, clone.question_id, str(clone)) == (
        error.file,
        error.json_path,
        error.reason,
        error.question_id,
        str(error),
    )
    assert isinstance(clone, ValueError)


def locations(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    children = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else ()
    )
    for key, child in children:
        yield from locations(child, (*path, key))


@pytest.mark.parametrize("replacement", [None, 7, 1.5, True, "text", [], {}, [1], {"a": 1}, "DROP"])
def test_no_mutation_escapes_as_anything_but_checkpoint_error(replacement: Any) -> None:
    base = document("with_rubrics")
    base["dataFeedElement"][0]["item"]["rating"] = [
        rating(
            "L",
            "QuestionSpecificLLMRubricTrait",
            {"kind": "literal", "classes": {"a": "1", "b": "2"}},
        ),
        rating(
            "M", "QuestionSpecificMetricRubricTrait", {"metrics": ["f1"], "tp_instructions": ["x"]}
        ),
        rating("A", "QuestionSpecificAgenticRubricTrait", {"kind": "score", "model_override": {}}),
    ]
    base["additionalProperty"] = [prop("global_regex_rubric_traits", '[{"name": "Old"}]')]
    for path in list(locations(base))[1:]:
        doc = copy.deepcopy(base)
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        if replacement == "DROP":
            del parent[path[-1]]
        else:
            parent[path[-1]] = copy.deepcopy(replacement)
        try:
            parse_checkpoint(doc, source=SOURCE)
        except CheckpointError as error:
            assert str(error).startswith(f"{SOURCE}: ")
