"""Baseline entries, the file, and the diff of a run against it."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from pytest_karenina.plugin.gates.baseline import (
    BaselineEntry,
    BaselineError,
    entries_of,
    read_baseline,
    write_baseline,
)
from pytest_karenina.plugin.gates.baseline_diff import LISTED, diff
from pytest_karenina.plugin.payload import ItemPayload, ResultSummary
from pytest_karenina.plugin.report.tallies import rubric_scores
from pytest_karenina.plugin.verdict.outcome import Outcome
from pytest_karenina.rubrics.gates import TraitCheck


def item(qid: str, outcome: Outcome, replicate: int | None = None, **rubric: object) -> ItemPayload:
    checks = [TraitCheck(name, "llm score 1-5", value, False, None)
              for name, value in rubric.items()]  # fmt: skip
    return ItemPayload(
        nodeid=f"b.jsonld::{qid}-{replicate}", category=outcome, question_id=qid,
        answering_model="m", replicate=replicate, score=1.0 if outcome is Outcome.PASS else 0.0,
        summaries=[ResultSummary(category=outcome, rubric=checks)],
    )  # fmt: skip


FINGERPRINT = {"question": "q", "template": "t", "rubric": "r", "judge": "j", "prompts": "1"}


def entry(qid: str, verdict: str, score: float | None = None, **rubric: float) -> BaselineEntry:
    return BaselineEntry(qid, "m", verdict, score=score, rubric=rubric, fingerprint=FINGERPRINT)


def test_replicates_make_one_entry_and_an_error_outweighs_passes() -> None:
    payloads = [item("q1", Outcome.PASS, 1), item("q1", Outcome.PASS, 2),
                item("q2", Outcome.PASS, 1), item("q2", Outcome.TIMEOUT_ERROR, 2),
                item("q3", Outcome.PASS, 1), item("q3", Outcome.VERIFY_FAIL, 2)]  # fmt: skip
    found = entries_of(payloads, {})
    assert {key[0]: (e.verdict, e.passed, e.items) for key, e in found.items()} == {
        "q1": ("pass", 2, 2), "q2": ("error", 1, 2), "q3": ("fail", 1, 2),
    }  # fmt: skip
    assert found[("q3", "m")].score == 0.5


def test_rubric_scores_are_numbers_booleans_and_metric_parts() -> None:
    payload = item("q1", Outcome.PASS, Clarity=4, Cites=True, Tone="formal",
                   extraction={"f1": 0.5, "precision": 1})  # fmt: skip
    assert rubric_scores(payload) == {
        "Clarity": 4.0, "Cites": 1.0, "extraction.f1": 0.5, "extraction.precision": 1.0,
    }  # fmt: skip


def test_the_file_round_trips_sorted(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "baseline.json"
    entries = {e.key: e for e in (entry("q2", "fail", 0.5), entry("q1", "pass", 1.0, Clarity=4))}
    write_baseline(path, entries)
    assert read_baseline(path) == entries
    assert [e["question_id"] for e in json.loads(path.read_text())["entries"]] == ["q1", "q2"]
    assert not path.with_name("baseline.json.tmp").exists()


HEAD = '{"format": "pytest-karenina-baseline", "version": 1, '
Q1 = '{"question_id": "q1", "answering_model": "m", "verdict": "pass"'


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "not a readable baseline"),
        ('{"format": "other"}', "not a pytest-karenina baseline"),
        ('{"format": "pytest-karenina-baseline", "version": 9}',
         "baseline version 9 is not one this version reads (1 or 2)"),
        (HEAD + '"entries": [' + Q1 + ', "score": "high"}]}',
         "entries[0] (q1): field 'score' must be a number, got 'high'"),
        (HEAD + '"entries": [' + Q1 + ', "passed": "x"}]}',
         "entries[0] (q1): field 'passed' must be an integer, got 'x'"),
        # issue 24 (item 8): each of these weakened the gate or crashed it
        (HEAD + '"entries": [' + Q1 + ', "score": NaN}]}',
         "entries[0] (q1): field 'score' must be a finite number, got nan"),
        (HEAD + '"entries": [' + Q1 + ', "rubric": {"Clarity": Infinity}}]}',
         "entries[0] (q1): field 'rubric.Clarity' must be a finite number, got inf"),
        (HEAD + '"entries": [' + Q1 + "}, " + Q1.replace("pass", "fail") + "}]}",
         "entries[1] (q1 [m]): listed twice (first as entries[0])"),
        (HEAD + '"Entries": []}', "field 'entries' is missing; field 'Entries' is unknown"),
        (HEAD + '"entries": null}', "field 'entries' must be a list, got None"),
        (HEAD + '"entries": 5}', "field 'entries' must be a list, got 5"),
        (HEAD + '"entries": [5]}', "entries[0]: must be an object, got 5"),
        (HEAD + '"entries": [' + Q1.replace('"pass"', '"PASS"') + "}]}",
         "entries[0] (q1): field 'verdict' must be 'pass', 'fail', 'error' or 'no_verdict', got "
         "'PASS'"),
        (HEAD + '"entries": [' + Q1 + ', "passed": true}]}',
         "entries[0] (q1): field 'passed' must be an integer, got True"),
        (HEAD + '"entries": [' + Q1 + ', "passed": -1}]}',
         "entries[0] (q1): field 'passed' must be greater than or equal to 0, got -1"),
        (HEAD + '"entries": [' + Q1 + ', "scroe": 1.0}]}',
         "entries[0] (q1): field 'scroe' is unknown"),
        (HEAD + '"entries": [' + Q1 + ', "verdict": "fail"}]}',
         "not a readable baseline (the key 'verdict' appears twice in one object)"),
        ('{"format": "pytest-karenina-baseline", "version": true, "entries": []}',
         "baseline version True is not one this version reads (1 or 2)"),
    ],
    ids=["not JSON", "format", "version", "score", "passed", "NaN score", "inf rubric",
         "listed twice", "Entries", "null entries", "entries 5", "entry 5", "PASS",
         "bool passed", "negative passed", "unknown field", "key twice", "version true"],
)  # fmt: skip
def test_a_bad_file_names_itself_and_the_entry(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(content)
    with pytest.raises(BaselineError) as caught:
        read_baseline(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert message in str(caught.value)


def test_a_baseline_that_is_no_regular_file_is_refused_unread(tmp_path: Path) -> None:
    fifo = tmp_path / "baseline.json"
    os.mkfifo(fifo)  # reading it blocks until a writer comes
    done = threading.Event()

    def writer() -> None:
        """Opens and closes the writing end whenever a reader waits, so that a read ends
        (with nothing) instead of hanging the test."""
        while not done.is_set():
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:  # ENXIO: no reader yet
                time.sleep(0.01)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        with pytest.raises(BaselineError, match="not a regular file"):
            read_baseline(fifo)
    finally:
        done.set()
        thread.join()


def test_diff_sorts_questions_into_their_kinds() -> None:
    before = {e.key: e for e in (entry("q1", "pass"), entry("q2", "fail"), entry("q3", "pass"),
                                 entry("q4", "pass"))}  # fmt: skip
    now = {e.key: e for e in (entry("q1", "error"), entry("q2", "pass"), entry("q3", "pass"),
                              entry("q5", "fail"))}  # fmt: skip
    found = diff("b.json", before, now, 0.0)
    assert (found.regressions, found.fixed) == ([], ["q2 [m]: fail -> pass"])
    assert found.errors == ["q1 [m]: pass -> error"]  # nothing measured: not a regression
    assert (found.new, found.missing, found.compared) == (["q5 [m]: fail"], ["q4 [m]"], 3)
    assert not found.passed


def test_score_drops_respect_tolerance_and_direction() -> None:
    before = {("q1", "m"): entry("q1", "pass", 0.9, Clarity=4, Toxicity=1)}
    now = {("q1", "m"): entry("q1", "pass", 0.8, Clarity=4, Toxicity=2)}
    assert diff("b", before, now, 0.1, lower_is_better={"Toxicity"}).passed is False
    found = diff("b", before, now, 0.1, lower_is_better={"Toxicity"})
    assert found.score_drops == ["q1 [m]: Toxicity 1 -> 2"]  # 0.9 -> 0.8 is within 0.1
    assert diff("b", before, now, 0.1).passed  # Toxicity rising is better by default
    assert diff("b", before, now, 1.0, lower_is_better={"Toxicity"}).passed


def test_lines_list_a_few_and_count_the_rest() -> None:
    before = {(f"q{i:02}", "m"): entry(f"q{i:02}", "pass") for i in range(LISTED + 3)}
    now = {key: entry(key[0], "fail") for key in before}
    lines = diff("b.json", before, now, 0.0).lines()
    assert lines[0].startswith("karenina baseline b.json: 13 regressions")
    assert lines[-1] == "  ... and 3 more regression questions"
    assert len(lines) == 1 + LISTED + 1


def test_a_crashed_worker_item_fails_the_baseline_gate(tmp_path: Path) -> None:
    from pytest_karenina.plugin.gates.baseline_gate import BaselineGate
    from pytest_karenina.plugin.options.ci_settings import CiSettings
    from pytest_karenina.plugin.report.summary import RunSummary

    path = tmp_path / "baseline.json"
    write_baseline(path, {e.key: e for e in (entry("q1", "pass"), entry("q2", "pass"))})
    summary = RunSummary()
    summary.add(item("q1", Outcome.PASS))
    summary.add(ItemPayload.worker_crashed("b.jsonld::q2"))

    gate = BaselineGate(CiSettings(baseline=path))
    assert gate.decide(summary, None) is False

    assert gate.diff is not None and not gate.diff.passed
    assert gate.diff.errors == ["b.jsonld::q2: its worker crashed (question unknown)"]
    assert gate.diff.regressions == []


def test_an_item_that_errored_is_no_regression_of_the_model_but_fails_the_gate(
    tmp_path: Path,
) -> None:
    from pytest_karenina.plugin.gates.baseline_gate import BaselineGate
    from pytest_karenina.plugin.options.ci_settings import CiSettings
    from pytest_karenina.plugin.report.summary import RunSummary

    path = tmp_path / "baseline.json"
    write_baseline(path, {e.key: e for e in (entry("q1", "pass"), entry("q2", "fail"))})
    summary = RunSummary()
    for qid in ("q1", "q2"):
        broken = item(qid, Outcome.TEMPLATE_ERROR)
        summary.add(broken)
        summary.reasons[broken.nodeid] = f"template error: {qid} raised (template line 3)"

    gate = BaselineGate(CiSettings(baseline=path))
    assert gate.decide(summary, None) is False

    found = gate.diff
    assert found is not None and not found.passed
    assert (found.regressions, found.score_drops, found.fixed) == ([], [], [])
    assert found.errors == [
        "q1 [m]: pass -> error: template error: q1 raised (template line 3)",
        "q2 [m]: fail -> error: template error: q2 raised (template line 3)",
    ]
    assert found.lines()[0] == (
        "karenina baseline baseline.json: 0 regressions, 0 score drops, 2 errors, 0 improvements, "
        "0 new, 0 missing (2 compared): gate FAILED"
    )
    assert ("karenina.baseline_regressions", "0") in found.suite_properties()
    assert ("karenina.baseline_errors", "2") in found.suite_properties()
