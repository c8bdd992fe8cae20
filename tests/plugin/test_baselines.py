"""Baselines through pytest over real HTTP: the regression-only gate, fixes, new and missing
questions, score tolerance, and updates refused after partial runs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.checkpoint import Benchmark, Question, save_checkpoint
from tests.plugin.plugin_helpers import (
    CAPITAL_TEMPLATE,
    COUNTRIES,
    capitals_checkpoint,
    endpoint_args,
)
from tests.support.openai_server import OpenAIServer

GRANULAR = (
    CAPITAL_TEMPLATE
    + """
    def verify_granular(self) -> float:
        return 1.0 if self.verify() else 0.25
"""
)


def answers(server: OpenAIServer, **cities: str) -> None:
    """The model names each question's capital, or the city given for it (``q3="Osaka"``)."""
    server.reset()
    for qid, (country, capital) in COUNTRIES.items():
        city = cities.get(qid, capital)
        server.add_rule(f"It is {city}.", structured=False, contains=f"capital of {country}")
        server.add_rule({"capital": city}, structured=True, contains=f"It is {city}.")


def checkpoint(directory: Path) -> Path:
    """The capitals with a granular score: 1 when right, 0.25 when wrong."""
    questions = [
        Question(id=qid, text=f"What is the capital of {country}?", raw_answer=capital,
                 template_code=GRANULAR.format(capital=capital), finished=True)
        for qid, (country, capital) in COUNTRIES.items()
    ]  # fmt: skip
    path = directory / "capitals.jsonld"
    save_checkpoint(Benchmark(name="capitals", questions=questions), path)
    return path


def run(
    pytester: pytest.Pytester, server: OpenAIServer, baseline: Path, *options: str
) -> pytest.RunResult:
    return pytester.runpytest(
        "--karenina", str(checkpoint(pytester.path)), *endpoint_args(server),
        f"--karenina-baseline={baseline}", *options,
    )  # fmt: skip


def entries(path: Path) -> dict[str, str]:
    return {e["question_id"]: e["verdict"] for e in json.loads(path.read_text())["entries"]}


@pytest.fixture
def baseline(pytester: pytest.Pytester, openai_server: OpenAIServer) -> Path:
    """An accepted run in which q3 was answered wrong."""
    path = pytester.path / "karenina-baseline.json"
    answers(openai_server, q3="Osaka")
    result = run(pytester, openai_server, path, "--karenina-baseline-update")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines(
        ["karenina baseline karenina-baseline.json: written (3 entries: fail 1, pass 2)"]
    )
    return path


def test_an_update_writes_a_sorted_reviewable_file(baseline: Path) -> None:
    document = json.loads(baseline.read_text())
    assert (document["format"], document["version"]) == ("pytest-karenina-baseline", 2)
    assert entries(baseline) == {"q1": "pass", "q2": "pass", "q3": "fail"}
    assert [e["question_id"] for e in document["entries"]] == ["q1", "q2", "q3"]
    first = document["entries"][0]
    fingerprint, answers = first.pop("fingerprint"), first.pop("answers")
    assert first == {
        "answering_model": "test-model", "items": 1, "passed": 1, "question_id": "q1",
        "replicates": 1, "replicates_passed": 1, "rubric": {}, "score": 1.0, "verdict": "pass",
    }  # fmt: skip
    assert sorted(fingerprint) == ["judge", "prompts", "question", "rubric", "template"]
    assert fingerprint["rubric"] == "none" and fingerprint["prompts"] == "1"
    assert [len(answer) for answer in answers] == [12]  # one replicate, its answer's hash
    # Questions differ, the judge and prompts do not.
    second = document["entries"][1]["fingerprint"]
    assert second["question"] != fingerprint["question"]
    assert (second["judge"], second["prompts"]) == (fingerprint["judge"], fingerprint["prompts"])
    assert baseline.read_text().endswith("}\n") and "\n  " in baseline.read_text()


def test_failures_already_in_the_baseline_do_not_fail_the_run(
    pytester: pytest.Pytester, openai_server: OpenAIServer, baseline: Path
) -> None:
    """In one process: the next test holds the controller's comparison under xdist."""
    answers(openai_server, q3="Osaka")
    result = run(pytester, openai_server, baseline)

    result.assert_outcomes(passed=2, failed=1)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines([
        "karenina baseline karenina-baseline.json: 0 regressions, 0 score drops, 0 improvements, "
        "0 new, 0 missing (3 compared): gate passed",
    ])  # fmt: skip


def test_a_regression_fails_the_run_and_a_fix_is_listed(
    pytester: pytest.Pytester, openai_server: OpenAIServer, baseline: Path, dist: list[str]
) -> None:
    answers(openai_server, q2="Milan")
    junit, html = pytester.path / "junit.xml", pytester.path / "report.html"
    result = run(pytester, openai_server, baseline, f"--junitxml={junit}", f"--html={html}",
                 *dist)  # fmt: skip

    result.assert_outcomes(passed=2, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        "karenina baseline karenina-baseline.json: 1 regressions, 0 score drops, "
        "1 improvements, 0 new, 0 missing (3 compared): gate FAILED",
        "  verdict changes: 0 judge-side (same answer, new verdict), 2 answer-side (new answer)",
        "  regression: q2 [[]test-model[]]: pass -> fail (answer-side)",
        "  improvement: q3 [[]test-model[]]: fail -> pass (answer-side)",
    ])  # fmt: skip
    assert 'name="karenina.baseline_regressions" value="1"' in junit.read_text()
    assert "; karenina baseline karenina-baseline.json: 1 regressions," in html.read_text()
    assert entries(baseline)["q3"] == "fail"  # comparing never writes


def test_new_and_missing_questions_are_listed(
    pytester: pytest.Pytester, openai_server: OpenAIServer, baseline: Path
) -> None:
    document = json.loads(baseline.read_text())
    document["entries"][0]["question_id"] = "q0"  # q1 is new, q0 is missing
    baseline.write_text(json.dumps(document))
    answers(openai_server, q3="Osaka")

    result = run(pytester, openai_server, baseline)

    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines([
        "*0 regressions, 0 score drops, 0 improvements, 1 new, 1 missing (2 compared): gate "
        "passed",
        "  new: q1 [[]test-model[]]: pass",
        "  missing: q0 [[]test-model[]]",
    ])  # fmt: skip


@pytest.mark.parametrize(
    ("tolerance", "code"), [("0.5", pytest.ExitCode.TESTS_FAILED), ("0.6", pytest.ExitCode.OK)]
)
def test_a_score_drop_beyond_the_tolerance_is_a_regression(
    pytester: pytest.Pytester, openai_server: OpenAIServer, baseline: Path,
    tolerance: str, code: pytest.ExitCode,
) -> None:  # fmt: skip
    document = json.loads(baseline.read_text())
    document["entries"][2]["score"] = 0.8  # q3 failed, but was closer to right than now
    baseline.write_text(json.dumps(document))
    answers(openai_server, q3="Osaka")

    result = run(pytester, openai_server, baseline, f"--karenina-score-tolerance={tolerance}")

    assert result.ret == code
    if code == pytest.ExitCode.TESTS_FAILED:
        result.stdout.fnmatch_lines(
            ["  score drop: q3 [[]test-model[]]: granular score 0.8 -> 0.25"]
        )


@pytest.mark.parametrize(
    ("options", "why"),
    [
        (["-k", "q1"], "2 of 3 items were deselected (-k, -m, --lf or a shard)"),
        (["--karenina-shard=1/2"], "* items were deselected (-k, -m, --lf or a shard)"),
        (["-x", "-p", "no:randomly"], "the run stopped early (-x or --maxfail)"),
        (["--karenina-llm-timeout=0.001"], "3 items errored"),
    ],
    ids=["-k", "shard", "-x", "errors"],
)
def test_an_update_is_refused_after_a_partial_run(
    pytester: pytest.Pytester, openai_server: OpenAIServer, options: list[str], why: str
) -> None:
    path = pytester.path / "karenina-baseline.json"
    answers(openai_server, q1="Lyon")
    openai_server.set_latency(0.05)

    result = run(pytester, openai_server, path, "--karenina-baseline-update", *options)

    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([f"karenina baseline karenina-baseline.json: not updated: {why}"])
    assert not path.exists()


def test_a_missing_or_broken_baseline_is_a_usage_error(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    missing = pytester.path / "nowhere.json"
    result = run(pytester, openai_server, missing)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        f"*--karenina-baseline: {missing}: no such baseline (write one with "
        "--karenina-baseline-update)",
    ])  # fmt: skip

    broken = pytester.path / "broken.json"
    broken.write_text(json.dumps({"format": "pytest-karenina-baseline", "version": 1,
                                  "entries": [{"question_id": "q1", "verdict": 3}]}))  # fmt: skip
    result = run(pytester, openai_server, broken)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*{broken}: entries[[]0[]] (q1): field 'answering_model' is missing*"]
    )


def test_update_needs_a_baseline_path(pytester: pytest.Pytester) -> None:
    checkpoint = capitals_checkpoint(pytester.path)
    result = pytester.runpytest("--karenina", str(checkpoint), "--karenina-answering-model",
                                "openai:gpt-4.1-mini", "--karenina-baseline-update")  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--karenina-baseline-update: name the file with*"])


@pytest.mark.parametrize("value", ["nan", "inf"])
def test_a_tolerance_must_be_a_finite_number(
    pytester: pytest.Pytester, openai_server: OpenAIServer, baseline: Path, value: str
) -> None:
    result = run(pytester, openai_server, baseline, f"--karenina-score-tolerance={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*--karenina-score-tolerance: expected a finite number, got '{value}'"]
    )


def twice(document: dict[str, Any]) -> None:
    """q1 again after its entry, failed: read last-wins, the fail forgave q1's regression."""
    document["entries"].insert(1, {**document["entries"][0], "verdict": "fail"})


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda d: d["entries"][0].update(score=float("nan")),
         "entries[0] (q1): field 'score' must be a finite number, got nan"),
        (twice, "entries[1] (q1 [test-model]): listed twice (first as entries[0])"),
        (lambda d: d.update(Entries=d.pop("entries")),
         "field 'entries' is missing; field 'Entries' is unknown"),
        (lambda d: d.update(entries=None), "field 'entries' must be a list, got None"),
        (lambda d: d.update(entries=5), "field 'entries' must be a list, got 5"),
        (lambda d: d["entries"][0].update(verdict="PASS"),
         "entries[0] (q1): field 'verdict' must be 'pass', 'fail', 'error' or 'no_verdict', "
         "got 'PASS'"),
    ],
    ids=["NaN score", "listed twice", "Entries", "null", "entries 5", "PASS"],
)  # fmt: skip
def test_a_damaged_baseline_is_refused_naming_the_file_and_entry(
    pytester: pytest.Pytester, openai_server: OpenAIServer, baseline: Path,
    damage: Callable[[dict[str, Any]], None], message: str,
) -> None:  # fmt: skip
    """Issue 24 (item 8): each damage weakened the gate (a NaN score dropped by nothing, the
    second entry forgave q1's regression, no entries made every question new) or crashed it
    (INTERNALERROR); now the run does not start."""
    document = json.loads(baseline.read_text())
    damage(document)
    baseline.write_text(json.dumps(document))
    answers(openai_server, q1="Lyon", q3="Osaka")  # q1 regresses

    result = run(pytester, openai_server, baseline)

    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    assert f"--karenina-baseline: {baseline}: {message}" in result.stderr.str()
    assert openai_server.requests == []
