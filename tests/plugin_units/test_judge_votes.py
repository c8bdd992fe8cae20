"""Judge replicates: the vote of one answer's judge replicates, which side of a flaky item
flipped, and the judge's agreement with itself."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_karenina.plugin.payload import ItemPayload
from pytest_karenina.plugin.report.judge_agreement import (
    JudgeAgreementTally,
    item_line,
    item_properties,
)
from pytest_karenina.plugin.verdict.judge_votes import (
    JudgeVote,
    agreement,
    judge_votes,
    judged_values,
    majority,
)
from pytest_karenina.plugin.verdict.outcome import Outcome, Verdict
from pytest_karenina.plugin.verdict.replicates import ReplicatePolicy, vote
from pytest_karenina.results.identity import ModelIdentity
from pytest_karenina.rubrics.gates import TraitCheck
from tests.plugin_units.units_helpers import fields_result

PASS, FAIL, ERROR = Outcome.PASS, Outcome.VERIFY_FAIL, Outcome.of_failure("timeout")
NONE, ABSTAINED = Outcome.NO_VERDICT, Outcome.ABSTAINED
EACH, MAJORITY = ReplicatePolicy.parse("each"), ReplicatePolicy.parse("majority")


def judged(
    symbol: str, outcome: Outcome, *, judge: int, replicate: int | None = None,
    parsing: str = "judge-model", checks: list[TraitCheck] | None = None,
) -> Verdict:  # fmt: skip
    """One judge replicate's verdict on an answer: what it parsed of ``symbol``."""
    result = fields_result(symbol).model_copy(deep=True)
    result.metadata.replicate = replicate
    result.metadata.parsing = ModelIdentity(interface="openai_endpoint", model_name=parsing)
    result.judge_replicate = judge
    return Verdict(result, checks or [], outcome)


def answer(*said: tuple[str, Outcome], replicate: int | None = None, **kw: Any) -> list[Verdict]:
    """The judge replicates of one answer, in order."""
    return [
        judged(symbol, outcome, judge=number, replicate=replicate, **kw)
        for number, (symbol, outcome) in enumerate(said, start=1)
    ]


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [((PASS, PASS, FAIL), PASS), ((PASS, FAIL), FAIL), ((FAIL, PASS, PASS, FAIL), FAIL),
     ((PASS, ERROR, PASS), ERROR), ((NONE, NONE), NONE), ((PASS, NONE, FAIL), FAIL),
     ((PASS, NONE, NONE), PASS), ((ABSTAINED, PASS, FAIL), ABSTAINED)],
)  # fmt: skip
def test_the_majority_of_the_judge_replicates(
    outcomes: tuple[Outcome, ...], expected: Outcome
) -> None:
    assert majority(outcomes) is expected


def test_a_judge_that_flips_on_one_answer_is_flaky_judge_side() -> None:
    found = vote(answer(("Au", PASS), ("Au", PASS), ("Ag", FAIL)), EACH, "policy")

    assert found.outcome is PASS
    assert found.flaky and found.judge_flaky and not found.answer_flaky
    assert found.flaky_text() == "judge 2/3"
    assert found.describe() == (
        "judge replicates: pass, pass, verify_fail (2/3 passed; majority: pass; flaky)"
    )
    assert found.side_lines() == ["judge-side: symbol parsed 'Au', 'Au', 'Ag' from one answer"]
    assert found.lines() == [found.describe(), *found.side_lines()]


def test_the_judge_majority_fails_an_item_and_a_tie_fails_it() -> None:
    assert vote(answer(("Ag", FAIL), ("Au", PASS), ("Ag", FAIL)), EACH, "policy").outcome is FAIL
    assert vote(answer(("Au", PASS), ("Ag", FAIL)), EACH, "policy").outcome is FAIL


def test_an_agreeing_judge_is_not_flaky_even_when_the_answer_fails() -> None:
    found = vote(answer(("Ag", FAIL), ("Ag", FAIL)), EACH, "policy")
    assert found.outcome is FAIL and not found.flaky
    assert found.flaky_text() is None and found.side_lines() == []


def test_a_flipped_verdict_no_field_explains_is_shown_by_its_outcomes() -> None:
    found = vote(answer(("Au", PASS), ("Au", ABSTAINED), ("Au", PASS)), EACH, "policy")
    assert found.side_lines() == ["judge-side: pass, abstained, pass from one answer"]


def test_flaky_counted_as_fail_takes_the_judges_failure() -> None:
    found = vote(answer(("Au", PASS), ("Au", ABSTAINED), ("Au", PASS)), EACH, "fail")
    assert found.outcome is ABSTAINED
    assert found.policy == "each, flaky counted as fail"


def test_answers_that_differ_are_flaky_answer_side_after_each_judge_voted() -> None:
    verdicts = [
        *answer(("Au", PASS), ("Au", PASS), replicate=1),
        *answer(("Ag", FAIL), ("Ag", FAIL), replicate=2),
        *answer(("Au", PASS), ("Cu", FAIL), ("Au", PASS), replicate=3),
    ]

    found = vote(verdicts, MAJORITY, "policy")

    assert found.outcomes == (PASS, FAIL, PASS) and found.outcome is PASS
    assert found.answer_flaky and found.judge_flaky
    assert found.flaky_text() == "2/3, judge 2/3"
    assert found.describe() == (
        "replicates: pass, verify_fail, pass (2/3 passed; majority: pass; flaky)"
    )
    assert found.side_lines() == [
        "answer-side: 2 of 3 answers say symbol 'Au', 1 says 'Ag'",
        "judge-side: symbol parsed 'Au', 'Cu', 'Au' from one answer (replicate 3)",
    ]
    assert found.lines()[1] == (
        "judge replicates (replicate 3): pass, verify_fail, pass (2/3 passed; majority: pass;"
        " flaky)"
    )


def test_without_judge_replicates_the_vote_is_the_replicate_policys() -> None:
    verdicts = [judged(symbol, outcome, judge=0, replicate=n) for n, (symbol, outcome) in
                enumerate([("Au", PASS), ("Ag", FAIL), ("Au", PASS)], start=1)]  # fmt: skip
    for verdict in verdicts:
        verdict.result.judge_replicate = None

    found = vote(verdicts, MAJORITY, "policy")

    assert found.judge_replicates == 1 and not found.judge_flaky
    assert found.flaky_text() == "2/3"
    assert found.side_lines() == ["answer-side: 2 of 3 answers say symbol 'Au', 1 says 'Ag'"]


def test_each_judge_model_votes_apart_and_the_worst_vote_decides_the_answer() -> None:
    verdicts = [
        *answer(("Au", PASS), ("Au", PASS), parsing="judge-a"),
        *answer(("Au", PASS), ("Ag", FAIL), ("Ag", FAIL), parsing="judge-b"),
    ]

    found = vote(verdicts, EACH, "policy")

    assert [(j.judge, j.outcome) for j in found.judges] == [("judge-a", PASS), ("judge-b", FAIL)]
    assert found.outcome is FAIL
    assert found.side_lines() == [
        "judge-side: symbol parsed 'Au', 'Ag', 'Ag' from one answer (judge judge-b)"
    ]


def test_the_values_a_judge_gave_are_its_fields_and_the_traits_it_graded() -> None:
    checks = [
        TraitCheck("Clarity", "llm score 1-5", 4, gated=False, passed=None),
        TraitCheck("Cites", "regex", True, gated=False, passed=None),
        TraitCheck("Safe", "llm boolean", None, gated=False, passed=None, error="no value"),
    ]
    values = judged_values(judged("Au", PASS, judge=1, checks=checks))
    assert values == {"symbol": "Au", "year": 1928, "rubric Clarity": 4}


def test_agreement_per_field_and_over_the_item() -> None:
    votes = judge_votes([
        *answer(("Au", PASS), ("Au", PASS), ("Ag", FAIL), replicate=1),
        *answer(("Au", PASS), ("Au", PASS), ("Au", PASS), replicate=2),
    ])  # fmt: skip

    found = agreement(votes)

    assert found.verdict == [1, 2]
    assert found.fields == {"symbol": [1, 2], "year": [2, 2]}
    assert found.disagreed() == ["verdict", "symbol"]
    assert found.share() == pytest.approx(4 / 6)
    assert item_properties(votes) == [
        ("karenina.judge_agreement", "0.6667"),
        ("karenina.judge_disagreed", "verdict,symbol"),
    ]
    assert item_line(votes) == (
        "3 judge replicates per answer; agreed on year; "
        "disagreed on verdict (pass, pass, verify_fail), symbol ('Au', 'Au', 'Ag')"
    )


def test_a_vote_travels_as_json() -> None:
    (found,) = judge_votes(answer(("Au", PASS), ("Ag", FAIL)))
    again = JudgeVote.from_json(found.to_json())
    assert again == JudgeVote(None, "judge-model", (PASS, FAIL), found.values)
    assert again.disagreed == ["symbol"]


def payload(question: str, *said: tuple[str, Outcome]) -> ItemPayload:
    (found,) = judge_votes(answer(*said))
    return ItemPayload(nodeid=question, category=PASS, question_id=question,
                       judges=[found.to_json()])  # fmt: skip


def test_the_run_tally_gives_self_agreement_per_field_and_the_questions() -> None:
    tally = JudgeAgreementTally()
    tally.add(payload("q1", ("Au", PASS), ("Ag", FAIL), ("Au", PASS)))
    tally.add(payload("q2", ("Au", PASS), ("Au", PASS), ("Au", PASS)))
    tally.add(ItemPayload(nodeid="q3", category=PASS, question_id="q3"))  # not judged twice

    assert tally.lines() == [
        "judge self-agreement (3 judge replicates per answer): verdict 50.0% (1/2 answers), "
        "symbol 50.0% (1/2 answers), year 100.0% (2/2 answers)",
        "judge disagreed with itself on 1 question: q1 (verdict, symbol)",
    ]
    assert tally.suite_properties() == [
        ("karenina.judge_agreement.verdict", "0.5000"),
        ("karenina.judge_agreement.symbol", "0.5000"),
        ("karenina.judge_agreement.year", "1.0000"),
    ]
    assert JudgeAgreementTally().lines() == []
