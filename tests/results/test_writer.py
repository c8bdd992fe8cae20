"""``ExportWriter``: streaming, atomic finalisation and recovery after interruptions."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.results import (
    ExportWriter,
    Failure,
    VerificationResultSet,
    sidecar_path,
)
from tests.results.builders import export_text, result

FAILED = {"failure": Failure(category="content", stage="verify_template", reason="r")}


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def test_close_writes_the_same_file_as_to_export_json(tmp_path: Path) -> None:
    results = [result(True), result(False, meta=FAILED)]
    target = tmp_path / "out" / "run.json"
    header: dict[str, Any] = {"job_id": "j", "karenina_version": "v"}
    header["verification_config"] = {"answering_models": [], "parsing_models": []}
    writer = ExportWriter(target, start_time=100.0, rubric_definition={"llm_traits": []}, **header)
    for item in results:
        writer.add(item)
    assert writer.count == 2
    assert writer.close(end_time=160.0) == target
    assert not sidecar_path(target).exists()
    assert not target.with_name("run.json.tmp").exists()
    text = target.read_text(encoding="utf-8")
    expected = VerificationResultSet(results=results).to_export_json(
        start_time=100.0,
        end_time=160.0,
        rubric_definition={"llm_traits": []},
        export_timestamp=load(target)["metadata"]["export_timestamp"],
        **header,
    )
    assert text == expected
    assert load(target)["metadata"]["job_summary"]["successful_count"] == 1


def test_empty_run_has_the_empty_layout(tmp_path: Path) -> None:
    target = tmp_path / "empty.json"
    ExportWriter(target).close()
    assert target.read_text(encoding="utf-8").endswith(',"results":[\n\n]}\n')


def test_results_reach_the_sidecar_as_they_arrive(tmp_path: Path) -> None:
    target = tmp_path / "run.json"
    writer = ExportWriter(target)
    writer.add(result())
    lines = sidecar_path(target).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    assert json.loads(lines[1]) == result().export_dict()
    assert not target.exists()
    writer.close()


def test_dumped_dicts_are_accepted(tmp_path: Path) -> None:
    target = tmp_path / "run.json"
    with ExportWriter(target) as writer:
        writer.add(result(False, meta=FAILED).model_dump(mode="json"))
    data = load(target)
    assert "error" not in data["results"][0]["metadata"]
    assert data["metadata"]["job_summary"]["failed_count"] == 1


def test_interrupted_with_block_still_leaves_a_valid_incomplete_file(tmp_path: Path) -> None:
    target = tmp_path / "run.json"
    with pytest.raises(KeyboardInterrupt), ExportWriter(target) as writer:
        writer.add(result())
        raise KeyboardInterrupt
    data = load(target)
    assert data["metadata"]["job_summary"]["is_complete"] is False
    assert len(data["results"]) == 1


def test_recover_after_a_hard_kill_skips_a_torn_line(tmp_path: Path) -> None:
    target = tmp_path / "run.json"
    writer = ExportWriter(target, job_id="job-1", start_time=5.0)
    writer.add(result())
    writer.add(result(False, meta=FAILED))
    writer._file.write('{"metadata": {"question_id": "torn')
    writer._file.close()  # the process dies here: no ExportWriter.close()
    assert ExportWriter.recover(target, end_time=9.0) == target
    data = load(target)
    assert data["metadata"]["job_id"] == "job-1"
    assert data["metadata"]["job_summary"] == {
        "total_questions": 2,
        "successful_count": 1,
        "failed_count": 1,
        "start_time": 5.0,
        "end_time": 9.0,
        "total_duration": 4.0,
        "is_complete": False,
    }
    assert not sidecar_path(target).exists()
    assert VerificationResultSet.from_export_json(export_text_of(target)).results[0] == result()
    assert ExportWriter.recover(target) is None


def export_text_of(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_an_interrupted_write_does_not_corrupt_later_results(tmp_path: Path) -> None:
    target = tmp_path / "run.json"
    writer = ExportWriter(target)
    real_write = writer._file.write

    def torn_write(text: str) -> int:
        real_write(text[:10])
        raise KeyboardInterrupt

    writer._file.write = torn_write  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        writer.add(result(False))
    writer._file.write = real_write  # type: ignore[method-assign]
    writer.add(result(True))
    writer.close()
    data = load(target)
    assert [r["template"]["verify_result"] for r in data["results"]] == [True]
    assert data["metadata"]["job_summary"]["total_questions"] == 1


def test_close_twice_and_add_after_close(tmp_path: Path) -> None:
    target = tmp_path / "run.json"
    writer = ExportWriter(target)
    writer.close()
    first = target.read_text(encoding="utf-8")
    writer.close()
    assert target.read_text(encoding="utf-8") == first
    with pytest.raises(RuntimeError, match="closed"):
        writer.add(result())


def test_concurrent_adds_keep_every_line_whole(tmp_path: Path) -> None:
    target = tmp_path / "run.json"
    writer = ExportWriter(target)
    big = result(meta={"question_text": "x" * 20_000})

    def add_many() -> None:
        for _ in range(25):
            writer.add(big)

    threads = [threading.Thread(target=add_many) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    writer.close()
    assert len(load(target)["results"]) == 100


def test_fixture_results_stream_unchanged(tmp_path: Path) -> None:
    fixture = json.loads(export_text("full"))
    target = tmp_path / "run.json"
    with ExportWriter(target) as writer:
        for item in VerificationResultSet.from_export_json(export_text("full")):
            writer.add(item)
    assert load(target)["results"] == fixture["results"]


def test_item_records_follow_the_results_and_count_nowhere(tmp_path: Path) -> None:
    target = tmp_path / "run.json"
    writer = ExportWriter(target, run={"shard": [1, 2]})
    writer.add_item({"nodeid": "b.jsonld::q1", "outcome": "passed"})
    writer.add(result())
    writer.add_item({"nodeid": "b.jsonld::q2", "outcome": "failed", "reason": "a\ud800b"})
    writer.close(run={"shard": [1, 2], "selection": {"collected": 2, "selected": 2}})
    data = load(target)
    assert data["metadata"]["job_summary"]["total_questions"] == 1
    assert data["pytest_karenina"]["run"]["selection"] == {"collected": 2, "selected": 2}
    assert [item["nodeid"] for item in data["pytest_karenina"]["items"]] == [
        "b.jsonld::q1", "b.jsonld::q2",
    ]  # fmt: skip
    assert list(data) == ["format_version", "metadata", "shared_data", "results", "pytest_karenina"]
    assert VerificationResultSet.from_export_json(export_text_of(target)).results == [result()]


def test_a_torn_item_record_is_skipped_on_recovery(tmp_path: Path) -> None:
    target = tmp_path / "run.json"
    writer = ExportWriter(target, run={"shard": None})
    writer.add_item({"nodeid": "b.jsonld::q1"})
    writer.add(result())
    writer._file.write('{"pytest_karenina_item":{"nodeid": "b.js')
    writer._file.close()
    ExportWriter.recover(target)
    data = load(target)
    assert data["pytest_karenina"]["items"] == [{"nodeid": "b.jsonld::q1"}]
    assert data["metadata"]["job_summary"]["total_questions"] == 1


def test_close_writes_scenario_results_and_errors_as_a_result_set_does(tmp_path: Path) -> None:
    record = {"scenario_id": "triage", "status": "error", "turn_count": 1, "path": ["ask"]}
    errors = [("Scenario 'triage' stopped at node 'ask'", "ScenarioExecutionFailure: boom")]
    target = tmp_path / "run.json"
    writer = ExportWriter(target, start_time=100.0, job_id="j", karenina_version="v")
    writer.add(result(True))
    writer.close(end_time=160.0, scenario_results=[record], errors=errors)

    loaded = VerificationResultSet.from_export_json(target.read_text(encoding="utf-8"))

    assert [r.model_dump(exclude_defaults=True) for r in loaded.scenario_results or []] == [record]
    assert loaded.errors == errors
