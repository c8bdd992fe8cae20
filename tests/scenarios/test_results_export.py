"""Seed 001's scenario fields through export and load: scenario_results, errors, linking fields."""

from __future__ import annotations

import json

import pytest

from pytest_karenina.results import VerificationResultSet
from pytest_karenina.results.scenario import ScenarioResultRecord
from tests.scenarios.scenario_helpers import answers, edge, execute, node, on_verdict, scenario
from tests.support.fake_llm import FakeLLM, fake_config

ASK = "Which drug for a headache?"
DOSE = "What dose?"


def executed_set() -> VerificationResultSet:
    config = fake_config()
    data = scenario(
        [
            node("ask", ASK, stateUpdateSource="lambda acc, p: {**acc, 'drug': p.get('drug')}"),
            node("dose", DOSE),
        ],
        [edge("ask", "dose", condition=on_verdict(False)), edge("ask", "__end__")],
        criteria=[{"name": "two_turns", "evaluateSource": "lambda r: r.turn_count == 2"}],
    )
    fake = answers(FakeLLM(), (ASK, "ibuprofen works."), (DOSE, "ibuprofen 400 mg."))
    run = execute(data, config, fake, replicate=2)
    results = VerificationResultSet(results=run.turn_results, scenario_results=[run.to_record()])
    results.record_error("scenario 'other' with answerer", RuntimeError("judge unreachable"))
    return results


def test_scenario_results_and_errors_are_written_as_seed_001_lists_them() -> None:
    data = json.loads(executed_set().to_export_json())

    (entry,) = data["scenario_results"]
    assert entry["scenario_id"] == "triage"
    assert entry["status"] == "completed"
    assert entry["path"] == ["ask", "dose"]
    assert entry["turn_count"] == 2
    assert entry["replicate"] == 2
    assert [turn["node_id"] for turn in entry["history"]] == ["ask", "dose"]
    assert entry["history"][0]["parsed_fields"] == {"drug": "ibuprofen"}
    assert entry["outcome_results"] == {"two_turns": True}
    assert entry["final_state"]["accumulated"] == {"drug": "ibuprofen"}
    assert entry["final_state"]["node_visits"] == {"ask": 1, "dose": 1}
    assert data["errors"] == [["scenario 'other' with answerer", "RuntimeError: judge unreachable"]]
    linked = [r["metadata"] for r in data["results"]]
    assert [(m["scenario_node"], m["scenario_turn"]) for m in linked] == [("ask", 0), ("dose", 1)]
    assert linked[1]["scenario_path"] == ["ask", "dose"]
    assert [t["verification_result_id"] for t in entry["history"]] == [
        m["result_id"] for m in linked
    ]


def test_export_and_load_round_trip() -> None:
    original = executed_set()

    loaded = VerificationResultSet.from_export_json(original.to_export_json())

    assert loaded.errors == original.errors
    assert loaded.scenario_results == original.scenario_results
    assert isinstance(loaded.scenario_results[0], ScenarioResultRecord)  # type: ignore[index]
    assert [r.metadata.scenario_path for r in loaded.results] == [["ask"], ["ask", "dose"]]
    assert loaded.to_export_json(export_timestamp="t", job_id="j") == original.to_export_json(
        export_timestamp="t", job_id="j"
    )


def test_a_malformed_scenario_entry_or_error_is_refused_naming_it() -> None:
    data = json.loads(executed_set().to_export_json())
    data["scenario_results"][0]["status"] = "maybe"
    with pytest.raises(ValueError, match="Invalid scenario result at index 0"):
        VerificationResultSet.from_export_json(json.dumps(data))
    data = json.loads(executed_set().to_export_json())
    data["errors"] = [["only a description"]]
    with pytest.raises(ValueError, match=r"errors\[0\] must be \[description, error\]"):
        VerificationResultSet.from_export_json(json.dumps(data))
