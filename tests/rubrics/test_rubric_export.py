"""The rubric section of a result survives the streaming export writer unchanged.

The result under test sets every field of ``VerificationResultRubric`` to a value other
than its default, and the list of fields is taken from the model itself, so a field added
later without a value here fails :func:`test_every_rubric_field_is_set`. The round trip is
compared through JSON text as well as through the models, because Python's ``==`` would
let ``True`` pass for ``1`` and ``1`` for ``1.0``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.results import (
    ExportWriter,
    VerificationResult,
    VerificationResultRubric,
    VerificationResultSet,
    read_export_payload,
)
from tests.results.builders import metadata

RUBRIC = VerificationResultRubric(
    rubric_evaluation_performed=True,
    rubric_evaluation_strategy="sequential",
    llm_trait_scores={
        "clarity": True,
        "hedging": False,
        "depth": 4,
        "register": 2,
        "bad_register": -1,
        "entities.names": ["Marie Curie", "Pierre Curie"],
        "entities.count": 2,
        "entities.share": 0.25,
        "entities.summary": "two physicists, naïve ünïcode, 東京",
        "entities.extra": {"verified": True, "sources": ["a", "b"]},
    },
    llm_trait_labels={"register": "formal", "bad_register": "[MISSING_FROM_RESPONSE]"},
    regex_trait_scores={"cites_year": True, "no_hedge_words": False},
    callable_trait_scores={"short_enough": True, "word_count": 12, "readability": 0.75},
    metric_trait_scores={"entity_recall": {"precision": 0.5, "recall": 1.0, "f1": 0.6667}},
    metric_trait_confusion_lists={
        "entity_recall": {"tp": ["Curie"], "fn": [], "fp": ["Becquerel"], "tn": ["Bohr"]}
    },
    agentic_trait_scores={"workspace_clean": True, "agent_depth": 3},
    agentic_trait_investigation_traces={"workspace_clean": "ls\nREADME.md\nno stray files"},
    agentic_trait_extraction_metadata={
        "workspace_clean": {"turns": 3, "tools": ["ls", "cat"], "timed_out": False}
    },
    dynamic_rubric_skipped_traits={"mentions_units": "the answer has no quantities"},
    dynamic_rubric_promoted_traits=["mentions_dates"],
    trait_provenance={
        "clarity": "global",
        "depth": "question_specific",
        "mentions_dates": "dynamic",
    },
    llm_trait_reasoning={"clarity": "Short, direct sentences.", "depth": "Covers both points."},
    trait_errors={"tone": "judge call failed: RuntimeError: boom", "loader": "cannot unpickle"},
)


def make_result() -> VerificationResult:
    return VerificationResult(
        metadata=metadata(question_text="Who discovered polonium?"),
        rubric=RUBRIC,
        evaluation_input="--- AI Message ---\nMarie and Pierre Curie.",
    )


def default_of(name: str) -> Any:
    return VerificationResultRubric.model_fields[name].get_default(call_default_factory=True)


def test_every_rubric_field_is_set() -> None:
    fields = list(VerificationResultRubric.model_fields)
    assert len(fields) >= 16
    at_default = [name for name in fields if getattr(RUBRIC, name) == default_of(name)]
    assert at_default == [], f"fields still at their default: {at_default}"
    assert RUBRIC.model_fields_set == set(fields)


def write_and_read(tmp_path: Path, how: str) -> tuple[dict[str, Any], VerificationResult]:
    """Export one result with the streaming writer; return the raw result dict in the file
    and the result loaded back with the export loader."""
    target = tmp_path / "run.json"
    writer = ExportWriter(target, job_id="rubric-round-trip", start_time=1.0)
    if how == "dumped":
        writer.add(make_result().model_dump(mode="json"))
    else:
        writer.add(make_result())
    if how == "recovered":
        writer._file.close()  # a hard kill: the sidecar is left, no close()
        assert ExportWriter.recover(target, end_time=2.0) == target
    else:
        assert writer.close(end_time=2.0) == target
    text = target.read_text(encoding="utf-8")
    raw, _ = read_export_payload(text)
    loaded = VerificationResultSet.from_export_json(text).results
    assert len(raw) == len(loaded) == 1
    return raw[0], loaded[0]


HOW = ["result", "dumped", "recovered"]


@pytest.mark.parametrize("how", HOW)
def test_rubric_section_round_trips_exactly(tmp_path: Path, how: str) -> None:
    raw, loaded = write_and_read(tmp_path, how)
    expected = RUBRIC.model_dump(mode="json")
    # The file holds every field, in order, with JSON types intact (true is not 1).
    assert list(raw["rubric"]) == list(VerificationResultRubric.model_fields)
    assert json.dumps(raw["rubric"]) == json.dumps(expected)
    # The loaded model equals the original, also by type.
    assert loaded.rubric is not None
    assert loaded.rubric == RUBRIC
    assert json.dumps(loaded.rubric.model_dump(mode="json")) == json.dumps(expected)
    assert loaded.rubric.model_fields_set == set(VerificationResultRubric.model_fields)


@pytest.mark.parametrize("how", HOW)
def test_python_types_survive_the_round_trip(tmp_path: Path, how: str) -> None:
    _, loaded = write_and_read(tmp_path, how)
    rubric = loaded.rubric
    assert rubric is not None and rubric.llm_trait_scores is not None
    scores = rubric.llm_trait_scores
    assert scores["clarity"] is True and scores["hedging"] is False
    assert type(scores["depth"]) is int and type(scores["entities.share"]) is float
    assert rubric.callable_trait_scores is not None
    assert rubric.callable_trait_scores["short_enough"] is True
    assert type(rubric.callable_trait_scores["word_count"]) is int
    assert rubric.agentic_trait_scores is not None
    assert rubric.agentic_trait_scores["workspace_clean"] is True


def test_helpers_after_the_round_trip(tmp_path: Path) -> None:
    _, loaded = write_and_read(tmp_path, "result")
    rubric = loaded.rubric
    assert rubric is not None
    flat: dict[str, Any] = {}
    for part in (
        RUBRIC.llm_trait_scores,
        RUBRIC.regex_trait_scores,
        RUBRIC.callable_trait_scores,
        RUBRIC.metric_trait_scores,
        RUBRIC.agentic_trait_scores,
    ):
        flat.update(part or {})
    assert rubric.get_all_trait_scores() == flat
    assert len(flat) == 10 + 2 + 3 + 1 + 2  # no name is shared between types
    assert rubric.get_trait_by_name("depth") == (4, "llm")
    assert rubric.get_trait_by_name("entities.names") == (["Marie Curie", "Pierre Curie"], "llm")
    assert rubric.get_trait_by_name("cites_year") == (True, "regex")
    assert rubric.get_trait_by_name("word_count") == (12, "callable")
    assert rubric.get_trait_by_name("entity_recall") == (
        {"precision": 0.5, "recall": 1.0, "f1": 0.6667},
        "metric",
    )
    assert rubric.get_trait_by_name("agent_depth") == (3, "agentic")
    assert rubric.get_trait_by_name("mentions_units") is None  # skipped, so never scored
    assert rubric.get_trait_by_name("tone") is None  # failed: only in trait_errors
    match = rubric.get_trait_by_name("clarity")
    assert match is not None and match[0] is True and match[1] == "llm"
    assert rubric.get_llm_trait_labels() == {
        "register": "formal",
        "bad_register": "[MISSING_FROM_RESPONSE]",
    }
    labels = rubric.get_llm_trait_labels()
    labels["register"] = "changed"
    assert rubric.get_llm_trait_labels()["register"] == "formal"  # a copy, not the field


def test_the_rest_of_the_result_is_untouched(tmp_path: Path) -> None:
    raw, loaded = write_and_read(tmp_path, "result")
    assert loaded == make_result()
    assert raw == make_result().export_dict()
