"""``run_scenarios``: every scenario of a benchmark x model pair x replicate, one result set."""

from __future__ import annotations

import json

from pytest_karenina.checkpoint import Benchmark
from pytest_karenina.results import VerificationResultSet
from pytest_karenina.scenarios import run_scenarios
from tests.scenarios.scenario_helpers import answers, edge, node, on_verdict, scenario
from tests.support.fake_llm import FakeLLM, fake_config, fake_factory

ASK = "Which drug for a headache?"
DOSE = "What dose?"


def benchmark() -> Benchmark:
    good = scenario(
        [node("ask", ASK), node("dose", DOSE)],
        [edge("ask", "dose", condition=on_verdict(True)), edge("ask", "__end__")],
    )
    broken = {**scenario([node("ask", ASK)], [], name="broken"), "entryNode": "gone"}
    crashing = scenario(
        [node("ask", ASK), node("dose", DOSE)],
        [edge("ask", "dose", conditionSource="lambda s: 1 / 0"), edge("ask", "__end__")],
        name="crashing",
    )
    return Benchmark(name="triage-bench", scenarios=[good, broken, crashing])


def test_every_scenario_runs_per_replicate_and_problems_land_in_errors() -> None:
    config = fake_config(replicate_count=2)
    fake = answers(FakeLLM(), (ASK, "aspirin works."), (DOSE, "aspirin 500 mg."))

    results = run_scenarios(
        benchmark(), config, checkpoint="bench.jsonld", llm=fake_factory(config, fake)
    )

    records = results.scenario_results or []
    assert [(r.scenario_id, r.replicate, r.status) for r in records] == [
        ("triage", 1, "completed"),
        ("triage", 2, "completed"),
        ("crashing", 1, "error"),
        ("crashing", 2, "error"),
    ]
    assert [(r.metadata.scenario_id, r.metadata.scenario_turn) for r in results.results] == [
        ("triage", 0),
        ("triage", 1),
        ("triage", 0),
        ("triage", 1),
        ("crashing", 0),
        ("crashing", 0),
    ]
    assert [r.metadata.replicate for r in results.results[:4]] == [1, 1, 2, 2]
    errors = results.errors or []
    assert len(errors) == 3
    assert (
        errors[0][0]
        == "bench.jsonld: scenario 'broken': entryNode: unknown node 'gone' (nodes: ['ask'])"
    )
    assert errors[1][0].startswith(
        "Scenario 'crashing' stopped at node 'ask' (scenario_code in stage 'scenario'): "
        "edges[0].conditionSource raised ZeroDivisionError"
    )
    assert errors[1][1].startswith("ScenarioExecutionFailure: Scenario 'crashing'")
    again = VerificationResultSet.from_export_json(results.to_export_json())
    assert again.errors == results.errors
    assert json.loads(results.to_export_json())["scenario_results"][0]["path"] == ["ask", "dose"]
