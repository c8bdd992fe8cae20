"""The HTML report's karenina cells (question, reason, expected and extracted value) and what
the page's script is handed (the items of the questions the models disagree on)."""

from __future__ import annotations

import html
import json
from typing import Any

from pytest_karenina.plugin.payload import ItemPayload, ResultSummary
from pytest_karenina.plugin.report.cells import (
    QUESTION_SHOWN,
    deciding_cell,
    item_reason,
    question_cell,
    reason_cell,
)
from pytest_karenina.plugin.report.comparison import comparison_html
from pytest_karenina.plugin.report.html_page import disagreeing_items, page_html, script_data
from pytest_karenina.plugin.verdict.outcome import Outcome
from pytest_karenina.rubrics.gates import TraitCheck

FIELDS = [
    {"field": "gene", "expected": "BCL2", "parsed": "bcl-2", "primitive": "ExactMatch",
     "passed": False, "differs": None},
    {"field": "count", "expected": 3, "parsed": 3, "primitive": None, "passed": True,
     "differs": None},
    {"field": "note", "expected": "<b>", "parsed": "x" * 60, "primitive": None, "passed": False,
     "differs": None},
]  # fmt: skip


def payload(*summaries: ResultSummary, **fields: Any) -> ItemPayload:
    fields.setdefault("category", summaries[0].category if summaries else Outcome.PASS)
    return ItemPayload(nodeid="b::q1[m]", summaries=list(summaries), **fields)


def test_the_question_is_short_with_the_whole_text_on_hover() -> None:
    short = payload(question="What is <BCL2>?")
    assert question_cell(short) == "What is &lt;BCL2&gt;?"
    text = "Name the gene.\n" + "It regulates apoptosis & more. " * 5
    cell = question_cell(payload(question=text))
    title, shown = cell.split('title="')[1].split('">')
    assert title.startswith("Name the gene.&#10;It regulates apoptosis &amp; more.")
    assert "\n" not in cell  # one line: pytest-html reads a sortable cell's HTML by line
    assert shown.startswith("Name the gene. It regulates") and shown.endswith("\u2026</span>")
    assert len(html.unescape(shown.removesuffix("</span>"))) == QUESTION_SHOWN
    assert question_cell(payload()) == ""


def test_the_reason_is_the_payloads_own_line() -> None:
    failed = ResultSummary(category=Outcome.VERIFY_FAIL, reason="gene: 'bcl-2' != 'BCL2'")
    assert item_reason(payload(failed), "2/3 replicates failed") == "2/3 replicates failed"
    assert item_reason(payload(failed), None) == "gene: 'bcl-2' != 'BCL2'"
    assert item_reason(payload(ResultSummary(category=Outcome.PASS)), None) is None
    assert reason_cell("a <b> & c") == "a &lt;b&gt; &amp; c"
    long = reason_cell("x" * 300)
    assert long.startswith(f'<span title="{"x" * 300}">') and "\u2026" in long
    assert reason_cell(None) == ""


def test_expected_and_got_of_the_first_failing_field() -> None:
    failed = ResultSummary(
        category=Outcome.VERIFY_FAIL, deciding_stage="VerifyTemplate", reason="r", fields=FIELDS
    )
    cell = deciding_cell(payload(failed))
    assert cell.startswith(
        '<span title="gene: expected &#x27;BCL2&#x27;, got &#x27;bcl-2&#x27;">gene: '
        '<span class="karenina-expected">&#x27;BCL2&#x27;</span> \u2192 '
        '<span class="karenina-got">&#x27;bcl-2&#x27;</span></span>'
    )
    assert cell.endswith('<span class="karenina-na">+1 more</span>')
    # The result that decided: the one whose category is the item's.
    passed = ResultSummary(category=Outcome.PASS, fields=FIELDS[1:2])
    assert deciding_cell(payload(passed, failed, category=Outcome.VERIFY_FAIL)) == cell
    assert deciding_cell(payload(passed)) == ""


def test_a_classic_template_shows_the_field_that_differs_and_a_rubric_its_trait() -> None:
    own = [{**FIELDS[1], "passed": None, "differs": False},
           {**FIELDS[0], "passed": None, "differs": True}]  # fmt: skip
    classic = ResultSummary(category=Outcome.VERIFY_FAIL, deciding_stage="VerifyTemplate",
                            reason="r", fields=own)  # fmt: skip
    assert "gene: " in deciding_cell(payload(classic))
    trait = TraitCheck(name="Clarity", kind="llm score 1-5", value=2, gated=True, passed=False,
                       bound=">= 4")  # fmt: skip
    rubric = ResultSummary(category=Outcome.RUBRIC_FAIL, deciding_stage="RubricEvaluation",
                           reason="r", rubric=[trait])  # fmt: skip
    assert deciding_cell(payload(rubric)) == (
        '<span title="Clarity: expected &gt;= 4, got 2">Clarity: '
        '<span class="karenina-expected">&gt;= 4</span> \u2192 '
        '<span class="karenina-got">2</span></span>'
    )


def test_no_field_when_another_stage_decided_or_nothing_was_judged() -> None:
    forced = ResultSummary(category=Outcome.ABSTAINED, deciding_stage="AbstentionCheck",
                           reason="abstained", fields=FIELDS)  # fmt: skip
    errored = ResultSummary(category=Outcome.PARSING_ERROR, reason="boom", fields=FIELDS)
    assert deciding_cell(payload(forced)) == ""
    assert deciding_cell(payload(errored)) == ""


def items(model: str, *outcomes: Outcome) -> list[ItemPayload]:
    return [
        ItemPayload(nodeid=f"b::q{i}[{model}]", category=o, question_id=f"q{i}",
                    answering_model=model)
        for i, o in enumerate(outcomes, start=1)
    ]  # fmt: skip


def test_the_script_learns_which_items_the_models_disagree_on() -> None:
    P, F = Outcome.PASS, Outcome.VERIFY_FAIL
    two = [*items("a", P, F, F), *items("b", P, P, F)]
    assert disagreeing_items(two, None) == ["b::q2[a]", "b::q2[b]"]
    assert disagreeing_items(items("a", P, F), None) is None  # one model: no such filter
    page = page_html(two, None)
    config = page.split('id="karenina-report-config">')[1].split("</script>")[0]
    assert json.loads(config) == {"version": 1, "disagree": ["b::q2[a]", "b::q2[b]"]}
    assert page.index('id="karenina-filters"') < page.index("<script>")
    assert "</script" not in script_data(["</script><b>"])
    assert json.loads(script_data(["</script>"])) == ["</script>"]


def test_the_verdict_matrix_is_folded() -> None:
    P, F = Outcome.PASS, Outcome.VERIFY_FAIL
    found = comparison_html([*items("a", P, F, P), *items("b", P, P, P)])
    assert '<details class="karenina-matrix"><summary>' in found
    assert "verdict matrix: 3 questions, the models disagree on 1</summary>" in found
    assert found.index('<ul class="karenina-pairs">') < found.index("<details")
    assert found.index("<summary>") < found.index('<table class="karenina-comparison">')
