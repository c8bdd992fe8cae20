"""The summary's charts from a run summary: which charts a run gets, their numbers, the bins
of rubric traits, and the cost per stage the summary folds from each item."""

from __future__ import annotations

import re

from pytest_karenina.plugin.payload import ItemPayload
from pytest_karenina.plugin.report.charts import category_fills, charts_html, trait_bins
from pytest_karenina.plugin.report.summary import RunSummary
from pytest_karenina.plugin.report.tallies import TraitStats
from pytest_karenina.plugin.verdict.outcome import Outcome


def item(
    question: str, model: str, category: Outcome = Outcome.PASS, **extra: object
) -> ItemPayload:
    return ItemPayload(
        nodeid=f"b.jsonld::{question}[{model}]", category=category, question_id=question,
        answering_model=model, **extra,  # type: ignore[arg-type]
    )  # fmt: skip


def keys(page: str) -> list[str]:
    return re.findall(r'aria-labelledby="([\w-]+)-title', page)


def test_a_run_without_items_draws_nothing() -> None:
    assert charts_html(RunSummary()) == ""


def test_one_model_gets_its_rate_and_outcomes_but_no_comparison() -> None:
    summary = RunSummary()
    summary.add(item("q1", "m"))
    summary.add(item("q2", "m", Outcome.VERIFY_FAIL))
    page = charts_html(summary)
    assert keys(page) == ["karenina-chart-pass-rate", "karenina-chart-outcomes"]
    assert "all models" not in page  # one model: its row is the run's
    assert "50.0% (1/2)" in page
    assert "<td>m</td><td>1</td><td>1</td>" in page  # the outcomes' table: pass, verify_fail


def test_two_models_scores_and_costs() -> None:
    summary = RunSummary()
    stages = {"answer_generation": 0.002, "parsing": 0.001}
    for question, score in (("q1", 1.0), ("q2", 0.45)):
        for model in ("a", "b"):
            category = Outcome.VERIFY_FAIL if (question, model) == ("q2", "b") else Outcome.PASS
            summary.add(item(question, model, category, score=score, cost=[0.002, 0.001],
                             stage_cost=stages))  # fmt: skip
    # the summary folds each item's stages and keeps none of them per item
    assert summary.cost.stages == {"answer_generation": 0.008, "parsing": 0.004}
    assert all(p.stage_cost is None for p in summary.payloads.values())
    page = charts_html(summary)
    assert keys(page) == [
        "karenina-chart-pass-rate", "karenina-chart-outcomes", "karenina-chart-comparison",
        "karenina-chart-scores", "karenina-chart-cost-model", "karenina-chart-cost-stage",
    ]  # fmt: skip
    assert "<td>0.4-0.5</td><td>2</td>" in page and "<td>0.9-1.0</td><td>2</td>" in page
    assert "<td>answer_generation</td><td>$0.0080</td><td>66.7%</td>" in page
    assert "<td>b</td><td>$0.0040</td><td>$0.0020</td><td>$0.0060</td>" in page
    # a passes q2 where b fails it: a's row, b's column counts 1
    assert "<tr><td>a</td><td>100%</td><td>1</td></tr>" in page


def test_trait_bins_follow_the_kind_of_trait() -> None:
    boolean = TraitStats("llm boolean", values=[1.0, 0.0, 1.0])
    assert trait_bins(boolean.kind, boolean) == (["false", "true"], [1, 2])
    score = TraitStats("llm score 1-5", values=[2.0, 2.0, 4.0])
    assert trait_bins(score.kind, score) == (["1", "2", "3", "4", "5"], [0, 2, 0, 1, 0])
    literal = TraitStats("llm literal")
    literal.labels.update(["formal", "formal", "casual"])
    assert trait_bins(literal.kind, literal) == (["formal", "casual"], [2, 1])
    spread = TraitStats("metric tp_only", values=[0.0, 0.05, 0.5, 1.0])
    labels, counts = trait_bins(spread.kind, spread)
    assert len(labels) == 10 and labels[0] == "0" and labels[5] == "0.5"
    assert counts[0] == 2 and counts[5] == 1 and counts[9] == 1 and sum(counts) == 4


def test_outcome_colours_pass_then_failures_then_errors() -> None:
    fills = category_fills(["error:timeout", "pass", "verify_fail", "error:parsing", "pass"])
    assert [name for name, _ in fills] == ["pass", "verify_fail", "error:parsing", "error:timeout"]
    assert len({fill for _, fill in fills}) == 4
