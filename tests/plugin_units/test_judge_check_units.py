"""``--karenina-judge-check`` without running pytest: reading labels files (CSV, JSON,
recorded answers), comparing a label with the judge's verdicts, the judge health report and
the kappa gate."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_karenina.checkpoint import Benchmark, Question, save_checkpoint
from pytest_karenina.plugin.collect.labels import LabelError, LabelSet, load_labels
from pytest_karenina.plugin.gates.judge_kappa import JudgeKappaGate
from pytest_karenina.plugin.payload import ItemPayload
from pytest_karenina.plugin.report.judge_health import JudgeHealth
from pytest_karenina.plugin.report.summary import RunSummary
from pytest_karenina.plugin.verdict.judge_check import (
    JudgeReading,
    LabelCheck,
    attach_check,
    check_label,
)
from pytest_karenina.plugin.verdict.outcome import Outcome, decide_verdicts
from pytest_karenina.results import ModelIdentity
from tests.plugin_units.units_helpers import DEFAULT_POLICY, FACTS, TEMPLATE_CODE, fields_result

HEADER = "question_id,answer,verdict,field.symbol,field.year,label,note\n"


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files are named relative to the working directory, as pytest's runs name them."""
    monkeypatch.chdir(tmp_path)


def labels_of(tmp_path: Path, text: str, name: str = "labels.csv") -> LabelSet:
    """``text`` as a labels file beside a checkpoint of two questions (q1, q2) whose
    template has ``symbol`` (ExactMatch: lowercase, strip) and ``year`` (int)."""
    questions = [
        Question(
            id=qid,
            text=f"Question {qid}?",
            raw_answer="Au",
            template_code=TEMPLATE_CODE,
            finished=True,
        )
        for qid in ("q1", "q2")
    ]
    checkpoint = tmp_path / "bench.jsonld"
    save_checkpoint(Benchmark(name="bench", questions=questions), checkpoint)
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return load_labels(path, [checkpoint], seconds=10)


def test_csv_labels_are_read_with_their_fields_typed(tmp_path: Path) -> None:
    found = labels_of(tmp_path, HEADER + "q1,Gold is Au.,pass,Au,1928,,a note\nq2,Ag.,FAIL,,,\n")
    first, second = found.labels
    assert (first.question_id, first.people_pass, first.source) == (
        "q1",
        True,
        "labels.csv, line 2",
    )
    assert (second.people_pass, second.fields, second.source) == (False, (), "labels.csv, line 3")
    assert first.answer_text == "Gold is Au."
    assert first.answer["trace_messages"] == [
        {"role": "assistant", "content": "Gold is Au.", "block_index": 0}
    ]
    year = {f.name: f for f in first.fields}["year"]
    assert (year.given, year.value) == ("1928", 1928)
    assert found.of_checkpoint(tmp_path / "bench.jsonld") == [first, second]


def test_fields_compare_after_the_templates_normalisation(tmp_path: Path) -> None:
    """The field's type ("1928" is 1928) and its primitive's normalisers (ExactMatch lowers
    and strips) apply to both sides; nothing else does."""
    (label,) = labels_of(tmp_path, HEADER + "q1,Gold is Au.,pass, au ,1928,,\n").labels
    symbol, year = label.fields
    assert symbol.agrees("AU") and not symbol.agrees("Ag")
    assert year.agrees(1928) and year.agrees("1928") and not year.agrees(1929)


def test_label_ids_are_stable_and_names_are_slugs(tmp_path: Path) -> None:
    one = labels_of(tmp_path, HEADER + "q1,Au.,pass,,,,\nq2,Ag.,fail,,,,\n").labels
    other = labels_of(tmp_path, HEADER + "q2,Ag.,fail,,,,\nq1,Au.,pass,,,,\n").labels
    assert {label.label_id for label in one} == {label.label_id for label in other}
    assert all(len(label.label_id) == 8 for label in one)
    (named,) = labels_of(tmp_path, HEADER + "q1,Au.,pass,,,The Gold/Case [1],\n").labels
    assert named.label_id == "the-gold-case-1"


def test_json_labels_take_typed_fields_and_conversations(tmp_path: Path) -> None:
    conversation = [
        {"role": "user", "content": "Which symbol?"},
        {"role": "assistant", "content": "Gold is Au."},
    ]
    entries = [{"question_id": "q1", "answer": conversation, "verdict": "pass",
                "fields": {"symbol": "Au", "year": 1928}}]  # fmt: skip
    (label,) = labels_of(tmp_path, json.dumps({"labels": entries}), "labels.json").labels
    assert label.source == "labels.json, entry 1"
    assert "--- AI Message ---" in label.answer_text and "Gold is Au." in label.answer_text
    assert [m["role"] for m in label.answer["trace_messages"]] == ["assistant"]
    assert {f.name: f.value for f in label.fields} == {"symbol": "Au", "year": 1928}


@pytest.mark.parametrize(
    ("text", "name", "message"),
    [(HEADER + "q1,Au.,pass,Au,nineteen,,\n", "labels.csv",
      "labels.csv, line 2: field 'year': 'nineteen' does not fit its type"),
     (HEADER + "q1,,pass,,,,\n", "labels.csv", "labels.csv, line 2: give either answer or"),
     (HEADER + "\nq1,  ,pass,,,,\n", "labels.csv", "labels.csv, line 3: the answer is empty"),
     (HEADER + "q1,Au.,pass,,,dup,\nq2,Ag.,fail,,,dup,\n", "labels.csv",
      "labels.csv, line 3: duplicate label: label 'dup' is also labels.csv, line 2"),
     (HEADER, "labels.csv", "labels.csv: no labels"),
     ('[{"question_id": "q1", "answer": "Au.", "verdict": "pass", "judge": "x"}]',
      "labels.json", "labels.json, entry 1: unknown key 'judge'"),
     ('[{"question_id": "q1", "answer": "Au.", "verdict": true}]', "labels.json",
      "labels.json, entry 1: verdict True is not pass or fail"),
     ("question_id,answer\n", "labels.txt", "labels.txt: a labels file is .csv or .json")],
    ids=["field-type", "no-answer", "empty-answer", "duplicate-name", "empty-file",
         "json-key", "json-verdict", "suffix"],
)  # fmt: skip
def test_labels_that_do_not_fit_name_the_place(
    tmp_path: Path, text: str, name: str, message: str
) -> None:
    with pytest.raises(LabelError, match="^" + re.escape(message)):
        labels_of(tmp_path, text, name)


def recorded(question: str, model: str, text: str, replicate: int | None = None) -> dict[str, Any]:
    return {
        "metadata": {"question_id": question, "replicate": replicate,
                     "answering": {"interface": "langchain", "model_name": model}},
        "template": {"raw_llm_response": text, "trace_messages": [
            {"role": "assistant", "content": text, "block_index": 0}]},
    }  # fmt: skip


def test_a_recorded_answer_is_picked_by_model_and_replicate(tmp_path: Path) -> None:
    export = [recorded("q1", "a", "Au."), recorded("q1", "b", "Ag.", 1),
              recorded("q1", "b", "Pb.", 2), recorded("q2", "a", "Fe.")]  # fmt: skip
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "export.json").write_text(json.dumps(export), encoding="utf-8")
    text = (
        "question_id,answer_ref,verdict\nq1,runs/export.json#model=a,pass\n"
        "q1,runs/export.json#model=langchain:b&replicate=2,fail\nq2,runs/export.json,fail\n"
    )
    found = labels_of(tmp_path, text).labels
    assert [label.answer_text for label in found] == ["Au.", "Pb.", "Fe."]

    with pytest.raises(
        LabelError,
        match=r"line 2: runs/export.json has 3 answers to question "
        r"'q1' \(model a; model b, replicate 1; model b, replicate 2\): pick",
    ):
        labels_of(tmp_path, "question_id,answer_ref,verdict\nq1,runs/export.json,pass\n")
    with pytest.raises(
        LabelError,
        match=r"line 2: runs/export.json has no answer to question "
        r"'q1', model c",
    ):
        labels_of(tmp_path, "question_id,answer_ref,verdict\nq1,runs/export.json#model=c,pass\n")
    with pytest.raises(LabelError, match=re.escape("expected model=...&replicate=")):
        labels_of(tmp_path, "question_id,answer_ref,verdict\nq1,runs/export.json#run=1,pass\n")


def check(tmp_path: Path, symbol: str, people: str = "pass") -> LabelCheck:
    """The label ``q1, Gold is Au., <people>, symbol Au`` against a judge reading
    ``symbol``."""
    (label,) = labels_of(tmp_path, HEADER + f"q1,Gold is Au.,{people},Au,,,\n").labels
    verdicts = decide_verdicts([fields_result(symbol)], {}, DEFAULT_POLICY, gating=False)
    return check_label(label, verdicts, FACTS)


def test_a_label_agrees_when_verdict_and_fields_do(tmp_path: Path) -> None:
    assert check(tmp_path, "Au").agrees is True
    wrong = check(tmp_path, "Ag")
    assert wrong.agrees is False
    assert wrong.headline() == (
        "judge gpt-4o says fail, people say pass; symbol: judge 'Ag', people 'Au' "
        "(labels.csv, line 2)"
    )
    assert "  symbol: judge 'Ag', people 'Au': DIFFERS" in wrong.explain()
    # the judge fails the answer as people do, but read the field otherwise: still wrong
    assert check(tmp_path, "Ag", people="fail").agrees is False
    assert LabelCheck.from_json(json.loads(json.dumps(wrong.to_json()))) == wrong


def reading(judge: str, outcome: Outcome) -> JudgeReading:
    return JudgeReading(judge, outcome.value, "VerifyTemplate")


def label_check(order: int, people: bool, *readings: JudgeReading) -> LabelCheck:
    return LabelCheck(f"l{order}", order, f"labels.csv, line {order + 2}", "q1", people, readings)


def test_judge_replicates_vote_and_a_tie_is_unmeasured() -> None:
    passed, failed = reading("j", Outcome.PASS), reading("j", Outcome.VERIFY_FAIL)
    assert label_check(0, True, passed, passed, failed).judge_verdicts() == {"j": True}
    tie = label_check(0, True, passed, failed)
    assert tie.judge_verdicts() == {"j": None} and tie.agrees is None
    errored = label_check(0, True, passed, reading("j", Outcome.PARSING_ERROR), passed)
    assert errored.agrees is None


def health_of(*checks: LabelCheck) -> JudgeHealth:
    health = JudgeHealth("labels.csv", len(checks) + 1)
    for index, found in enumerate(reversed(checks)):  # xdist delivers in any order
        report = SimpleNamespace(nodeid=f"b.jsonld::q1[{found.label}]")
        attach_check(report, found)
        health.take(report)  # type: ignore[arg-type]
        if index == 0:
            health.take(report)  # type: ignore[arg-type]  # a rerun's report counts once
    return health


def test_health_reports_each_judge_in_label_order() -> None:
    a, b = "judge-a", "judge-b"
    health = health_of(
        label_check(0, True, reading(a, Outcome.PASS), reading(b, Outcome.PASS)),
        label_check(1, False, reading(a, Outcome.VERIFY_FAIL), reading(b, Outcome.PASS)),
        label_check(2, True, reading(a, Outcome.PASS), reading(b, Outcome.VERIFY_FAIL)),
        label_check(3, False, reading(a, Outcome.VERIFY_FAIL), reading(b, Outcome.VERIFY_FAIL)),
    )
    assert health.judges() == [a, b]
    assert health.agreement(a).kappa.value == pytest.approx(1.0)
    assert health.agreement(b).kappa.value == pytest.approx(0.0)
    texts = [line.text for line in health.lines()]
    assert texts[1] == "labels.csv: 4 of 5 labels judged (people pass 2, fail 2), 0 unmeasured"
    assert texts[2].startswith("judge judge-a: accuracy 100.0% (4/4, 95% CI 51.0%-100.0%)")
    assert texts[4] == "disagreements (2):"
    assert [t.split(":")[0] for t in texts[5:]] == ["  b.jsonld", "  b.jsonld"]
    assert "q1[l1]" in texts[5] and "q1[l2]" in texts[6]
    properties = dict(health.properties())
    assert properties["karenina.judge_kappa.judge-a"] == "1.0000"
    assert properties["karenina.judge_kappa.judge-b"] == "0.0000"


def summary_of(count: int) -> RunSummary:
    summary = RunSummary()
    for index in range(count):
        summary.add(ItemPayload(nodeid=f"b.jsonld::q{index}", category=Outcome.PASS))
    return summary


def test_the_gate_needs_every_judges_kappa_and_every_label_measured() -> None:
    a, b = "judge-a", "judge-b"
    checks = [
        label_check(0, True, reading(a, Outcome.PASS), reading(b, Outcome.PASS)),
        label_check(1, False, reading(a, Outcome.VERIFY_FAIL), reading(b, Outcome.PASS)),
        label_check(2, True, reading(a, Outcome.PASS), reading(b, Outcome.VERIFY_FAIL)),
        label_check(3, False, reading(a, Outcome.VERIFY_FAIL), reading(b, Outcome.VERIFY_FAIL)),
    ]
    gate = JudgeKappaGate(0.5, health_of(*checks))
    assert gate.decide(summary_of(4)) is False
    assert gate.details() == [("judges below the kappa", ["judge-b: 0.00 (95% CI -0.98 to 0.98)"])]
    assert JudgeKappaGate(-0.5, health_of(*checks)).decide(summary_of(4)) is True

    unmeasured = [*checks, label_check(4, True, reading(a, Outcome.PARSING_ERROR))]
    held = JudgeKappaGate(-0.5, health_of(*unmeasured))
    assert held.decide(summary_of(5)) is False
    assert held.describe().endswith("gate FAILED (1 labels unmeasured)")

    crashed = JudgeKappaGate(-0.5, health_of(*checks))  # a fifth label item, never judged
    assert crashed.decide(summary_of(5)) is False
    assert crashed.describe().endswith("gate FAILED (1 labels never judged)")

    alike = [label_check(i, True, reading(a, Outcome.PASS)) for i in range(3)]
    undefined = JudgeKappaGate(0.0, health_of(*alike))
    assert undefined.decide(summary_of(3)) is False
    assert "judge-a undefined: people and the judge gave every label the same verdict" in (
        undefined.describe()
    )
    assert JudgeKappaGate(0.0, JudgeHealth("labels.csv", 3)).decide(RunSummary()) is None


def test_the_judge_is_named_by_its_parsing_models_id(tmp_path: Path) -> None:
    (label,) = labels_of(tmp_path, HEADER + "q1,Gold is Au.,pass,,,,\n").labels
    judge = ModelIdentity.of("openai_endpoint", "qwen3:8b", config_id="local-judge")
    result = fields_result("Au", meta={"parsing": judge})
    verdicts = decide_verdicts([result], {}, DEFAULT_POLICY, gating=False)
    assert check_label(label, verdicts, FACTS).readings[0].judge == "local-judge"


def test_the_worked_example_of_the_docs_is_what_the_summary_prints() -> None:
    """docs/statistics.md shows the line a judge with 18 TP, 2 FN, 4 FP, 16 TN gets."""
    judge = "gpt-4.1-mini"
    counts = {(True, Outcome.PASS): 18, (True, Outcome.VERIFY_FAIL): 2,
              (False, Outcome.PASS): 4, (False, Outcome.VERIFY_FAIL): 16}  # fmt: skip
    pairs = [pair for pair, count in counts.items() for _ in range(count)]
    checks = [
        label_check(order, people, reading(judge, outcome))
        for order, (people, outcome) in enumerate(pairs)
    ]
    line = health_of(*checks).judge_line(judge)
    assert line == (
        "judge gpt-4.1-mini: accuracy 85.0% (34/40, 95% CI 70.9%-92.9%); true positive rate "
        "90.0% (18/20); false positive rate 20.0% (4/20); Cohen's kappa 0.70 (95% CI 0.48 to "
        "0.92)"
    )
    docs = Path(__file__).resolve().parents[2] / "docs" / "statistics.md"
    assert line in docs.read_text(encoding="utf-8")
