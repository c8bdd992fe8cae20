"""Export format 2.2 (spec 7.1): the fixture exports load and re-export byte for byte."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from pytest_karenina.results import (
    Failure,
    VerificationResult,
    VerificationResultSet,
    default_karenina_version,
    export_header,
    read_export_payload,
    strip_seed_only,
)
from pytest_karenina.results.scenario import ScenarioResultRecord
from tests.results.builders import export_text, metadata, result


def reexport(name: str, **overrides: Any) -> tuple[str, str]:
    """(fixture text, its re-export with the fixture's header values)."""
    text = export_text(name)
    data = json.loads(text)
    meta, summary = data["metadata"], data["metadata"]["job_summary"]
    kwargs: dict[str, Any] = {
        "job_id": meta["job_id"],
        "karenina_version": meta["karenina_version"],
        "verification_config": meta["verification_config"],
        "rubric_definition": data["shared_data"]["rubric_definition"],
        "start_time": summary["start_time"],
        "end_time": summary["end_time"],
        "is_complete": summary["is_complete"],
        "export_timestamp": meta["export_timestamp"],
        **overrides,
    }
    return text, VerificationResultSet.from_export_json(text).to_export_json(**kwargs)


@pytest.mark.parametrize("name", ["full", "empty"])
def test_fixture_reexports_byte_for_byte(name: str) -> None:
    text, again = reexport(name)
    assert again == text


def test_full_fixture_results_round_trip_field_by_field() -> None:
    text, again = reexport("full")
    expected, got = json.loads(text)["results"], json.loads(again)["results"]
    assert len(got) == len(expected) == 2
    for mine, theirs in zip(got, expected, strict=True):
        for section, value in theirs.items():
            assert mine[section] == value, section
        assert list(mine) == list(theirs)


def test_loaded_fixture_values() -> None:
    result_set = VerificationResultSet.from_export_json(export_text("full"))
    unicode_result, timeout_result = result_set.results
    assert unicode_result.metadata.question_text.startswith("Qu'est-ce que la température")
    assert unicode_result.metadata.failure is None
    assert unicode_result.metadata.completed_without_errors is True
    assert timeout_result.metadata.failure == Failure(
        category="timeout", stage="generate_answer", reason="timeout exceeded"
    )
    assert timeout_result.metadata.error == "timeout exceeded"
    assert timeout_result.metadata.completed_without_errors is False
    assert timeout_result.verify_result is True


def test_header_keys_and_job_summary() -> None:
    result_set = VerificationResultSet(
        results=[
            result(True),
            result(False, meta={"failure": Failure(category="content", stage="v", reason="r")}),
        ]
    )
    data = json.loads(result_set.to_export_json(start_time=10.0, end_time=12.5))
    assert list(data) == ["format_version", "metadata", "shared_data", "results"]
    assert data["format_version"] == "2.2"
    meta = data["metadata"]
    assert list(meta) == [
        "export_timestamp",
        "karenina_version",
        "job_id",
        "verification_config",
        "job_summary",
    ]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", meta["export_timestamp"])
    assert meta["karenina_version"] == default_karenina_version()
    assert meta["karenina_version"].startswith("pytest-karenina ")
    assert re.fullmatch(r"[0-9a-f-]{36}", meta["job_id"])
    assert meta["verification_config"] == {"answering_models": [], "parsing_models": []}
    assert meta["job_summary"] == {
        "total_questions": 2,
        "successful_count": 1,
        "failed_count": 1,
        "start_time": 10.0,
        "end_time": 12.5,
        "total_duration": 2.5,
        "is_complete": True,
    }
    assert data["shared_data"] == {"rubric_definition": None}


def test_duration_is_null_without_both_times() -> None:
    header = export_header(total=0, successful=0, start_time=1.0)
    assert header["metadata"]["job_summary"]["total_duration"] is None


def test_empty_export_layout() -> None:
    text = VerificationResultSet().to_export_json(export_timestamp="T", job_id="j")
    header = text.split(',"results":[', 1)[0]
    assert json.loads(header + "}")["metadata"]["job_id"] == "j"
    assert text.endswith(',"results":[\n\n]}\n')


def test_streamed_layout_one_result_per_line() -> None:
    text = VerificationResultSet(results=[result(), result(False)]).to_export_json()
    head, body = text.split(',"results":[\n', 1)
    assert "\n" not in head
    lines = body.split("\n")
    assert lines[-2:] == ["]}", ""]
    assert lines[0].endswith(",") and not lines[1].endswith(",")
    assert json.loads(lines[1]) == result(False).export_dict()


def test_scenario_results_follow_the_results() -> None:
    entry = {"scenario_id": "s", "status": "completed", "turn_count": 0}
    result_set = VerificationResultSet(results=[result()], scenario_results=[entry])
    text = result_set.to_export_json()
    assert text.endswith(',"scenario_results":[\n' + json.dumps(entry) + "\n]}\n")
    again = VerificationResultSet.from_export_json(text)
    assert again.scenario_results == [ScenarioResultRecord.model_validate(entry)]


def test_exports_omit_seed_only_fields_and_load_them_back() -> None:
    failing = result(
        None,
        meta={
            "error": "Stage ParseTemplate raised exception: ValueError: no JSON",
            "completed_without_errors": False,
            "failure": Failure(
                category="parsing",
                stage="ParseTemplate",
                reason="no JSON",
                details={
                    "error_message": "Stage ParseTemplate raised exception: ValueError: no JSON"
                },
            ),
        },
    )
    exported = failing.export_dict()
    assert "error" not in exported["metadata"]
    assert "completed_without_errors" not in exported["metadata"]
    assert "template_validation_error" not in exported["template"]
    assert exported == strip_seed_only(failing.model_dump(mode="json"))
    loaded = VerificationResultSet.from_export_json(
        VerificationResultSet(results=[failing]).to_export_json()
    )
    assert loaded.results == [failing]


def test_unicode_is_written_unescaped() -> None:
    text = VerificationResultSet(results=[result(meta={"question_text": "咖啡?"})]).to_export_json()
    assert "咖啡?" in text


def test_other_loadable_shapes() -> None:
    rows = [result().export_dict(), result(False).export_dict()]
    as_array = [{**row, "row_index": i + 1} for i, row in enumerate(rows)]
    shapes = [
        json.dumps(as_array),
        json.dumps({"runs": {"run_a": rows[:1], "run_b": rows[1:]}}),
        json.dumps({"k1": rows[0], "k2": rows[1]}),
    ]
    for text in shapes:
        loaded = VerificationResultSet.from_export_json(text)
        assert [r.verify_result for r in loaded] == [True, False]


@pytest.mark.parametrize("text", ['"text"', "{}", '{"format_version": "2.2"}', "3"])
def test_unknown_shapes_are_rejected(text: str) -> None:
    with pytest.raises(ValueError, match="not a Karenina results file"):
        read_export_payload(text)


def test_invalid_results_are_rejected() -> None:
    with pytest.raises(ValueError, match="metadata"):
        VerificationResultSet.from_export_json('{"results": [{"template": null}]}')


def test_result_without_template_exports() -> None:
    bare = VerificationResult(metadata=metadata())
    data = json.loads(VerificationResultSet(results=[bare]).to_export_json())
    assert data["results"][0]["template"] is None
    assert "error" not in data["results"][0]["metadata"]
