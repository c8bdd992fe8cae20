"""Rubric helpers (seed 001) and the ``VerificationResultSet`` container."""

from __future__ import annotations

import json

from pytest_karenina.results import VerificationResultRubric, VerificationResultSet
from tests.results.builders import result


def test_rubric_helpers() -> None:
    rubric = VerificationResultRubric(
        llm_trait_scores={"clarity": 4, "tone": 1},
        llm_trait_labels={"tone": "Professional"},
        regex_trait_scores={"has_citations": True},
        callable_trait_scores={"short": False},
        metric_trait_scores={"extraction": {"precision": 1.0, "recall": 0.5}},
        agentic_trait_scores={"investigated": True},
    )
    assert rubric.get_all_trait_scores() == {
        "clarity": 4,
        "tone": 1,
        "has_citations": True,
        "short": False,
        "extraction": {"precision": 1.0, "recall": 0.5},
        "investigated": True,
    }
    assert rubric.get_trait_by_name("clarity") == (4, "llm")
    assert rubric.get_trait_by_name("has_citations") == (True, "regex")
    assert rubric.get_trait_by_name("short") == (False, "callable")
    assert rubric.get_trait_by_name("extraction") == ({"precision": 1.0, "recall": 0.5}, "metric")
    assert rubric.get_trait_by_name("investigated") == (True, "agentic")
    assert rubric.get_trait_by_name("missing") is None
    assert rubric.get_llm_trait_labels() == {"tone": "Professional"}


def test_rubric_helpers_on_an_empty_rubric() -> None:
    rubric = VerificationResultRubric()
    assert rubric.get_all_trait_scores() == {}
    assert rubric.get_trait_by_name("x") is None
    assert rubric.get_llm_trait_labels() == {}


def test_later_trait_types_win_in_the_flat_dict() -> None:
    rubric = VerificationResultRubric(llm_trait_scores={"q": 2}, regex_trait_scores={"q": True})
    assert rubric.get_all_trait_scores() == {"q": True}
    assert rubric.get_trait_by_name("q") == (2, "llm")


def test_result_set_helpers() -> None:
    results = [result(True), result(False, meta={"question_id": "q2"}), result(None)]
    result_set = VerificationResultSet(results=results)
    assert len(result_set) == 3
    assert list(result_set) == results
    assert result_set.passed() == [results[0]]
    assert result_set.failed() == [results[1]]
    assert list(result_set.by_question()) == ["q1", "q2"]
    assert result_set.by_question()["q1"] == [results[0], results[2]]
    assert (result_set.scenario_results, result_set.errors) == (None, None)


def test_result_set_errors_are_strings_and_serialise() -> None:
    result_set = VerificationResultSet()
    result_set.record_error("scenario s1", RuntimeError("boom"))
    result_set.record_error("scenario s2", "already text")
    assert result_set.errors == [
        ("scenario s1", "RuntimeError: boom"),
        ("scenario s2", "already text"),
    ]
    data = json.loads(result_set.model_dump_json())
    assert VerificationResultSet.model_validate(data) == result_set
