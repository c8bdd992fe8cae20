"""Replicates under record and replay, through pytest over real HTTP: each replicate's calls
are recorded apart, so strict replay reproduces three different answers (and the flaky
verdict and pass-rate interval they make) without a request; a store holding one run's
entries answers replicate 1 only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.plugin.plugin_helpers import capitals_checkpoint, endpoint_args
from tests.support.openai_server import OpenAIServer

REPLICATES_NOTE = (
    "; replicate 1 uses the keys of a run without replicates, replicates 2-3 their own"
)


def script(server: OpenAIServer, *cities: str) -> None:
    """Answers the cities in order, one call each; the judge reads the city back."""
    for city in cities:
        server.add_rule(f"It is {city}.", structured=False, times=1)
    for city in set(cities):
        server.add_rule({"capital": city}, structured=True, contains=f"It is {city}.")


def base_args(pytester: pytest.Pytester, server: OpenAIServer) -> list[str]:
    path = capitals_checkpoint(pytester.path, {"q1": ("France", "Paris")})
    store = pytester.path / "calls.jsonl"
    return ["--karenina", str(path), *endpoint_args(server), f"--karenina-replay-store={store}"]


def answers(export: Path) -> list[tuple[int, str]]:
    """(replicate, raw answer) of each result of an export, by replicate."""
    records = json.loads(export.read_text())["results"]
    return sorted((r["metadata"]["replicate"], r["template"]["raw_llm_response"]) for r in records)


def pass_rate_line(result: pytest.RunResult) -> str:
    return next(line for line in result.outlines if line.startswith("pass rate "))


def test_strict_replay_reproduces_each_replicates_answer_without_a_request(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    script(openai_server, "Paris", "Lyon", "Paris")
    args = [*base_args(pytester, openai_server), "--karenina-replicates=3"]
    recorded_export = pytester.path / "recorded.json"

    recorded = pytester.runpytest(
        *args, "--karenina-replay", "record", f"--karenina-results={recorded_export}"
    )

    recorded.assert_outcomes(passed=2, failed=1)
    recorded.stdout.fnmatch_lines(
        [f"karenina replay: 6 entries used, 6 added, 0 unused of 6 in calls.jsonl{REPLICATES_NOTE}"]
    )
    calls = len(openai_server.chat_requests)
    assert calls == 6
    replayed_export = pytester.path / "replayed.json"

    replayed = pytester.runpytest(
        *args, "--karenina-replay", "strict", f"--karenina-results={replayed_export}"
    )

    replayed.assert_outcomes(passed=2, failed=1)
    assert answers(replayed_export) == answers(recorded_export)
    said = sorted(text.splitlines()[-1] for _, text in answers(replayed_export))
    assert said == ["It is Lyon.", "It is Paris.", "It is Paris."]
    assert pass_rate_line(replayed) == pass_rate_line(recorded)
    assert pass_rate_line(replayed).startswith("pass rate 66.7% (2/3 items), 95% CI ")
    replayed.stdout.fnmatch_lines(
        [f"karenina replay: 6 entries used, 0 added, 0 unused of 6 in calls.jsonl{REPLICATES_NOTE}"]
    )

    majority = pytester.runpytest(
        *args, "--karenina-replay", "strict", "--karenina-replicate-policy=majority", "-v"
    )

    majority.assert_outcomes(passed=1)
    majority.stdout.fnmatch_lines(["*PASSED (flaky 2/3)*", "flaky: 1 items (q1 [test-model] 2/3)"])
    assert len(openai_server.chat_requests) == calls  # both replays: not one request


def test_a_store_of_a_run_without_replicates_answers_replicate_1_only(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    script(openai_server, "Paris")
    args = base_args(pytester, openai_server)
    pytester.runpytest(*args, "--karenina-replay", "record").assert_outcomes(passed=1)

    replayed = pytester.runpytest(*args, "--karenina-replay", "strict", "--karenina-replicates=3")

    replayed.assert_outcomes(passed=1, errors=2)
    out = replayed.stdout.str()
    for replicate in (2, 3):
        assert (
            f"strict replay: no recorded reply for question 'q1', replicate {replicate}, "
            "call kind 'answer_generation'" in out
        )
    assert "replicate 1, call kind" not in out
    replayed.stdout.fnmatch_lines([
        "outcomes: error:replay 2, pass 1",
        f"karenina replay: 2 entries used, 0 added, 0 unused of 2 in calls.jsonl{REPLICATES_NOTE}",
    ])  # fmt: skip
