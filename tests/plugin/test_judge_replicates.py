"""Judge replicates through pytest over real HTTP: each answer is judged K times; the judge
replicates vote, a flipping judge makes the item flaky on the judge's side, differing answers
on the answer's side, and the summary gives the judge's self-agreement per field. Record and
strict replay keep every judge replicate apart."""

from __future__ import annotations

import html
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_karenina.checkpoint import Benchmark, Question, save_checkpoint
from pytest_karenina.plugin.cli import main
from tests.plugin.plugin_helpers import (
    capitals_checkpoint,
    endpoint_args,
    rendered_dom,
    rendered_rows,
)
from tests.plugin.test_html import extras_html, report_data, row
from tests.support.openai_server import OpenAIServer

COUNT_TEMPLATE = """
from karenina.schemas.entities import BaseAnswer, VerifiedField
from karenina.schemas.primitives import NumericExact


class Answer(BaseAnswer):
    r_count: int = VerifiedField(
        description="How many times the response says r occurs in strawberry",
        ground_truth=3,
        verify_with=NumericExact(),
    )
"""
ANSWER = "There are 3 r's in strawberry."
JUDGE_SIDE = "judge-side: r_count parsed 3, 3, 2 from one answer"


def strawberry(directory: Path) -> Path:
    question = Question(
        id="strawberry", text="How many times does r occur in strawberry?", raw_answer="3",
        template_code=COUNT_TEMPLATE, finished=True,
    )  # fmt: skip
    path = directory / "letters.jsonld"
    save_checkpoint(Benchmark(name="letters", questions=[question]), path)
    return path


def flipping_judge(server: OpenAIServer, *counts: int) -> None:
    """One answer; the judge reads ``counts`` from it, one per call, in order."""
    server.add_rule(ANSWER, structured=False)
    for count in counts:
        server.add_rule({"r_count": count}, structured=True, times=1)


def junit_properties(path: Path) -> dict[str | None, str | None]:
    case = next(ET.parse(path).getroot().iter("testcase"))
    return {p.get("name"): p.get("value") for p in case.iter("property")}


def suite_properties(path: Path) -> dict[str | None, str | None]:
    suite = next(ET.parse(path).getroot().iter("testsuite"))
    properties = suite.find("properties")
    assert properties is not None
    return {p.get("name"): p.get("value") for p in properties.iter("property")}


def test_a_judge_that_flips_on_one_answer_is_flaky_judge_side_and_its_majority_decides(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    flipping_judge(openai_server, 3, 3, 2)
    junit = pytester.path / "junit.xml"
    export = pytester.path / "results.json"

    result = pytester.runpytest(
        "--karenina", str(strawberry(pytester.path)), *endpoint_args(openai_server),
        "--karenina-judge-replicates=3", "-v", f"--junitxml={junit}",
        f"--karenina-results={export}", *dist,
    )  # fmt: skip

    result.assert_outcomes(passed=1)  # one item: judge replicates never multiply items
    result.stdout.fnmatch_lines([
        "karenina: judge replicates 3 per answer (their majority decides)",
        "*PASSED (flaky judge 2/3)*",
        "flaky: 1 items (strawberry [test-model] judge 2/3)",
        f"  strawberry [test-model]: {JUDGE_SIDE}",
        "judge self-agreement (3 judge replicates per answer): "
        "verdict 0.0% (0/1 answers), r_count 0.0% (0/1 answers)",
        "judge disagreed with itself on 1 question: strawberry (verdict, r_count)",
    ])  # fmt: skip
    chat = openai_server.chat_requests
    assert sum(not r.structured for r in chat) == 1  # the answer: generated once
    assert sum(r.structured for r in chat) == 3
    properties = junit_properties(junit)
    assert properties["karenina.category"] == "pass"
    assert properties["karenina.flaky"] == "judge 2/3"
    assert properties["karenina.flaky_side"] == "judge"
    assert properties["karenina.judge_agreement"] == "0.0000"
    assert properties["karenina.judge_disagreed"] == "verdict,r_count"
    assert suite_properties(junit)["karenina.judge_agreement.r_count"] == "0.0000"
    records = json.loads(export.read_text())["results"]
    assert sorted(r["judge_replicate"] for r in records) == [1, 2, 3]
    assert len({r["metadata"]["result_id"] for r in records}) == 3


def test_the_judge_majority_fails_the_item_and_the_failure_says_the_judge_flipped(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    flipping_judge(openai_server, 2, 3, 2)

    result = pytester.runpytest(
        "--karenina", str(strawberry(pytester.path)), *endpoint_args(openai_server),
        "--karenina-judge-replicates=3",
    )  # fmt: skip

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "r_count: 2 != 3 (and 1 more result)",
        "judge replicates: verify_fail, pass, verify_fail (1/3 passed; majority: verify_fail;"
        " flaky)",
        "judge-side: r_count parsed 2, 3, 2 from one answer",
        "judge replicate 1: verify_result False (decided by VerifyTemplate)*",
        "judge replicate 3: verify_result False (decided by VerifyTemplate)*",
    ])  # fmt: skip


def test_an_agreeing_judge_leaves_the_item_steady(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    flipping_judge(openai_server, 3, 3)

    result = pytester.runpytest(
        "--karenina", str(strawberry(pytester.path)), *endpoint_args(openai_server),
        "--karenina-judge-replicates=2", "-v",
    )  # fmt: skip

    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([
        "*::strawberry PASSED*",
        "judge self-agreement (2 judge replicates per answer): "
        "verdict 100.0% (1/1 answers), r_count 100.0% (1/1 answers)",
        "judge disagreed with itself on no question",
    ])  # fmt: skip
    assert "flaky" not in result.stdout.str()


def capitals_script(server: OpenAIServer) -> None:
    """Answers Paris, Lyon, Paris (one each); the judge reads the city back every time."""
    for city in ("Paris", "Lyon", "Paris"):
        server.add_rule(f"It is {city}.", structured=False, times=1)
    for city in ("Paris", "Lyon"):
        server.add_rule({"capital": city}, structured=True, contains=f"It is {city}.")


def test_answers_that_differ_make_the_item_flaky_answer_side(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    capitals_script(openai_server)
    checkpoint = capitals_checkpoint(pytester.path, {"q1": ("France", "Paris")})

    result = pytester.runpytest(
        "--karenina", str(checkpoint), *endpoint_args(openai_server),
        "--karenina-replicates=3", "--karenina-replicate-policy=majority",
        "--karenina-judge-replicates=2", "-v", *dist,
    )  # fmt: skip

    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([
        "*PASSED (flaky 2/3)*",
        "flaky: 1 items (q1 [test-model] 2/3)",
        "  q1 [test-model]: answer-side: 2 of 3 answers say capital 'Paris', 1 says 'Lyon'",
        "judge self-agreement (2 judge replicates per answer): "
        "verdict 100.0% (3/3 answers), capital 100.0% (3/3 answers)",
        "judge disagreed with itself on no question",
    ])  # fmt: skip
    assert "judge-side" not in result.stdout.str()
    chat = openai_server.chat_requests
    assert sum(not r.structured for r in chat) == 3 and sum(r.structured for r in chat) == 6


def test_strict_replay_reproduces_every_judge_replicate_without_a_request(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    flipping_judge(openai_server, 3, 3, 2)
    store = pytester.path / "calls.jsonl"
    args = [
        "--karenina", str(strawberry(pytester.path)), *endpoint_args(openai_server),
        "--karenina-judge-replicates=3", f"--karenina-replay-store={store}", "-v",
    ]  # fmt: skip
    recorded = pytester.runpytest(*args, "--karenina-replay", "record")
    recorded.assert_outcomes(passed=1)
    recorded.stdout.fnmatch_lines([f"  strawberry [test-model]: {JUDGE_SIDE}"])
    calls = len(openai_server.chat_requests)
    assert calls == 4

    replayed = pytester.runpytest(*args, "--karenina-replay", "strict")

    replayed.assert_outcomes(passed=1)
    replayed.stdout.fnmatch_lines(
        ["*PASSED (flaky judge 2/3)*", f"  strawberry [test-model]: {JUDGE_SIDE}"]
    )
    assert len(openai_server.chat_requests) == calls


def test_a_store_recorded_with_one_judging_answers_judge_replicate_1_only(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    flipping_judge(openai_server, 3)
    store = pytester.path / "calls.jsonl"
    args = [
        "--karenina", str(strawberry(pytester.path)), *endpoint_args(openai_server),
        f"--karenina-replay-store={store}",
    ]  # fmt: skip
    pytester.runpytest(*args, "--karenina-replay", "record").assert_outcomes(passed=1)

    replayed = pytester.runpytest(
        *args, "--karenina-replay", "strict", "--karenina-judge-replicates=3"
    )

    replayed.assert_outcomes(errors=1)
    out = replayed.stdout.str()
    for judge in (2, 3):
        assert (
            f"strict replay: no recorded reply for question 'strawberry', judge replicate "
            f"{judge}, call kind 'parsing'" in out
        )
    assert "judge replicate 1, call kind" not in out
    replayed.stdout.fnmatch_lines([
        "outcomes: error:replay 1",
        "karenina replay: 2 entries used, 0 added, 0 unused of 2 in calls.jsonl; judge replicate"
        " 1 uses the keys of a run without judge replicates, judge replicates 2-3 their own",
    ])  # fmt: skip


SEVEN = {
    "q1": ("France", "Paris"), "q2": ("Italy", "Rome"), "q3": ("Japan", "Tokyo"),
    "q4": ("Spain", "Madrid"), "q5": ("Peru", "Lima"), "q6": ("Chile", "Santiago"),
    "q7": ("Kenya", "Nairobi"),
}  # fmt: skip


def seven_with_a_flipping_judge(server: OpenAIServer) -> None:
    """Every answer right; the judge reads q1's Paris twice, then Lyon, the rest steadily."""
    server.reset()
    for country, capital in SEVEN.values():
        server.add_rule(f"It is {capital}.", structured=False, contains=f"capital of {country}")
    server.add_rule({"capital": "Paris"}, structured=True, contains="It is Paris.", times=2)
    server.add_rule({"capital": "Lyon"}, structured=True, contains="It is Paris.", times=1)
    for _, capital in SEVEN.values():
        server.add_rule({"capital": capital}, structured=True, contains=f"It is {capital}.")


def summary(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "karenina summary" in line)
    return [line for line in lines[start + 1 :] if not line.startswith(("=", "tokens"))]


def test_a_merge_of_shards_gives_the_unsharded_runs_judge_agreement(
    pytester: pytest.Pytester, openai_server: OpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    checkpoint = capitals_checkpoint(pytester.path, SEVEN)

    def run(out: str, *options: str) -> pytest.RunResult:
        seven_with_a_flipping_judge(openai_server)
        return pytester.runpytest(
            "--karenina", str(checkpoint), *endpoint_args(openai_server),
            "--karenina-judge-replicates=3", f"--karenina-results={pytester.path / out}",
            *options,
        )  # fmt: skip

    whole = run("whole.json")
    whole.assert_outcomes(passed=7)
    parts = [pytester.path / f"s{index}.json" for index in (1, 2)]
    for index in (1, 2):
        run(f"s{index}.json", f"--karenina-shard={index}/2")
    capsys.readouterr()

    code = main(["merge", str(pytester.path / "merged.json"), *map(str, parts)])

    out = capsys.readouterr().out
    assert code == whole.ret == pytest.ExitCode.OK
    assert summary(out) == summary(whole.stdout.str())
    assert "judge disagreed with itself on 1 question: q1 (verdict, capital)" in out
    side = "judge-side: capital parsed 'Paris', 'Paris', 'Lyon' from one answer"
    assert f"  q1 [test-model]: {side}" in out


def html_run(pytester: pytest.Pytester, server: OpenAIServer) -> Path:
    flipping_judge(server, 3, 3, 2)
    report = pytester.path / "report.html"
    pytester.runpytest(
        "--karenina", str(strawberry(pytester.path)), *endpoint_args(server),
        "--karenina-judge-replicates=3", f"--html={report}", "--self-contained-html",
    ).assert_outcomes(passed=1)  # fmt: skip
    return report


JUDGE_LINE = (
    "3 judge replicates per answer; disagreed on verdict (pass, pass, verify_fail), "
    "r_count (3, 3, 2)"
)


def test_the_html_report_has_a_judge_line_per_item_and_the_agreement_in_its_summary(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    report = html_run(pytester, openai_server)

    text = report.read_text(encoding="utf-8")
    assert "judge self-agreement (3 judge replicates per answer): verdict 0.0%" in text
    entry = row(report_data(report), "letters.jsonld::strawberry")
    assert entry["kflaky"] == "judge 2/3"
    extras = extras_html(entry)
    assert f'<p class="karenina-judge"><strong>Judge </strong>{JUDGE_LINE}</p>' in extras
    assert f"<strong>Flaky </strong>{html.escape(JUDGE_SIDE)}</p>" in extras


@pytest.mark.subprocess
def test_the_judge_line_renders_in_headless_chromium(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    report = html_run(pytester, openai_server)

    dom = rendered_dom(pytester, report)

    (body,) = rendered_rows(dom, "letters.jsonld::strawberry")
    assert f'<p class="karenina-judge"><strong>Judge </strong>{JUDGE_LINE}</p>' in body
    assert '<td class="col-kflaky">judge 2/3</td>' in body
