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

from pytest_karenina.checkpoint import load_checkpoint, save_checkpoint
from pytest_karenina.llm.assumed import approx_tokens, request_tokens, schema_instance
from pytest_karenina.llm.ports import ChatMessage, ModelRequest
from tests.plugin.plugin_helpers import capitals_checkpoint, endpoint_args
from tests.support.openai_rules import RecordedRequest
from tests.support.openai_server import OpenAIServer

RECORDED = {"q1": ("France", "Paris"), "q2": ("Italy", "Rome"), "q3": ("Japan", "Tokyo")}
JUDGE_USAGE = {"prompt_tokens": 2000, "completion_tokens": 50}


def script_answers(server: OpenAIServer, countries: Mapping[str, tuple[str, str]]) -> None:
    """The model names each country's capital."""
    for country, capital in countries.values():
        server.add_rule(f"It is {capital}.", structured=False, contains=f"capital of {country}")


def script_judge(server: OpenAIServer, reads: Mapping[str, str]) -> None:
    """The judge reads ``reads[said]`` from the answer naming ``said``."""
    for said, read in reads.items():
        server.add_rule({"capital": read}, structured=True, contains=f"It is {said}.",
                        usage=JUDGE_USAGE)  # fmt: skip


def by_kind(requests: list[RecordedRequest]) -> tuple[int, int]:
    """(answering requests, judge requests)."""
    judge = sum(1 for request in requests if request.structured)
    return len(requests) - judge, judge


def record(
    pytester: pytest.Pytester, server: OpenAIServer, *options: str, questions: int = 3
) -> list[str]:
    """Record a run of the three questions (``questions`` of them selected by ``options``):
    answers and judge calls; returns the run's arguments."""
    script_answers(server, RECORDED)
    script_judge(server, {capital: capital for _, capital in RECORDED.values()})
    path = capitals_checkpoint(pytester.path, RECORDED)
    store = pytester.path / "calls.jsonl"
    args = ["--karenina", str(path), *endpoint_args(server), f"--karenina-replay-store={store}"]
    recorded = pytester.runpytest(*args, "--karenina-replay", "record", *options)
    recorded.assert_outcomes(passed=questions, deselected=len(RECORDED) - questions)
    assert by_kind(server.chat_requests) == (questions, questions)
    server.reset()
    return args


def test_answers_mode_re_judges_recorded_answers_with_live_judge_calls_only(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    args = record(pytester, openai_server, *dist)
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
    args = record(pytester, openai_server, *dist)
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


def test_the_estimate_of_answers_mode_counts_the_judge_calls_only(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    args = record(pytester, openai_server, "-k", "q1 or q2", questions=2)
    # q2's template asks for its field in other words: its judge call has no recording; q3
    # has no recorded answer at all.
    path = Path(args[1])
    benchmark = load_checkpoint(path)
    questions = [
        q.model_copy(update={"template_code": q.template_code.replace("named in", "given in")})
        if q.id == "q2" else q
        for q in benchmark.questions
    ]  # fmt: skip
    save_checkpoint(benchmark.model_copy(update={"questions": questions}), path)
    prices = pytester.path / "prices.txt"
    prices.write_text("test-model = 1.0 2.0\n")  # a parse: 2000 x $1 + 50 x $2 per million

    result = pytester.runpytest(
        *args, "--karenina-replay", "answers", "--karenina-estimate", f"--karenina-prices={prices}"
    )

    assert result.ret == pytest.ExitCode.OK
    assert openai_server.chat_requests == []
    # The live judge call of q2, recorded now: the one the estimate assumed (the answer it
    # quotes is the recorded one, so its prompt is the same).
    judge_store = pytester.path / "judge.jsonl"
    script_judge(openai_server, {"Rome": "Rome"})
    judged = pytester.runpytest(*args, "--karenina-replay", "answers", "-k", "q2",
                                "--karenina-judge-replay", "record",
                                f"--karenina-judge-replay-store={judge_store}")  # fmt: skip
    judged.assert_outcomes(passed=1, deselected=2)
    (entry,) = [json.loads(line) for line in judge_store.read_text().splitlines()]
    sent = entry["request"]
    prompt = request_tokens(ModelRequest(
        tuple(ChatMessage(m["role"], m["content"]) for m in sent["messages"]),
        entry["call_kind"], sent["json_schema"],
    ))  # fmt: skip
    reply = approx_tokens(json.dumps(schema_instance(sent["json_schema"])))
    usd = (prompt * 1.0 + reply * 2.0) / 1_000_000
    result.stdout.fnmatch_lines([
        "karenina estimate of the judge calls of --karenina-replay answers, all live "
        "(from calls.jsonl; no call was sent): 3 items, 1 fully recorded, 1 with calls assumed",
        "  1 without a recorded answer (error:replay in answers mode, no judge call)",
        "  measured (the usage the store recorded): 1 call, 2000 tokens in, 50 out, $0.0021 "
        "(answerer $0.0000, judge $0.0021)",
        f"  assumed (calls the store lacks): 1 call, ~{prompt} tokens in, ~{reply} out, "
        f"~${usd:.4f} *",
        f"    1 judge call: prompts ~{prompt} tokens; replies ~{reply} tokens *",
        "    tokens counted as 4 characters each, plus 4 a message",
        f"  its judge calls: ~2 calls, ~{2000 + prompt} tokens in, ~{50 + reply} out, "
        f"~${0.0021 + usd:.4f} *",
    ])  # fmt: skip
    assert "answers:" not in result.stdout.str()  # answers mode assumes no answer


def test_the_header_names_a_live_judge_without_its_key(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    path = capitals_checkpoint(pytester.path)
    args = ["--karenina", str(path), "--karenina-answering-model", "openai:gpt-4.1-mini",
            "--karenina-replay", "answers", "--collect-only", "-p", "no:cacheprovider"]  # fmt: skip

    live = pytester.runpytest(*args)

    live.stdout.fnmatch_lines([
        "karenina: *replay answers (default store; judge live)",
        "karenina: replay answers: the judge openai:gpt-4.1-mini calls live but no "
        "OPENAI_API_KEY is in the environment (--karenina-judge-replay strict replays its "
        "recorded calls)",
    ])  # fmt: skip
    replayed = pytester.runpytest(*args, "--karenina-judge-replay", "strict")
    replayed.stdout.fnmatch_lines(
        ["karenina: *replay answers (default store; judge strict capitals.judge.replay.jsonl)"]
    )
    assert "OPENAI_API_KEY" not in replayed.stdout.str()


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
