"""Re-judging recorded answers (``--karenina-replay answers``) through pytest over real HTTP:
the answers come from the store, strictly, and only judge calls reach the server, so a
template or judge change shows in the verdicts without asking the model again; a judge store
records the judge calls, and then replays them, so a run makes no request at all.

The model under test also judges (no ``--karenina-parsing-model``): one model config on both
sides, split by the kind of call. The scripted server tells them apart: answer calls are
plain chat, judge calls ask for structured output.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.plugin.plugin_helpers import capitals_checkpoint, endpoint_args
from tests.support.openai_rules import RecordedRequest
from tests.support.openai_server import OpenAIServer

RECORDED = {"q1": ("France", "Paris"), "q2": ("Italy", "Rome"), "q3": ("Japan", "Tokyo")}


def script_answers(server: OpenAIServer, countries: Mapping[str, tuple[str, str]]) -> None:
    """The model names each country's capital."""
    for country, capital in countries.values():
        server.add_rule(f"It is {capital}.", structured=False, contains=f"capital of {country}")


def script_judge(server: OpenAIServer, reads: Mapping[str, str]) -> None:
    """The judge reads ``reads[said]`` from the answer naming ``said``."""
    for said, read in reads.items():
        server.add_rule({"capital": read}, structured=True, contains=f"It is {said}.")


def by_kind(requests: list[RecordedRequest]) -> tuple[int, int]:
    """(answering requests, judge requests)."""
    judge = sum(1 for request in requests if request.structured)
    return len(requests) - judge, judge


def record(pytester: pytest.Pytester, server: OpenAIServer, dist: list[str]) -> list[str]:
    """Record a run of three questions (answers and judge calls); returns the run's args."""
    script_answers(server, RECORDED)
    script_judge(server, {capital: capital for _, capital in RECORDED.values()})
    path = capitals_checkpoint(pytester.path, RECORDED)
    store = pytester.path / "calls.jsonl"
    args = ["--karenina", str(path), *endpoint_args(server), f"--karenina-replay-store={store}"]
    pytester.runpytest(*args, "--karenina-replay", "record", *dist).assert_outcomes(passed=3)
    assert by_kind(server.chat_requests) == (3, 3)
    server.reset()
    return args


def test_answers_mode_re_judges_recorded_answers_with_live_judge_calls_only(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    args = record(pytester, openai_server, dist)
    store = pytester.path / "calls.jsonl"
    recorded = store.read_bytes()
    # The template of q1 now expects Lyon, the judge now reads Kyoto from Tokyo, and q4 is a
    # new question nobody recorded an answer to.
    capitals_checkpoint(
        pytester.path, {**RECORDED, "q1": ("France", "Lyon"), "q4": ("Spain", "Madrid")}
    )
    script_judge(openai_server, {"Paris": "Paris", "Rome": "Rome", "Tokyo": "Kyoto"})

    result = pytester.runpytest(*args, "--karenina-replay", "answers", *dist)

    result.assert_outcomes(passed=1, failed=2, errors=1)
    assert by_kind(openai_server.chat_requests) == (0, 3)
    result.stdout.fnmatch_lines_random([
        "karenina: *replay answers (calls.jsonl; judge live)",
        "FAILED *::q1 - capital: 'Paris' != 'Lyon'",  # the new template
        "FAILED *::q3 - capital: 'Kyoto' != 'Tokyo'",  # the judge's new reading
        "*strict replay: no recorded reply for question 'q4', call kind 'answer_generation'*",
        "outcomes: error:replay 1, pass 1, verify_fail 2",
        "karenina replay: answers: 3 entries used of 6 in calls.jsonl (strict)",
        "karenina replay: judge: 3 calls live, not recorded",
    ])  # fmt: skip
    assert store.read_bytes() == recorded  # the answers' store is only read


def test_a_judge_store_records_the_judge_calls_then_replays_them_without_a_request(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    args = record(pytester, openai_server, dist)
    script_judge(openai_server, {"Paris": "Paris", "Rome": "Rome", "Tokyo": "Kyoto"})
    judge_store = pytester.path / "judge.jsonl"
    answers = [*args, "--karenina-replay", "answers", *dist]
    judged = [*answers, f"--karenina-judge-replay-store={judge_store}"]

    recorded = pytester.runpytest(*judged, "--karenina-judge-replay", "record")

    recorded.assert_outcomes(passed=2, failed=1)
    assert by_kind(openai_server.chat_requests) == (0, 3)
    recorded.stdout.fnmatch_lines([
        "karenina: *replay answers (calls.jsonl; judge record judge.jsonl)",
        "karenina replay: answers: 3 entries used of 6 in calls.jsonl (strict)",
        "karenina replay: judge: 3 calls live; judge.jsonl (record): 3 entries used, "
        "3 added, 0 unused of 3",
    ])  # fmt: skip
    entries = [json.loads(line) for line in judge_store.read_text().splitlines()]
    assert sorted(entry["call_kind"] for entry in entries) == ["parsing"] * 3
    openai_server.reset()  # from here on any request would be unanswered

    strict = pytester.runpytest(*judged, "--karenina-judge-replay", "strict")

    strict.assert_outcomes(passed=2, failed=1)
    assert openai_server.chat_requests == []
    strict.stdout.fnmatch_lines([
        "karenina replay: judge: 0 calls live; judge.jsonl (strict): 3 entries used, "
        "0 added, 0 unused of 3",
    ])  # fmt: skip

    by_default = pytester.runpytest(*judged)  # a judge store without a mode: replay

    by_default.assert_outcomes(passed=2, failed=1)
    assert openai_server.chat_requests == []
    by_default.stdout.fnmatch_lines(["karenina: *replay answers (calls.jsonl; judge replay *)"])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--karenina-replay", "answer"],
         "--karenina-replay: 'answer' is not one of off, record, replay, strict, answers"),
        (["--karenina-replay", "answers", "--karenina-judge-replay", "live"],
         "--karenina-judge-replay: 'live' is not one of off, record, replay, strict"),
        (["--karenina-replay", "answers", "--karenina-judge-replay-store", "{tmp}"],
         "--karenina-judge-replay-store: {tmp} is a directory; name the store's file"),
        (["--karenina-replay", "record", "--karenina-replay-store", "{tmp}"],
         "--karenina-replay-store: {tmp} is a directory; name the store's file"),
        (["--karenina-replay", "answers", "--karenina-replay-store", "{tmp}/calls.jsonl",
          "--karenina-judge-replay-store", "{tmp}/calls.jsonl"],
         "--karenina-judge-replay-store: {tmp}/calls.jsonl is the answers' store"),
        (["--karenina-replay", "strict", "--karenina-judge-replay", "record"],
         "--karenina-judge-replay: applies only with --karenina-replay answers"),
        (["--karenina-judge-replay-store", "{tmp}/judge.jsonl"],
         "--karenina-judge-replay-store: applies only with --karenina-replay answers"),
        (["--karenina-replay", "answers", "--karenina-judge-replay", "off",
          "--karenina-judge-replay-store", "{tmp}/judge.jsonl"],
         "--karenina-judge-replay-store: unused with --karenina-judge-replay off"),
        (["--karenina-replay", "answers", "--karenina-replay-prune"],
         "--karenina-replay-prune: not with --karenina-replay answers"),
    ],
)  # fmt: skip
def test_bad_replay_options_are_usage_errors_naming_the_option(
    pytester: pytest.Pytester, options: list[str], message: str
) -> None:
    tmp = str(pytester.path)
    path = capitals_checkpoint(pytester.path)
    model = ["--karenina-answering-model", "openai:gpt-4.1-mini", "-p", "no:cacheprovider"]
    args = [option.format(tmp=tmp) for option in options]

    result = pytester.runpytest("--karenina", str(path), *model, *args)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message.format(tmp=tmp) in result.stderr.str()
    assert not Path(tmp, "judge.jsonl").exists()
