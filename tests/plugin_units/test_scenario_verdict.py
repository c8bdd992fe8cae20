"""A scenario item's verdict: pass, fail naming the criterion and the turn, error; the path."""

from __future__ import annotations

from typing import Any

from pytest_karenina.plugin.verdict.scenario import scenario_verdict
from pytest_karenina.scenarios.load import parse_scenario
from tests.scenarios.scenario_helpers import answers, edge, execute, node, on_verdict, scenario
from tests.support.fake_llm import FakeLLM, fake_config

ASK = "Which drug for a headache?"
CLARIFY = "Are you sure?"
DOSE = "What dose?"

LAST_TURN_RIGHT = {
    "name": "ends_right",
    "description": "the last answer is right",
    "check": {
        "type": "TurnCheck",
        "scope": {"type": "last_turn"},
        "field": "verify_result",
        "expected": True,
        "verify_with": {"type": "BooleanMatch"},
    },
}
EVERY_TURN_RIGHT = {**LAST_TURN_RIGHT, "name": "all_right", "description": ""}
EVERY_TURN_RIGHT["check"] = {**LAST_TURN_RIGHT["check"], "scope": {"type": "all_turns"}}  # type: ignore[dict-item]


def triage(criteria: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return scenario(
        [node("ask", ASK), node("clarify", CLARIFY), node("dose", DOSE)],
        [
            edge("ask", "dose", condition=on_verdict(True)),
            edge("ask", "clarify"),
            edge("clarify", "dose"),
        ],
        criteria=criteria,
    )


def verdict_of(data: dict[str, Any], *turns: tuple[str, str], **config: Any):  # type: ignore[no-untyped-def]
    settings = fake_config(**config)
    run = execute(data, settings, answers(FakeLLM(), *turns))
    return scenario_verdict(run, parse_scenario(data, checkpoint="b.jsonld", limit=None))


def test_every_criterion_holding_passes() -> None:
    verdict = verdict_of(
        triage([LAST_TURN_RIGHT]),
        (ASK, "ibuprofen."),
        (CLARIFY, "aspirin."),
        (DOSE, "aspirin 1 g."),
    )
    assert verdict.outcome == "pass"
    assert verdict.explanation() == "passed\npath: ask -> clarify -> dose"


def test_a_failed_criterion_names_itself_the_turn_that_broke_it_and_the_path() -> None:
    verdict = verdict_of(
        triage([LAST_TURN_RIGHT, EVERY_TURN_RIGHT]),
        (ASK, "ibuprofen."),
        (CLARIFY, "aspirin."),
        (DOSE, "aspirin 1 g."),
    )
    assert (verdict.outcome, verdict.criterion, verdict.turn) == ("fail", "all_right", 0)
    assert verdict.explanation() == (
        "criterion 'all_right' did not hold: broken at turn 0, node 'ask'\n"
        "path: ask -> clarify -> dose"
    )
    verdict = verdict_of(
        triage([LAST_TURN_RIGHT]), (ASK, "ibuprofen."), (CLARIFY, "aspirin."), (DOSE, "none.")
    )
    assert verdict.reason == (
        "criterion 'ends_right' did not hold (the last answer is right): "
        "broken at turn 2, node 'dose'"
    )


def test_without_criteria_every_turn_must_pass_and_the_run_complete() -> None:
    passing = verdict_of(triage(), (ASK, "aspirin."), (DOSE, "aspirin 1 g."))
    assert passing.outcome == "pass"
    failing = verdict_of(triage(), (ASK, "ibuprofen."), (CLARIFY, "aspirin."), (DOSE, "aspirin."))
    assert (failing.outcome, failing.turn) == ("fail", 0)
    assert failing.reason == "a turn did not pass: broken at turn 0, node 'ask'"
    loop = scenario([node("ask", ASK)], [edge("ask", "ask")])
    limited = verdict_of(loop, (ASK, "aspirin."), scenario_turn_limit=3)
    assert (limited.outcome, limited.turn) == ("fail", 2)
    assert limited.reason == "did not complete: the turn limit was reached after 3 turns"


def test_a_broken_graph_or_a_criterion_that_raises_is_an_error() -> None:
    raising = triage()
    raising["edges"][0] = edge("ask", "dose", conditionSource="lambda s: 1 / 0")
    verdict = verdict_of(raising, (ASK, "aspirin."))
    assert verdict.outcome == "error"
    assert verdict.reason is not None and verdict.reason.startswith(
        "stopped at node 'ask' (scenario_code: edges[0].conditionSource raised ZeroDivisionError"
    )
    assert verdict.explanation().endswith("\npath: ask")
    broken = triage([{"name": "oops", "evaluateSource": "lambda r: r.nope"}])
    verdict = verdict_of(broken, (ASK, "aspirin."), (DOSE, "aspirin 1 g."))
    assert (verdict.outcome, verdict.criterion) == ("error", "oops")
