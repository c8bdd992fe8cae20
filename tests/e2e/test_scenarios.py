"""Scenarios end to end over the scripted OpenAI-compatible server: real HTTP for every turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_karenina.checkpoint import Benchmark
from pytest_karenina.llm.replay import ReplayStore
from pytest_karenina.pipeline.llm_stack import LLMStack
from pytest_karenina.results import VerificationResultSet
from pytest_karenina.scenarios import run_scenarios
from tests.e2e.scripting import is_parse_request, make_config
from tests.scenarios.scenario_helpers import edge, node, on_verdict, scenario
from tests.support.openai_server import OpenAIServer

ASK = "Which drug for a tension headache?"
DOSE = "What dose of it?"

TRIAGE = scenario(
    [
        node(
            "ask", ASK, stateUpdateSource="lambda acc, p: {**acc, 'asked': acc.get('asked', 0) + 1}"
        ),
        node("dose", DOSE),
    ],
    [
        edge("ask", "dose", condition=on_verdict(True)),
        edge("ask", "ask", conditionSource="lambda s: s.accumulated['asked'] < 2"),
        edge("ask", "dose"),
    ],
    name="headache-triage",
    criteria=[
        {
            "name": "ends_right",
            "check": {
                "type": "TurnCheck",
                "scope": {"type": "last_turn"},
                "field": "verify_result",
                "expected": True,
                "verify_with": {"type": "BooleanMatch"},
            },
        }
    ],
)


def parse_rule(server: OpenAIServer, answer: str, drug: str) -> None:
    server.add_rule({"drug": drug}, contains=answer, structured=True, when=is_parse_request)


def without_ids(results: VerificationResultSet) -> list[dict[str, Any]]:
    """The scenario records without the turns' result ids (they hold the run's timestamp)."""
    records = [r.model_dump(mode="json") for r in results.scenario_results or []]
    for record in records:
        for turn in record["history"]:
            turn.pop("verification_result_id")
    return records


def run(
    server: OpenAIServer, replay: ReplayStore | None = None, **options: Any
) -> VerificationResultSet:
    config = make_config(server, **options)
    llm = LLMStack(config, replay=replay)
    try:
        return run_scenarios(Benchmark(name="bench", scenarios=[TRIAGE]), config, llm=llm)
    finally:
        llm.close()


def test_the_answers_choose_the_branch_and_each_turn_sees_the_conversation(
    openai_server: OpenAIServer,
) -> None:
    # The first answer to the question is wrong, the second right: ask -> ask -> dose.
    openai_server.add_rule("Ibuprofen, I think.", last_contains=ASK, structured=False, times=1)
    openai_server.add_rule("Aspirin.", last_contains=ASK, structured=False)
    openai_server.add_rule("Aspirin 500 mg.", last_contains=DOSE, structured=False)
    parse_rule(openai_server, "Ibuprofen, I think.", "ibuprofen")
    parse_rule(openai_server, "Aspirin 500 mg.", "aspirin")
    parse_rule(openai_server, "Aspirin.", "aspirin")

    results = run(openai_server)

    (record,) = results.scenario_results or []
    assert (record.status, record.path, record.outcome_results) == (
        "completed",
        ["ask", "ask", "dose"],
        {"ends_right": True},
    )
    assert [t.verify_result for t in record.history] == [False, True, True]
    assert results.errors is None
    answering = [r for r in openai_server.chat_requests if not r.structured]
    last = [(m["role"], m["content"]) for m in answering[-1].messages if m["role"] != "system"]
    assert last == [
        ("user", ASK),
        ("assistant", "Ibuprofen, I think."),
        ("user", ASK),
        ("assistant", "Aspirin."),
        ("user", DOSE),
    ]


def test_replicates_run_concurrently_each_with_its_turns_in_order(
    openai_server: OpenAIServer,
) -> None:
    openai_server.add_rule("Aspirin.", last_contains=ASK, structured=False)
    openai_server.add_rule("Aspirin 500 mg.", last_contains=DOSE, structured=False)
    parse_rule(openai_server, "Aspirin 500 mg.", "aspirin")
    parse_rule(openai_server, "Aspirin.", "aspirin")

    results = run(openai_server, replicate_count=3, async_enabled=True, async_max_workers=2)

    records = results.scenario_results or []
    assert [(r.replicate, r.path) for r in records] == [(n, ["ask", "dose"]) for n in (1, 2, 3)]
    turns = [(r.metadata.replicate, r.metadata.scenario_turn) for r in results.results]
    assert turns == [(n, t) for n in (1, 2, 3) for t in (0, 1)]
    loaded = VerificationResultSet.from_export_json(results.to_export_json())
    assert loaded.scenario_results == records


def test_a_recorded_scenario_replays_strictly_without_the_server(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.add_rule("Ibuprofen, I think.", last_contains=ASK, structured=False, times=1)
    openai_server.add_rule("Aspirin.", last_contains=ASK, structured=False)
    openai_server.add_rule("Aspirin 500 mg.", last_contains=DOSE, structured=False)
    parse_rule(openai_server, "Ibuprofen, I think.", "ibuprofen")
    parse_rule(openai_server, "Aspirin 500 mg.", "aspirin")
    parse_rule(openai_server, "Aspirin.", "aspirin")
    path = tmp_path / "replay.jsonl"
    recorded = run(openai_server, ReplayStore(path, "record"))
    live_calls = len(openai_server.chat_requests)
    openai_server.reset()  # no rules: any live call would get no scripted answer

    store = ReplayStore(path, "strict")
    replayed = run(openai_server, store)

    assert len(openai_server.chat_requests) == 0
    assert store.stats()["hits"] == live_calls
    assert without_ids(replayed) == without_ids(recorded)
    assert [r.template.raw_llm_response for r in replayed.results if r.template] == [
        r.template.raw_llm_response for r in recorded.results if r.template
    ]
