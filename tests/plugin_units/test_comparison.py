"""The paired comparison of answering models, from item payloads."""

from __future__ import annotations

import pytest

from pytest_karenina.plugin.payload import ItemPayload
from pytest_karenina.plugin.report.comparison import compare_models, comparison_html
from pytest_karenina.plugin.verdict.outcome import Outcome

P, F = Outcome.PASS, Outcome.VERIFY_FAIL


def items(model: str, *outcomes: Outcome) -> list[ItemPayload]:
    return [
        ItemPayload(nodeid=f"b::q{i}[{model}]", category=o, question_id=f"q{i}",
                    answering_model=model)
        for i, o in enumerate(outcomes, start=1)
    ]  # fmt: skip


def test_pairs_discordant_questions_and_mcnemar() -> None:
    found = compare_models([*items("a", P, P, P, P, F), *items("b", P, F, F, F, F)])
    assert found is not None and found.models == ["a", "b"]
    (pair,) = found.pairs
    assert (pair.first_rate, pair.second_rate) == (0.8, 0.2)
    assert (pair.only_first, pair.only_second) == (["q2", "q3", "q4"], [])
    assert pair.p_value == pytest.approx(0.25)  # 2 * (1/2)^3
    assert pair.describe() == (
        "a vs b: 80.0% vs 20.0% (+60.0 points); only a passes 3, only b passes 0; "
        "McNemar exact p=0.25"
    )
    assert found.disagreements == ["q2", "q3", "q4"]


def test_a_reference_model_lists_its_regressions_first() -> None:
    found = compare_models(
        [*items("new", P, F, P), *items("old", F, P, P), *items("other", F, P, F)], "old"
    )
    assert found is not None
    assert found.models == ["old", "new", "other"]
    assert [(p.first, p.second) for p in found.pairs] == [("old", "new"), ("old", "other")]
    assert found.regressions == ["q2", "q3"]
    assert found.disagreements == ["q2", "q3", "q1"]
    lines = found.lines()
    assert lines[0] == "models compared on 3 questions (paired by question):"
    assert "  regressions against old: q2, q3" in lines
    assert "  q2: old pass, new FAIL, other pass" in lines


def test_replicates_pass_a_question_only_together_and_one_model_is_no_comparison() -> None:
    replicated = [*items("a", P, P), *items("a", P, F), *items("b", P, P)]
    found = compare_models(replicated)
    assert found is not None and found.matrix["q2"] == {"a": False, "b": True}
    assert compare_models(items("a", P, F)) is None
    assert comparison_html(items("a", P)) == ""


def test_the_html_is_escaped() -> None:
    html = comparison_html([*items("<a>", P), *items("b", F)])
    assert "&lt;a&gt;" in html and "<a>" not in html
    assert '<table class="karenina-comparison">' in html


def test_models_without_a_common_question_are_not_compared() -> None:
    disjoint = [*items("a", P), ItemPayload(nodeid="b::x", category=P, question_id="x",
                                             answering_model="b")]  # fmt: skip
    assert compare_models(disjoint) is None
