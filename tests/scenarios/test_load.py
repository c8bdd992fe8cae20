"""Loading a checkpoint's scenarios: malformed ones name checkpoint, scenario, field."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from pytest_karenina.scenarios import ScenarioDefinition, ScenarioError, load_scenarios
from pytest_karenina.scenarios.load import parse_scenario
from pytest_karenina.scenarios.models import ModelOverride
from tests.scenarios.scenario_helpers import edge, node, on_verdict, scenario
from tests.support.fake_llm import fake_config


def good() -> dict[str, object]:
    return scenario(
        [node("ask", "Which drug?"), node("dose", "What dose?")],
        [edge("ask", "dose", condition=on_verdict(True)), edge("ask", "__end__")],
    )


def error_of(data: object) -> str:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(data, checkpoint="bench.jsonld", limit=5.0)
    return str(caught.value)


def test_a_checkpoint_scenario_loads_with_its_graph() -> None:
    loaded = parse_scenario(good(), checkpoint="bench.jsonld", limit=5.0)
    assert loaded.entry_node == "ask"
    assert sorted(loaded.nodes) == ["ask", "dose"]
    assert loaded.nodes["dose"].question.text == "What dose?"
    assert [(e.source, e.target, e.conditional) for e in loaded.edges] == [
        ("ask", "dose", True),
        ("ask", "__end__", False),
    ]


def test_question_data_wins_over_the_schema_org_question() -> None:
    data = good()
    data["nodes"]["ask"]["questionData"] = {  # type: ignore[index]
        "question": "Which drug, really?",
        "raw_answer": "aspirin",
        "answer_template": "class Answer(BaseAnswer):\n    drug: str = ''\n",
        "keywords": ["pain"],
        "workspace_path": "cases/headache",
    }
    loaded = parse_scenario(data, checkpoint="bench.jsonld", limit=5.0)
    assert loaded.nodes["ask"].question.text == "Which drug, really?"
    assert loaded.nodes["ask"].question.keywords == ["pain"]
    assert loaded.nodes["ask"].question.workspace_path == "cases/headache"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: d.update(entryNode="start"), "entryNode: unknown node 'start'"),
        (
            lambda d: d["edges"].append(edge("ask", "clarify")),
            "edges[2].target: unknown node 'clarify'",
        ),
        (lambda d: d["edges"].append(edge("nope", "ask")), "edges[2].source: unknown node 'nope'"),
        (
            lambda d: d["edges"][0]["condition"].update(verify_with={"type": "Nope"}),
            "edges[0].condition.verify_with: unknown verification primitive 'Nope'",
        ),
        (
            lambda d: d["edges"][1].update(conditionSource="lambda s: s.turn >"),
            "edges[1].conditionSource: syntax error",
        ),
        (
            lambda d: d["nodes"]["dose"]["question"]["hasPart"].update(text=""),
            "nodes.dose.question: the answer template is missing",
        ),
        (
            lambda d: d["edges"][1].update(handover="transcript_materialize"),
            "edges[1].handover: 'transcript_materialize' is not supported",
        ),
        (
            lambda d: d.update(outcomeCriteria=[{"name": "x", "check": {"type": "TurnCheck"}}]),
            "outcomeCriteria['x'].check.scope: expected a scope object",
        ),
        (
            lambda d: d.update(outcomeCriteria=[{"name": "x"}]),
            "outcomeCriteria['x']: needs a check",
        ),
    ],
)
def test_a_malformed_scenario_names_checkpoint_scenario_and_field(change, field) -> None:  # type: ignore[no-untyped-def]
    data = good()
    change(data)
    message = error_of(data)
    assert message.startswith("bench.jsonld: scenario 'triage': ")
    assert field in message


def test_one_broken_scenario_does_not_stop_the_others() -> None:
    broken = {**good(), "name": "broken", "entryNode": "missing"}
    loaded = load_scenarios([broken, good(), "junk"], checkpoint="bench.jsonld", limit=5.0)
    assert isinstance(loaded[0], ScenarioError)
    assert "scenario 'broken': entryNode" in str(loaded[0])
    assert isinstance(loaded[1], ScenarioDefinition)
    assert isinstance(loaded[2], ScenarioError)
    assert str(loaded[2]).startswith("bench.jsonld: scenario #2: expected a scenario object")


def test_source_that_loops_while_compiling_is_stopped_by_the_time_limit() -> None:
    data = good()
    data["edges"][1]["conditionSource"] = "[x for x in iter(int, 1)]"  # type: ignore[index]
    with pytest.raises(ScenarioError, match=r"edges\[1\]\.conditionSource: .*did not finish"):
        parse_scenario(data, checkpoint="bench.jsonld", limit=0.2)


def test_a_model_override_keeps_the_run_s_server_and_its_key_only_for_that_server() -> None:
    answering, parsing = (models[0] for models in fake_config().stamped_models())
    base = answering.model_copy(
        update={
            "endpoint_base_url": "http://127.0.0.1:9/v1",
            "endpoint_api_key": SecretStr("sk-run-key"),
        }
    )

    same, _ = ModelOverride({"model_name": "bigger"}).apply(base, parsing)
    elsewhere, _ = ModelOverride({"endpoint_base_url": "http://other.example/v1"}).apply(
        base, parsing
    )

    assert (same.model_name, same.endpoint_base_url) == ("bigger", "http://127.0.0.1:9/v1")
    assert same.endpoint_api_key is not None
    assert same.endpoint_api_key.get_secret_value() == "sk-run-key"
    assert elsewhere.endpoint_base_url == "http://other.example/v1"
    assert elsewhere.endpoint_api_key is None
