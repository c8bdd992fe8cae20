"""A run against its baseline, entry by entry: model pairs, fingerprints, and the classes of
change graded by Fisher's exact test with Holm's correction (issue 26, sections 1-3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_karenina.plugin.gates.baseline import (
    BaselineEntry,
    BaselineError,
    read_baseline_file,
    write_baseline,
)
from pytest_karenina.plugin.gates.baseline_classes import Kind, classify
from pytest_karenina.plugin.gates.baseline_diff import diff
from pytest_karenina.plugin.gates.baseline_pairs import PairingError, pair_models
from pytest_karenina.plugin.options.ci_settings import parse_model_pairs

PRINT = {"question": "q", "template": "t", "rubric": "r", "judge": "j", "prompts": "1"}


def entry(
    qid: str, model: str, passed: int, judged: int = 1, *, answers: tuple[str, ...] = (),
    **parts: str,
) -> BaselineEntry:  # fmt: skip
    """An entry whose replicates passed ``passed`` of ``judged`` times."""
    verdict = "pass" if passed == judged else "fail"
    return BaselineEntry(
        qid, model, verdict, passed=passed, items=judged, replicates=judged,
        replicates_passed=passed, fingerprint={**PRINT, **parts}, answers=answers,
    )  # fmt: skip


def entries(*found: BaselineEntry) -> dict[tuple[str, str], BaselineEntry]:
    return {e.key: e for e in found}


# -- pairs -----------------------------------------------------------------------------------


def test_a_single_model_on_each_side_pairs_by_itself() -> None:
    pairing = pair_models(["qwen3:8b"], {"gpt-4.1-mini"})
    assert pairing.pairs == {"qwen3:8b": "gpt-4.1-mini"} and pairing.automatic
    assert pairing.swapped


def test_models_of_the_same_name_pair_and_the_rest_need_a_mapping() -> None:
    pairing = pair_models(["a", "b"], {"a", "c"})
    assert pairing.pairs == {"a": "a"}
    assert pairing.hint() == (
        "run models b vs baseline models c: pair them with --karenina-baseline-model NEW=OLD "
        "(e.g. b=c)"
    )
    mapped = pair_models(["a", "b"], {"c", "d"}, [("a", "c"), ("b", "d")])
    assert mapped.pairs == {"a": "c", "b": "d"} and not mapped.automatic


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        ([("x", "c")], "--karenina-baseline-model x=c: 'x' is not an answering model of this "
                       "run (a, b)"),
        ([("a", "z")], "--karenina-baseline-model a=z: 'z' is not a model of b.json (c, d)"),
        ([("a", "c"), ("a", "d")], "--karenina-baseline-model a=d: 'a' is mapped twice"),
    ],
    ids=["unknown new", "unknown old", "twice"],
)  # fmt: skip
def test_a_mapping_naming_an_unknown_model_is_refused(
    mapping: list[tuple[str, str]], message: str
) -> None:
    with pytest.raises(PairingError) as caught:
        pair_models(["a", "b"], {"c", "d"}, mapping, source="b.json")
    assert str(caught.value) == message


def test_model_pairs_are_read_from_new_equals_old_lines() -> None:
    assert parse_model_pairs(["qwen3:8b = gpt-4.1-mini", "b=d"]) == (
        ("qwen3:8b", "gpt-4.1-mini"), ("b", "d"),
    )  # fmt: skip
    with pytest.raises(ValueError, match="expected NEW=OLD"):
        parse_model_pairs(["qwen3:8b"])
    with pytest.raises(ValueError, match="'a' is mapped twice"):
        parse_model_pairs(["a=b", "a=c"])


def test_a_model_swap_is_compared_and_says_with_what() -> None:
    """Issue 26: a baseline of model A and a run of model B compared nothing and passed."""
    before = entries(*(entry(f"q{i}", "gpt-4.1-mini", 1) for i in range(4)))
    now = entries(entry("q0", "qwen3:8b", 0), *(entry(f"q{i}", "qwen3:8b", 1) for i in (1, 2, 3)))

    found = diff("b.json", before, now, 0.0)

    assert found.regressions == ["q0 [qwen3:8b vs gpt-4.1-mini]: pass -> fail"]
    assert (found.compared, found.new, found.missing) == (4, [], [])
    assert found.pairs == ["qwen3:8b vs baseline gpt-4.1-mini: 4 questions compared, 1 regressions"]
    assert not found.passed


def test_a_gate_that_compares_nothing_fails_saying_how_to_pair() -> None:
    before = entries(*(entry(f"q{i}", "a", 1) for i in range(3)))
    now = entries(*(entry(f"q{i}", "b", 1) for i in range(3)))
    pairing = pair_models(["b", "c"], {"a"})  # two run models: no automatic pair

    found = diff("b.json", before, now, 0.0, pairing=pairing)

    assert not found.passed and found.regressions == []
    assert found.problem == (
        "nothing compared with b.json: 3 new, 3 missing, 0 not comparable; run models b, c vs "
        "baseline models a: pair them with --karenina-baseline-model NEW=OLD (e.g. b=a); or "
        "accept the new state with --karenina-baseline-update"
    )
    assert found.statements()[1].red


def test_a_run_mostly_new_or_missing_says_so_loudly() -> None:
    before = entries(*(entry(f"q{i}", "m", 1) for i in range(5)))
    now = entries(entry("q0", "m", 1), *(entry(f"n{i}", "m", 1) for i in range(3)))

    found = diff("b.json", before, now, 0.0)

    assert found.passed  # nothing regressed: a warning, not a failure
    assert found.warnings == [
        "3 new and 4 missing of 8 entries: most of this run was not compared with b.json"
    ]
    assert any(line.red and "WARNING" in line.text for line in found.statements())


# -- fingerprints ----------------------------------------------------------------------------


def test_a_changed_fingerprint_makes_an_entry_not_comparable() -> None:
    before = entries(entry("q1", "m", 1), entry("q2", "m", 1), entry("q3", "m", 1))
    now = entries(entry("q1", "m", 0, template="t2"), entry("q2", "m", 1, judge="j2", prompts="2"),
                  entry("q3", "m", 1))  # fmt: skip

    found = diff("b.json", before, now, 0.0)

    assert found.not_comparable == [
        "q1 [m]: template changed; pass -> fail", "q2 [m]: judge, prompts changed",
    ]  # fmt: skip
    assert (found.regressions, found.compared, found.passed) == ([], 1, True)


def test_entries_without_fingerprints_are_comparable_with_a_note() -> None:
    old = BaselineEntry("q1", "m", "pass", passed=1, items=1)
    found = diff("b.json", {old.key: old}, entries(entry("q1", "m", 0, template="x")), 0.0,
                 version=1)  # fmt: skip
    assert found.regressions == ["q1 [m]: pass -> fail"]
    assert found.notes == [
        "b.json is a version 1 baseline without fingerprints: every entry counts as comparable "
        "(--karenina-baseline-update records them)"
    ]


def test_a_version_1_file_is_still_read(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"format": "pytest-karenina-baseline", "version": 1, "entries": [
        {"question_id": "q1", "answering_model": "m", "verdict": "fail", "passed": 2,
         "items": 3, "score": None, "rubric": {}},
    ]}))  # fmt: skip
    found = read_baseline_file(path)
    assert found.version == 1
    assert found.entries[("q1", "m")].fingerprint is None
    assert found.entries[("q1", "m")].runs == (2, 3)  # the items stand for the replicates


def test_version_2_keeps_replicates_fingerprints_and_answers(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    kept = entries(entry("q1", "m", 4, 5, answers=("a1", "a2", "a3", "a4", "a5")))
    write_baseline(path, kept)
    document = json.loads(path.read_text())
    assert document["version"] == 2
    assert document["entries"][0]["fingerprint"] == PRINT
    assert read_baseline_file(path).entries == kept


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"replicates_passed": 6}, "entries[0] (q1): replicates_passed (6) is more than "
                                   "replicates (5)"),
        ({"fingerprint": {"question": "q"}}, "entries[0] (q1): field 'fingerprint.template' "
                                             "is missing"),
        ({"answers": [1]}, "entries[0] (q1): field 'answers[0]' must be a string, got 1"),
        ({"fingerprint": {**PRINT, "judge": 3}}, "field 'fingerprint.judge' must be a string"),
    ],
    ids=["passed above judged", "fingerprint part", "answer hash", "judge hash"],
)  # fmt: skip
def test_a_damaged_version_2_entry_is_refused(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    path = tmp_path / "b.json"
    write_baseline(path, entries(entry("q1", "m", 4, 5)))
    document = json.loads(path.read_text())
    document["entries"][0].update(change)
    path.write_text(json.dumps(document))
    with pytest.raises(BaselineError) as caught:
        read_baseline_file(path)
    assert message in str(caught.value)


# -- classes ---------------------------------------------------------------------------------


def test_replicates_tell_noise_from_regressions_with_holm() -> None:
    """Five replicates per question. q1: 5/5 -> 0/5 (p = 2/252 = 0.0079); q2: 5/5 -> 1/5
    (p = 10/210 = 0.048); q3: 5/5 -> 4/5 (one failure in ten: no table of these margins can
    be significant, so it takes no share of the correction); q4: 0/5 -> 4/5 (p = 0.048).
    Holm over the three testable questions: q1 0.0079 x 3 = 0.024 (a regression), q2 and q4
    0.048 x 2 = 0.095 (q2 significant only before the correction: a likely regression; q4
    better, but not after the correction: noise)."""
    before = entries(entry("q1", "m", 5, 5), entry("q2", "m", 5, 5), entry("q3", "m", 5, 5),
                     entry("q4", "m", 0, 5), entry("q5", "m", 5, 5))  # fmt: skip
    now = entries(entry("q1", "m", 0, 5), entry("q2", "m", 1, 5), entry("q3", "m", 4, 5),
                  entry("q4", "m", 4, 5), entry("q5", "m", 5, 5))  # fmt: skip

    changes = {c.label: c for c in classify(before, now, pair_models(["m"], {"m"}))}

    assert {label: c.kind for label, c in changes.items()} == {
        "q1 [m]": Kind.REGRESSION, "q2 [m]": Kind.LIKELY, "q3 [m]": Kind.NOISE,
        "q4 [m]": Kind.NOISE, "q5 [m]": Kind.UNCHANGED,
    }  # fmt: skip
    assert changes["q1 [m]"].p == pytest.approx(2 / 252)
    assert changes["q1 [m]"].adjusted == pytest.approx(3 * 2 / 252)
    assert changes["q2 [m]"].adjusted == pytest.approx(2 * 10 / 210)
    assert changes["q3 [m]"].adjusted is None
    assert changes["q1 [m]"].text() == "q1 [m]: 5/5 -> 0/5 passed (p=0.0079, Holm 0.024)"
    assert changes["q3 [m]"].text() == "q3 [m]: 5/5 -> 4/5 passed (p=1, never significant)"


def test_likely_regressions_fail_the_gate_only_when_asked() -> None:
    before = entries(entry("q1", "m", 5, 5), entry("q2", "m", 5, 5), entry("q3", "m", 0, 5))
    now = entries(entry("q1", "m", 1, 5), entry("q2", "m", 4, 5), entry("q3", "m", 4, 5))

    found = diff("b.json", before, now, 0.0)
    assert found.likely == ["q1 [m]: 5/5 -> 1/5 passed (p=0.048, Holm 0.095)"]
    assert found.regressions == [] and found.passed
    assert ("karenina.baseline_likely_regressions", "1") in found.suite_properties()
    assert ("karenina.baseline_likely_regression", found.likely[0]) in found.suite_properties()
    assert found.lines()[0].startswith(
        "karenina baseline b.json: 0 regressions, 1 likely regressions, 0 score drops, "
        "0 improvements, 2 noise, 0 new, 0 missing (3 compared): gate passed"
    )
    assert not diff("b.json", before, now, 0.0, fail_on="likely").passed


def test_without_replicates_a_flip_decides() -> None:
    before = entries(entry("q1", "m", 1), entry("q2", "m", 0))
    now = entries(entry("q1", "m", 0), entry("q2", "m", 1))
    found = diff("b.json", before, now, 0.0)
    assert (found.regressions, found.improvements) == (
        ["q1 [m]: pass -> fail"], ["q2 [m]: fail -> pass"],
    )  # fmt: skip


def test_verdict_changes_are_split_into_judge_side_and_answer_side() -> None:
    """The same answer judged anew is the judge's change; a new answer is the model's."""
    before = entries(entry("q1", "m", 1, answers=("A",)), entry("q2", "m", 1, answers=("B",)),
                     entry("q3", "m", 1, answers=("C",)), entry("q4", "m", 1))  # fmt: skip
    now = entries(
        entry("q1", "m", 0, answers=("A",)), entry("q2", "m", 0, answers=("B2",)),
        entry("q3", "m", 1, answers=("C",)), entry("q4", "m", 0, answers=("D",)),
    )  # fmt: skip

    found = diff("b.json", before, now, 0.0)

    assert found.regressions == [
        "q1 [m]: pass -> fail (judge-side)", "q2 [m]: pass -> fail (answer-side)",
        "q4 [m]: pass -> fail",  # the baseline has no answer hashes: no side
    ]  # fmt: skip
    assert found.describe_sides() == (
        "1 judge-side (same answer, new verdict), 1 answer-side (new answer)"
    )
    assert "  verdict changes: " + found.describe_sides() in found.lines()
    assert ("karenina.baseline_judge_side", "1") in found.suite_properties()


def test_a_not_comparable_entry_still_says_which_side_changed() -> None:
    """Re-judging recorded answers with a new judge: not comparable, and judge-side."""
    before = entries(entry("q1", "m", 1, answers=("A",)))
    now = entries(entry("q1", "m", 0, answers=("A",), judge="j2"))
    found = diff("b.json", before, now, 0.0)
    assert found.not_comparable == ["q1 [m]: judge changed; pass -> fail (judge-side)"]
    assert found.sides == {"judge-side": 1}


def test_classes_reach_the_details_the_reports_show() -> None:
    before = entries(entry("q1", "a", 5, 5), entry("q2", "a", 5, 5))
    now = entries(entry("q1", "b", 0, 5), entry("q2", "b", 5, 5, template="t2"))
    details = dict(diff("b.json", before, now, 0.0).details())
    assert details["Compared"] == [
        "b vs baseline a: 1 questions compared, 1 regressions, 1 not comparable"
    ]
    assert details["Regressions against b.json"] == [
        "q1 [b vs a]: 5/5 -> 0/5 passed (p=0.0079, Holm 0.0079)"
    ]
    assert details["Not comparable (measured differently: not counted)"] == [
        "q2 [b vs a]: template changed"
    ]


def test_the_worked_example_of_the_statistics_page() -> None:
    """docs/statistics.md, "Comparing a run with its baseline": forty questions, five moved."""
    moved = {"q07": (5, 0), "q12": (5, 1), "q19": (4, 5), "q23": (5, 3), "q27": (0, 4),
             "q31": (2, 5)}  # fmt: skip
    questions = [f"q{i:02}" for i in range(1, 41)]
    before = entries(*(entry(q, "m", moved.get(q, (5, 5))[0], 5) for q in questions))
    now = entries(*(entry(q, "m", moved.get(q, (5, 5))[1], 5) for q in questions))

    assert diff("baseline.json", before, now, 0.0).lines() == [
        "karenina baseline baseline.json: 1 regressions, 1 likely regressions, 0 score drops, "
        "0 improvements, 4 noise, 0 new, 0 missing (40 compared): gate FAILED",
        "  regression: q07 [m]: 5/5 -> 0/5 passed (p=0.0079, Holm 0.024)",
        "  likely regression: q12 [m]: 5/5 -> 1/5 passed (p=0.048, Holm 0.095)",
        "  noise: q19 [m]: 4/5 -> 5/5 passed (p=1, never significant)",
        "  noise: q23 [m]: 5/5 -> 3/5 passed (p=0.44, never significant)",
        "  noise: q27 [m]: 0/5 -> 4/5 passed (p=0.048, Holm 0.095)",
        "  noise: q31 [m]: 2/5 -> 5/5 passed (p=0.17, never significant)",
    ]
