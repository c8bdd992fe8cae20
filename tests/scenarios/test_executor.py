"""Running scenarios turn by turn through the real stage pipeline, with a scripted model."""

from __future__ import annotations

from pytest_karenina.llm.ports import ChatMessage
from pytest_karenina.rubrics.traits import RegexTrait, Rubric
from pytest_karenina.scenarios import ScenarioDefinition, run_scenario
from pytest_karenina.scenarios.load import parse_scenario
from pytest_karenina.scenarios.models import ScenarioEdge
from tests.scenarios.scenario_helpers import answers, edge, execute, node, on_verdict, scenario
from tests.support.fake_llm import FakeLLM, fake_config, fake_factory

ASK = "Which drug for a headache?"
CLARIFY = "Are you sure? The patient takes warfarin."
DOSE = "What dose?"


def branching() -> dict[str, object]:
    """ask -> dose when the answer names aspirin, else clarify -> (fallback) dose."""
    return scenario(
        [node("ask", ASK), node("clarify", CLARIFY), node("dose", DOSE)],
        [
            edge("ask", "dose", condition=on_verdict(True)),
            edge("ask", "clarify"),
            edge("clarify", "dose"),
        ],
    )


def test_a_passing_turn_takes_the_conditional_edge() -> None:
    config = fake_config()
    fake = answers(FakeLLM(), (ASK, "aspirin works."), (DOSE, "aspirin 500 mg."))

    run = execute(branching(), config, fake)

    assert run.status == "completed"
    assert run.path == ["ask", "dose"]
    assert run.turn_count == 2
    assert [t.verify_result for t in run.history] == [True, True]
    fake.assert_all_scripted()


def test_a_failing_turn_takes_the_fallback_and_each_turn_is_linked() -> None:
    config = fake_config()
    fake = answers(
        FakeLLM(),
        (ASK, "ibuprofen works."),
        (CLARIFY, "paracetamol then."),
        (DOSE, "paracetamol 1 g."),
    )

    run = execute(branching(), config, fake)

    assert run.path == ["ask", "clarify", "dose"]
    assert [t.verify_result for t in run.history] == [False, False, False]
    meta = [r.metadata for r in run.turn_results]
    assert [m.scenario_id for m in meta] == ["triage"] * 3
    assert [m.scenario_node for m in meta] == ["ask", "clarify", "dose"]
    assert [m.scenario_turn for m in meta] == [0, 1, 2]
    assert [m.scenario_path for m in meta] == [
        ["ask"],
        ["ask", "clarify"],
        ["ask", "clarify", "dose"],
    ]
    assert len({m.result_id for m in meta}) == 3
    assert [t.verification_result_id for t in run.history] == [m.result_id for m in meta]
    assert run.final_state.node_results["ask"]["parsed"] == {"drug": "ibuprofen"}


def test_later_turns_carry_the_conversation_so_far_and_the_judge_sees_its_own_question() -> None:
    config = fake_config()
    fake = answers(
        FakeLLM(), (ASK, "ibuprofen works."), (CLARIFY, "paracetamol then."), (DOSE, "x")
    )

    execute(branching(), config, fake)

    third = fake.calls("answer_generation")[2].messages
    system = [m for m in third if m.role == "system"]
    assert len(system) == 1
    assert [(m.role, m.content) for m in third if m.role != "system"] == [
        ("user", ASK),
        ("assistant", "ibuprofen works."),
        ("user", CLARIFY),
        ("assistant", "paracetamol then."),
        ("user", DOSE),
    ]
    judged = "\n".join(m.content for m in fake.calls("parsing")[2].messages)
    assert DOSE in judged and ASK not in judged


def test_a_state_update_feeds_a_condition_written_as_source() -> None:
    config = fake_config()
    data = scenario(
        [
            node(
                "ask",
                ASK,
                stateUpdateSource="lambda acc, p: {**acc, 'asked': acc.get('asked', 0) + 1}",
            ),
            node("done", DOSE),
        ],
        [
            edge("ask", "ask", conditionSource="lambda s: s.accumulated['asked'] < 3"),
            edge("ask", "done"),
        ],
    )
    fake = answers(FakeLLM(), (ASK, "ibuprofen works."), (DOSE, "aspirin 1 g."))

    run = execute(data, config, fake)

    assert run.path == ["ask", "ask", "ask", "done"]
    assert run.final_state.accumulated == {"asked": 3}
    assert run.final_state.node_visits == {"ask": 3, "done": 1}


def test_the_turn_limit_stops_a_loop_with_limit_reached() -> None:
    config = fake_config(scenario_turn_limit=4)
    data = scenario([node("ask", ASK)], [edge("ask", "ask")])
    fake = answers(FakeLLM(), (ASK, "ibuprofen works."))

    run = execute(data, config, fake)

    assert run.status == "limit_reached"
    assert run.turn_count == 4
    assert run.path == ["ask"] * 4


def test_conditional_edges_without_a_match_or_fallback_end_the_run_normally() -> None:
    config = fake_config()
    data = scenario(
        [node("ask", ASK), node("dose", DOSE)], [edge("ask", "dose", condition=on_verdict(True))]
    )
    fake = answers(FakeLLM(), (ASK, "ibuprofen works."))

    run = execute(data, config, fake)

    assert (run.status, run.path) == ("completed", ["ask"])


def test_a_condition_that_raises_stops_the_run_with_an_error_naming_the_edge() -> None:
    config = fake_config()
    data = scenario(
        [node("ask", ASK), node("dose", DOSE)],
        [
            edge("ask", "dose", conditionSource="lambda s: s.accumulated['missing']"),
            edge("ask", "__end__"),
        ],
    )
    fake = answers(FakeLLM(), (ASK, "aspirin works."))

    run = execute(data, config, fake)

    assert run.status == "error"
    assert run.terminal_failure is not None
    assert run.terminal_failure.category == "scenario_code"
    assert run.terminal_failure.node_id == "ask"
    assert "edges[0].conditionSource raised KeyError: 'missing'" in run.terminal_failure.reason
    assert run.path == ["ask"]


def test_an_edge_to_an_unknown_node_stops_the_run_with_a_graph_error() -> None:
    # Loading refuses such an edge; a definition built in code can still hold one.
    config = fake_config()
    loaded = parse_scenario(scenario([node("ask", ASK)], []), checkpoint="bench.jsonld", limit=None)
    broken = ScenarioDefinition(
        name=loaded.name,
        nodes=loaded.nodes,
        entry_node="ask",
        edges=(ScenarioEdge("ask", "nowhere"),),
    )
    fake = answers(FakeLLM(), (ASK, "aspirin works."))
    answering, parsing = (models[0] for models in config.stamped_models())

    run = run_scenario(broken, config, fake_factory(config, fake), answering, parsing)

    assert run.status == "error"
    assert run.terminal_failure is not None
    assert run.terminal_failure.category == "scenario_graph"
    assert "unknown node 'nowhere'" in run.terminal_failure.reason


def test_a_turn_that_errors_stops_the_run() -> None:
    config = fake_config()
    fake = FakeLLM().fail("answer_generation", RuntimeError("server down"))

    run = execute(branching(), config, fake)

    assert run.status == "error"
    assert run.terminal_failure is not None
    assert run.terminal_failure.node_id == "ask"
    assert run.terminal_failure.category != "content"
    assert run.path == ["ask"]


def test_outcome_criteria_judge_the_whole_execution() -> None:
    config = fake_config()
    criteria = [
        {
            "name": "completed",
            "description": "the run ends normally",
            "check": {
                "type": "ResultCheck",
                "field": "status",
                "expected": "completed",
                "verify_with": {"type": "ExactMatch"},
            },
        },
        {
            "name": "last_turn_correct",
            "check": {
                "type": "TurnCheck",
                "scope": {"type": "last_turn"},
                "field": "verify_result",
                "expected": True,
                "verify_with": {"type": "BooleanMatch"},
            },
        },
        {"name": "wrong_turns", "check": {"type": "CountTurns", "verify_result": False}},
        {"name": "short", "evaluateSource": "lambda r: r.turn_count <= 2"},
        {"name": "ends_at_dose", "evaluateSource": "def ends(r):\n    return r.path[-1] == 'dose'"},
        {"name": "broken", "evaluateSource": "lambda r: r.history[10]"},
    ]
    data = {**branching(), "outcomeCriteria": criteria}
    fake = answers(
        FakeLLM(), (ASK, "ibuprofen works."), (CLARIFY, "aspirin then."), (DOSE, "paracetamol.")
    )

    run = execute(data, config, fake)

    assert run.outcome_results == {
        "completed": True,
        "last_turn_correct": False,
        "wrong_turns": 2,
        "short": False,
        "ends_at_dose": True,
        "broken": False,
    }
    assert run.criterion_errors == {
        "broken": "ScenarioCodeError: outcomeCriteria['broken']."
        "evaluateSource raised IndexError: list index out of range"
    }


def test_a_transcript_handover_folds_the_conversation_into_the_next_question() -> None:
    config = fake_config()
    data = scenario(
        [node("ask", ASK), node("dose", DOSE)],
        [edge("ask", "dose", handover="transcript_prepend")],
    )
    fake = answers(FakeLLM(), (ASK, "aspirin works."), (DOSE, "aspirin 500 mg."))

    execute(data, config, fake)

    first, second = (call.messages for call in fake.calls("answer_generation"))
    system = first[0].content
    assert [m.role for m in second] == ["system", "user"]
    transcript = "\n".join(
        [
            f"[answerer:system:text] {system}",
            f"[__user__] {ASK}",
            "[answerer:assistant:text] aspirin works.",
        ]
    )
    assert second[1] == ChatMessage("user", f"{transcript}\n\n---\n\n{DOSE}")


def test_a_node_model_override_answers_that_turn_only() -> None:
    config = fake_config()
    override = {"answering_model": {"id": "second-opinion", "model_name": "other-model"}}
    data = scenario(
        [node("ask", ASK), node("dose", DOSE, modelOverride=override)], [edge("ask", "dose")]
    )
    fake = answers(FakeLLM(), (ASK, "aspirin works."), (DOSE, "aspirin 500 mg."))

    run = execute(data, config, fake)

    models = fake.models_for("answer_generation")
    assert [m.id if m else None for m in models] == ["answerer", "second-opinion"]
    assert [m.model_name if m else None for m in models][1] == "other-model"
    assert [r.metadata.answering.model_name for r in run.turn_results][1] == "other-model"


def test_a_state_update_that_raises_stops_the_run_with_an_error() -> None:
    config = fake_config()
    data = scenario(
        [node("ask", ASK, stateUpdateSource="lambda acc, p: acc['nope']"), node("dose", DOSE)],
        [edge("ask", "dose")],
    )
    fake = answers(FakeLLM(), (ASK, "aspirin works."))

    run = execute(data, config, fake)

    assert run.status == "error"
    assert run.terminal_failure is not None
    assert run.terminal_failure.reason.startswith(
        "nodes.ask.stateUpdateSource raised KeyError: 'nope'"
    )
    assert run.path == ["ask"]


def test_a_list_of_state_checks_must_all_hold() -> None:
    config = fake_config()
    visited_once = {
        "type": "state_check",
        "field": "node_visits.ask",
        "expected": 1,
        "verify_with": {"type": "NumericExact"},
    }
    data = scenario(
        [node("ask", ASK), node("dose", DOSE)],
        [edge("ask", "dose", condition=[on_verdict(False), visited_once]), edge("ask", "__end__")],
    )
    fake = answers(FakeLLM(), (ASK, "ibuprofen works."), (DOSE, "aspirin."))

    assert execute(data, config, fake).path == ["ask", "dose"]
    fake = answers(FakeLLM(), (ASK, "aspirin works."))
    assert execute(data, config, fake).path == ["ask"]


PLAN = """
class Answer(BaseAnswer):
    plan: str = VerifiedField(
        description="The plan the response recommends",
        ground_truth=ConditionalGroundTruth(
            source="node_results.ask.parsed.drug",
            cases={"aspirin": GroundTruthCase(value="take it with food")},
            default=GroundTruthCase(value="see a doctor"),
        ),
        verify_with=ExactMatch(),
    )
"""


def test_a_conditional_ground_truth_reads_an_earlier_node_of_the_scenario() -> None:
    config = fake_config()
    plan = node("plan", "What is the plan?")
    plan["question"]["hasPart"]["text"] = PLAN
    data = scenario([node("ask", ASK), plan], [edge("ask", "plan")])

    def run_with(drug_answer: str) -> bool | None:
        fake = FakeLLM().answer("Take it with food.", contains="What is the plan?")
        fake.parse_as({"plan": "take it with food"}, contains="Take it with food.")
        answers(fake, (ASK, drug_answer))
        return execute(data, config, fake).history[1].verify_result

    assert run_with("aspirin works.") is True
    assert run_with("ibuprofen works.") is False


def test_a_node_rubric_replaces_the_global_rubric_for_its_turn_and_feeds_node_results() -> None:
    config = fake_config()
    dose = node("dose", DOSE)
    dose["questionData"] = {
        "question": DOSE,
        "raw_answer": "500 mg",
        "answer_template": dose["question"]["hasPart"]["text"],
        "question_rubric": {"regex_traits": [{"name": "has_unit", "pattern": r"\bmg\b"}]},
    }
    data = scenario([node("ask", ASK), dose], [edge("ask", "dose")])
    definition = parse_scenario(data, checkpoint="bench.jsonld", limit=None)
    fake = answers(FakeLLM(), (ASK, "aspirin works."), (DOSE, "aspirin 500 mg."))
    answering, parsing = (models[0] for models in config.stamped_models())
    global_rubric = Rubric(regex_traits=[RegexTrait(name="polite", pattern="please")])

    run = run_scenario(
        definition,
        config,
        fake_factory(config, fake),
        answering,
        parsing,
        global_rubric=global_rubric,
    )

    scores = [r.rubric.get_all_trait_scores() if r.rubric else None for r in run.turn_results]
    assert scores == [{"polite": False}, {"has_unit": True}]
    assert run.final_state.node_results["dose"]["rubric"] == {"has_unit": True}


def test_a_condition_that_never_returns_is_stopped_by_the_template_time_limit() -> None:
    config = fake_config(template_time_limit=2.0)
    data = scenario(
        [node("ask", ASK), node("dose", DOSE)],
        [
            edge("ask", "dose", conditionSource="lambda s: [x for x in iter(int, 1)]"),
            edge("ask", "__end__"),
        ],
    )
    fake = answers(FakeLLM(), (ASK, "aspirin works."))

    run = execute(data, config, fake)

    assert run.status == "error"
    assert run.terminal_failure is not None
    assert run.terminal_failure.reason.startswith("edges[0].conditionSource: ")
    assert "did not finish" in run.terminal_failure.reason
